#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A user who may not open the machine's TPM is told so, and why (issue 25, point 9): on Debian
/// `/dev/tpmrm0` is `root:tss 0660`, so a user outside `tss` gets the machine-id binding, and "no TPM
/// available here" was untrue. Each case runs the built vaultctl as uid 65534 in a mount namespace of its
/// own whose `/dev` is a tmpfs with the usual nodes bound in and a `tpmrm0` node made as the case needs
/// (none, or `root:tss 0660`); nothing on the host changes, and no real TPM is touched.
@Suite("TPM access for a normal user", .enabled(if: getuid() == 0 && access("/usr/bin/unshare", X_OK) == 0
                                                 && access("/usr/bin/setpriv", X_OK) == 0, "needs root, unshare and setpriv"),
       .tags(.needsRoot))
struct TPMAccessTests {
    /// Runs `commands` (shell words; `$V` is the built vaultctl) as uid 65534 with `/dev/tpmrm0` made by
    /// `node` (a shell command run in the new /dev, or nothing), its HOME a fresh folder of its own.
    func run(_ commands: String, node: String?) throws -> ProcessResult {
        let folder = try Fixtures.makeFolder("tpm-access")
        chmod(folder, 0o755)
        var parent = folder
        while parent != "/" && !parent.isEmpty {  // the user must reach its HOME
            parent = (parent as NSString).deletingLastPathComponent
            var st = stat()
            if stat(parent, &st) == 0 && st.st_mode & 0o001 == 0 { chmod(parent, mode_t(st.st_mode & 0o7777) | 0o111) }
        }
        // The user runs a copy in this folder: the build tree may be under a folder only root may enter
        // (a CI clone in a 0700 temporary folder).
        let binary = "\(folder)/vaultctl"
        let copy = ProcessRunner.run(Paths.tool("cp"), [Paths.vaultctl, binary], environment: Fixtures.baseEnvironment)
        try #require(copy.status == 0 && chmod(binary, 0o755) == 0, "\(copy)")
        let home = "\(folder)/home"
        mkdir(home, 0o700)
        chown(home, 65534, 65534)
        mkdir("\(folder)/olddev", 0o755)
        let script = """
            set -e
            mount --rbind /dev '\(folder)/olddev'
            mount -t tmpfs -o mode=755 none /dev
            for n in null zero urandom random; do touch /dev/$n; mount --bind '\(folder)/olddev'/$n /dev/$n; done
            \(node ?? ":")
            exec setpriv --reuid 65534 --regid 65534 --clear-groups env -i HOME='\(home)' PATH=/usr/bin:/bin \
              V='\(binary)' /bin/sh -c '\(commands)'
            """
        return ProcessRunner.run("/usr/bin/unshare", ["-m", "--propagation", "private", "/bin/sh", "-c", script],
                                 environment: Fixtures.baseEnvironment)
    }

    /// The group a Debian TPM node has (`tss` where tpm2-tss made it), else another that is not root's.
    static var group: String { getgrnam("tss") != nil ? "tss" : "users" }

    @Test func aTPMTheUserMayNotOpenIsNamedWithItsGroup() throws {
        let node = "mknod -m 660 /dev/tpmrm0 c 10 224 && chgrp \(Self.group) /dev/tpmrm0"
        let status = try run("$V device-key status", node: node)
        #expect(status.status == 0, "\(status)")
        #expect(status.stdoutText.contains("you may not open /dev/tpmrm0"), "\(status.stdoutText)")
        #expect(status.stdoutText.contains("a member of the group '\(Self.group)' may"), "\(status.stdoutText)")
        #expect(!status.stdoutText.contains("no TPM available"), "\(status.stdoutText)")
    }

    /// A node only root may open (the kernel's default, without a TPM group): no group is named, since
    /// joining one would not help.
    @Test func aTPMOnlyRootMayOpenNamesNoGroup() throws {
        let status = try run("$V device-key status", node: "mknod -m 600 /dev/tpmrm0 c 10 224")
        #expect(status.status == 0 && status.stdoutText.contains("you may not open /dev/tpmrm0"), "\(status)")
        #expect(status.stdoutText.contains("only root may") && !status.stdoutText.contains("usermod"), "\(status.stdoutText)")
    }

    @Test func noTPMIsSaidPlainlyAndSealIsNotOffered() throws {
        let status = try run("$V device-key status", node: nil)
        #expect(status.status == 0 && status.stdoutText.contains("this machine shows no TPM"), "\(status)")
        // A device slot's status does not send the person to `device-key seal` where there is no TPM.
        let slot = try run("printf v | $V store kept --mode device && $V status kept --verbose", node: nil)
        #expect(slot.status == 0 && slot.stdoutText.contains("machine's id") && !slot.stdoutText.contains("device-key seal"), "\(slot)")
    }
}
