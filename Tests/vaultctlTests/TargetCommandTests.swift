#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// `vaultctl target add|list|remove`: the receiver's own list of what `receive NAME` unlocks, and
/// `receive --print-authorized-key`.
@Suite("target add, list, remove", .tags(.needsServices))
struct TargetCommandTests {
    @Test func addListRemove() throws {
        let sb = try Sandbox()
        let add = sb.vaultctlWithoutPAM(["target", "add", "data-volume", "--if-locked", "test ! -e /dev/mapper/data", "--",
                                         "/bin/cat", "--key-file=-"])
        #expect(add.status == 0 && add.stderr.isEmpty, "\(add)")
        let bare = sb.vaultctlWithoutPAM(["target", "add", "backup", "--", "/bin/true"])
        #expect(bare.status == 0 && bare.stderr.contains("has no --if-locked check"), "a target without a check is said so: \(bare)")

        let list = sb.vaultctlWithoutPAM(["target", "list"])
        #expect(list.status == 0, "\(list)")
        #expect(list.stdoutText == """
            backup\tif-locked: -\tcommand: '/bin/true'
            data-volume\tif-locked: 'test ! -e /dev/mapper/data'\tcommand: '/bin/cat' '--key-file=-'

            """, "\(list.stdoutText)")
        var st = stat()
        let file = "\(sb.configFolder)/targets.json"
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)

        let again = sb.vaultctlWithoutPAM(["target", "add", "backup", "--", "/bin/false"])
        #expect(again.status == 65 && again.stderr.contains("exists already"), "\(again)")
        #expect(sb.vaultctlWithoutPAM(["target", "remove", "backup"]).status == 0)
        let gone = sb.vaultctlWithoutPAM(["target", "remove", "backup"])
        #expect(gone.status == 66 && gone.stderr.contains("No target 'backup'"), "\(gone)")
    }

    @Test func badInputIsRefusedAndChangesNothing() throws {
        let sb = try Sandbox()
        let cases: [([String], Int32, String)] = [
            (["target", "add", "-x", "--", "/bin/true"], 64, "Unknown option"),
            (["target", "add", "a b", "--", "/bin/true"], 64, "not a valid target name"),
            (["target", "add", "t", "/bin/true"], 64, "needs the name, then '--'"),
            (["target", "add", "t", "--", "no-such-program-xyz"], 64, "is not a program"),
        ]
        for (args, code, words) in cases {
            let r = sb.vaultctlWithoutPAM(args)
            #expect(r.status == code && r.stderr.contains(words), "\(args): \(r)")
        }
        #expect(sb.wroteNothing)
    }

    @Test func aDocumentWithAnUnknownKeyIsRejectedNamingIt() throws {
        let sb = try Sandbox()
        mkdir(sb.configFolder, 0o700)
        #expect(FileText.write("\(sb.configFolder)/targets.json",
                               #"{"version": 1, "targets": {"t": {"comand": ["/bin/true"]}}}"#, mode: 0o600))
        let r = sb.vaultctlWithoutPAM(["target", "list"])
        #expect(r.status == 78 && r.stderr.contains("unknown key \"targets.t.comand\""), "\(r)")
    }

    @Test func printAuthorizedKeyGivesTheRestrictedLine() throws {
        let sb = try Sandbox()
        let pub = "\(sb.root)/laptop.pub"
        let key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILb8wWuYTs8eVxjVNr+alLJmbzO9ZVU7qbijtZgjn/Pq me@laptop"
        #expect(FileText.write(pub, key + "\n"))
        let r = sb.vaultctlWithoutPAM(["receive", "--print-authorized-key", pub, "data-volume"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutText == "command=\"\(Paths.vaultctl) receive data-volume\",restrict \(key)\n", "\(r.stdoutText)")
        #expect(FileText.write(pub, "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n"))
        let bad = sb.vaultctlWithoutPAM(["receive", "--print-authorized-key", pub, "data-volume"])
        #expect(bad.status == 65 && bad.stdout.isEmpty, "\(bad)")
    }

    @Test func receiveRunByHandIsRefusedAndSaysSoOnItsChannel() throws {
        let sb = try Sandbox()
        let r = sb.vaultctlWithoutPAM(["receive", "data-volume"])
        #expect(r.status == 77, "\(r)")
        #expect(r.stdoutText.hasPrefix("vaultctl-receive 1 refused vaultctl receive runs only as the forced command"), "\(r.stdoutText)")
        #expect(r.stderr.isEmpty, "nothing on stderr: it would reach the sender twice")
    }
}
