#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// The device key sealed by a real software TPM (swtpm on private sockets): store and read, what status
/// says, the blobs as tpm2-tools see them, and every bad condition (another TPM, no TPM, a hung TPM,
/// damaged blobs, lockout) refused with its exit code and nothing changed.
///
/// Only software TPMs are tested: no test here (or anywhere) runs against a real `/dev/tpmrm0`, which this
/// machine and CI do not have; `withoutAKernelTPMTheDefaultIsTheMachineID` checks the default's fallback.
@Suite("device key sealed by the TPM", .serialized, .tags(.needsRoot, .needsServices))
struct TPMDeviceKeyTests {
    /// `VAULTCTL_TPM2_TCTI` for a TPM.
    static func using(_ tpm: SoftwareTPM) -> [String: String] { ["VAULTCTL_TPM2_TCTI": tpm.tcti] }

    /// `vaultctl store NAME [--mode MODE]` in `sb` with `tpm` as the machine's TPM; expects success.
    static func store(_ sb: Sandbox, _ name: String, _ secret: [UInt8], mode: String? = nil, with tpm: SoftwareTPM,
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        let s = try sb.vaultctl(["store", name] + (mode.map { ["--mode", $0] } ?? []), stdin: .bytes(secret),
                                overriding: using(tpm), sourceLocation: sourceLocation)
        try #require(s.status == 0, "\(s)", sourceLocation: sourceLocation)
    }

    var tpmKeyPath: (Sandbox) -> String { { "\($0.stateFolder)/device.tpm2" } }

    /// The state folder's files and their bytes (to prove a refusal changed nothing).
    static func snapshot(_ sb: Sandbox) -> [String: [UInt8]] {
        var out: [String: [UInt8]] = [:]
        for path in ["device.tpm2", "device.key"] {
            if let b = FileBytes.read("\(sb.stateFolder)/\(path)") { out[path] = b }
        }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "\(sb.stateFolder)/slots")) ?? [] {
            out["slots/\(name)"] = FileBytes.read("\(sb.stateFolder)/slots/\(name)")
        }
        return out
    }

    /// The three TPM2B parts after the file's fixed header (magic 8, machine tag 16, public key 32).
    static func tpmParts(_ file: [UInt8]) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        var at = 8 + 16 + 32
        while at + 2 <= file.count, parts.count < 3 {
            let n = Int(file[at]) << 8 | Int(file[at + 1])
            guard at + 2 + n <= file.count else { break }
            parts.append(Array(file[at..<(at + 2 + n)]))
            at += 2 + n
        }
        return parts
    }

    @Test func storeAndReadSealedByTheTPM() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("tpm")
        let secret = TestData.binarySecret(name)
        try Self.store(sb, name, secret, mode: "device", with: tpm)
        #expect(Paths.exists("\(sb.stateFolder)/device.tpm2"))
        #expect(!Paths.exists("\(sb.stateFolder)/device.key"), "a new vault with a TPM gets no machine-id key")
        let file = try #require(FileBytes.read(sb.slotFile(name)))
        #expect(file.count > 8 && file[8] == 2, "the slot file names the TPM-sealed key (format version 2)")
        #expect(!file.contains(subsequence: secret))
        var st = stat()
        #expect(stat("\(sb.stateFolder)/device.tpm2", &st) == 0 && st.st_mode & 0o777 == 0o600)

        let r = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
        #expect(r.status == 0 && r.stdout == secret, "\(r)")

        let doc = try sb.status(name, overriding: Self.using(tpm))
        #expect(doc.state == "cannot-leave-device" && doc.mode == "device", "\(doc)")
        #expect(doc.binding == "tpm2", "\(doc)")
        #expect(doc.message.contains("sealed by this machine's TPM") && doc.message.contains("cannot be unsealed on any other machine"), "\(doc)")
        // The state and its sentence first; what seals the key with --verbose.
        let text = sb.vaultctlWithoutPAM(["status", name], overriding: Self.using(tpm))
        #expect(text.status == 0 && text.stdoutText.hasPrefix("cannot-leave-device: Slot '\(name)' is sealed to this machine and cannot leave this device.\n"), "\(text)")
        #expect(!text.stdoutText.contains("sealed by this machine's TPM"), "\(text)")
        let verbose = sb.vaultctlWithoutPAM(["status", name, "--verbose"], overriding: Self.using(tpm))
        #expect(verbose.status == 0 && verbose.stdoutText.contains("\n  Its key is sealed by this machine's TPM"), "\(verbose)")

        let ks = sb.vaultctlWithoutPAM(["device-key", "status", "--json"], overriding: Self.using(tpm))
        #expect(ks.status == 0 && ks.stdoutText.contains(#""binding":"tpm2""#), "\(ks)")
        // It names the TPM it would reach, and does not claim that it answers (issue 25, point 17): it asked
        // nothing of it.
        let words = sb.vaultctlWithoutPAM(["device-key", "status"], overriding: Self.using(tpm))
        #expect(words.stdoutText.contains("reaches the TPM through 'swtpm:") && words.stdoutText.contains("whether it answers is not checked here"), "\(words)")
    }

    @Test func withoutATPMStatusSaysMachineIDAndNeverClaimsTheTPM() throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot("mid")
        try sb.store(name, TestData.textSecret(name), mode: "device")  // VAULTCTL_TPM2_TCTI=none
        #expect(Paths.exists("\(sb.stateFolder)/device.key"))
        #expect(!Paths.exists("\(sb.stateFolder)/device.tpm2"))
        let doc = try sb.status(name)
        #expect(doc.state == "on-this-device" && doc.binding == "machine-id", "\(doc)")
        #expect(doc.message.contains("bound to this machine's id") && doc.message.contains("a deliberate copy"), "\(doc)")
        #expect(!doc.message.contains("sealed by this machine's TPM"), "\(doc)")
        // A TPM being there now does not make an old machine-id key "sealed by the TPM".
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let again = try sb.status(name, overriding: Self.using(tpm))
        #expect(again.binding == "machine-id", "\(again)")
        let ks = sb.vaultctlWithoutPAM(["device-key", "status"], overriding: Self.using(tpm))
        #expect(ks.status == 0 && ks.stdoutText.hasPrefix("machine-id:") && ks.stdoutText.contains("device-key seal"), "\(ks)")
        // A value only in the Secret Service has no device binding.
        let synced = sb.uniqueSlot("sync")
        try sb.store(synced, TestData.textSecret(synced), mode: "sync")
        let s = try sb.status(synced)
        #expect(s.binding == nil && s.keys.contains("binding"), "\(s)")
    }

    @Test func tpm2ToolsSeeASealedObjectUnderTheStoragePrimary() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("tools")
        try Self.store(sb, name, TestData.textSecret(name), with: tpm)
        let file = try #require(FileBytes.read("\(sb.stateFolder)/device.tpm2"))
        let parts = Self.tpmParts(file)
        try #require(parts.count == 3, "device.tpm2 holds a name, a public and a private area")
        let work = try Fixtures.makeFolder("tools")
        #expect(FileBytes.write("\(work)/pub", parts[1]) && FileBytes.write("\(work)/priv", parts[2]))

        let printed = tpm.tool("tpm2_print", ["-t", "TPM2B_PUBLIC", "\(work)/pub"])
        #expect(printed.status == 0, "\(printed)")
        #expect(printed.stdoutText.contains("keyedhash"), "a sealed data object: \(printed.stdoutText)")
        #expect(printed.stdoutText.contains("fixedtpm|fixedparent|userwithauth|noda"), "exempt from dictionary-attack protection: \(printed.stdoutText)")

        // The same fixed template gives the primary whose name the file recorded, and the object loads
        // under it and unseals 32 bytes (the seed; not printed).
        let primary = tpm.tool("tpm2_createprimary", ["-C", "o", "-g", "sha256", "-G", "ecc256:aes128cfb",
                                                      "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt",
                                                      "-c", "\(work)/primary.ctx"])
        #expect(primary.status == 0, "\(primary)")
        let recordedName = parts[0].dropFirst(2).map { String(format: "%02x", $0) }.joined()
        _ = tpm.tool("tpm2_flushcontext", ["-t"])  // swtpm has no resource manager: free its three object slots
        let primaryName = tpm.tool("tpm2_readpublic", ["-c", "\(work)/primary.ctx"])
        #expect(primaryName.stdoutText.contains("name: \(recordedName)"), "recorded \(recordedName), tool: \(primaryName)")
        _ = tpm.tool("tpm2_flushcontext", ["-t"])
        let loaded = tpm.tool("tpm2_load", ["-C", "\(work)/primary.ctx", "-u", "\(work)/pub", "-r", "\(work)/priv",
                                            "-c", "\(work)/object.ctx"])
        #expect(loaded.status == 0, "\(loaded)")
        _ = tpm.tool("tpm2_flushcontext", ["-t"])
        let unsealed = tpm.tool("tpm2_unseal", ["-c", "\(work)/object.ctx"])
        #expect(unsealed.status == 0 && unsealed.stdout.count == 32, "\(unsealed)")
        _ = tpm.tool("tpm2_flushcontext", ["-t"])

        // Another TPM's primary is another key: the private blob does not load under it.
        let other = try SoftwareTPM.start()
        defer { other.stop() }
        let otherPrimary = other.tool("tpm2_createprimary", ["-C", "o", "-g", "sha256", "-G", "ecc256:aes128cfb",
                                                             "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt",
                                                             "-c", "\(work)/other.ctx"])
        #expect(otherPrimary.status == 0, "\(otherPrimary)")
        _ = other.tool("tpm2_flushcontext", ["-t"])
        let otherName = other.tool("tpm2_readpublic", ["-c", "\(work)/other.ctx"])
        #expect(otherName.status == 0 && !otherName.stdoutText.contains(recordedName), "\(otherName)")
        _ = other.tool("tpm2_flushcontext", ["-t"])
        let refused = other.tool("tpm2_load", ["-C", "\(work)/other.ctx", "-u", "\(work)/pub", "-r", "\(work)/priv",
                                               "-c", "\(work)/other-object.ctx"])
        #expect(refused.status != 0, "\(refused)")
    }

    @Test func aStateFolderCopiedToAnotherTPMIs65AndChangesNothing() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let other = try SoftwareTPM.start()
        defer { other.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("copied")
        let secret = TestData.binarySecret(name)
        try Self.store(sb, name, secret, mode: "device", with: tpm)

        // The copy: the same files, the same machine-id (this machine), another TPM.
        let copy = try Sandbox()
        let cp = ProcessRunner.run(Paths.tool("cp"), ["-a", sb.stateFolder, copy.stateHome], environment: Fixtures.baseEnvironment)
        try #require(cp.status == 0, "\(cp)")
        let before = Self.snapshot(copy)
        let r = try copy.vaultctl(["read", name], overriding: Self.using(other))
        r.expectFailure(65, saying: "sealed to another TPM")
        #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
        #expect(Self.snapshot(copy) == before, "nothing was deleted or rewritten")
        // A store into the copy does not re-key it either: the other TPM still cannot open the old value.
        let again = try copy.vaultctl(["read", name], overriding: Self.using(other))
        #expect(again.status == 65, "\(again)")
        // The original TPM still opens the copy: the binding is to the TPM, not to the folder.
        let home = try copy.vaultctl(["read", name], overriding: Self.using(tpm))
        #expect(home.status == 0 && home.stdout == secret, "\(home)")
    }

    @Test func aStoppedTPMIs69WithinSecondsAndChangesNothing() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("stopped")
        let secret = TestData.binarySecret(name)
        try Self.store(sb, name, secret, with: tpm)
        tpm.stop()
        let before = Self.snapshot(sb)
        let r = try sb.vaultctl(["read", name], overriding: Self.using(tpm), timeout: .seconds(20))
        #expect(r.status == 69, "\(r)")
        #expect(r.stderr.contains("the TPM that sealed this key is not available") || r.stderr.contains("The TPM that sealed this key is not available"), "\(r.stderr)")
        #expect(r.elapsed < .seconds(5), "\(r.elapsed)")
        #expect(r.stderr.split(separator: "\n").count == 1 && !r.stderr.contains("ERROR:") && !r.stderr.contains("WARNING:"),
                "vaultctl's one line, and no tpm2-tss log lines on the terminal: \(r.stderr)")
        #expect(Self.snapshot(sb) == before)
        // A TSS2_LOG the user set (to debug) is kept: then tpm2-tss says what it saw.
        let logged = try sb.vaultctl(["read", name], overriding: Self.using(tpm).merging(["TSS2_LOG": "all+ERROR"]) { $1 })
        #expect(logged.status == 69 && logged.stderr.contains("ERROR:tcti:"), "\(logged)")
        // No TPM configured at all (the variable unset, no /dev/tpmrm0 here): the same answer.
        let none = try sb.vaultctl(["read", name], overriding: ["VAULTCTL_TPM2_TCTI": "none"])
        #expect(none.status == 69 && none.stderr.contains("not available"), "\(none)")
        // Status still answers, without the TPM.
        let doc = try sb.status(name, overriding: Self.using(tpm))
        #expect(doc.binding == "tpm2", "\(doc)")
        // A store needs no TPM: it seals to the key's public half.
        let later = sb.uniqueSlot("later")
        let stored = try sb.vaultctl(["store", later], stdin: .bytes(secret), overriding: Self.using(tpm))
        #expect(stored.status == 0, "\(stored)")
        // The same TPM back: both values open.
        try tpm.restart()
        let back = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
        #expect(back.status == 0 && back.stdout == secret, "\(back)")
        let backLater = try sb.vaultctl(["read", later], overriding: Self.using(tpm))
        #expect(backLater.status == 0 && backLater.stdout == secret, "\(backLater)")
    }

    @Test func aTPMThatStopsAnsweringIs69WithinSecondsNeverAHang() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("hung")
        try Self.store(sb, name, TestData.textSecret(name), with: tpm)
        let pid = try #require(tpm.pid)
        kill(pid, SIGSTOP)
        let r = try sb.vaultctl(["read", name], overriding: Self.using(tpm), timeout: .seconds(30))
        kill(pid, SIGCONT)
        #expect(r.status == 69 && !r.timedOut, "\(r)")
        #expect(r.stderr.contains("did not answer"), "\(r.stderr)")
        #expect(r.elapsed < .seconds(12), "bounded by the TPM command timeout: \(r.elapsed)")
    }

    @Test func damagedBlobsAre65AndAreNotRewritten() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("damaged")
        try Self.store(sb, name, TestData.textSecret(name), with: tpm)
        let path = "\(sb.stateFolder)/device.tpm2"
        let good = try #require(FileBytes.read(path))
        // A changed byte inside the private area (the TPM's own integrity check refuses it), and one in a
        // size field (libtss2-mu refuses to parse it).
        for (what, at) in [("private area", good.count - 5), ("size field", 8 + 16 + 32)] {
            var bad = good
            bad[at] ^= 0x5a
            #expect(FileBytes.write(path, bad))
            let before = Self.snapshot(sb)
            let r = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
            #expect(r.status == 65, "\(what): \(r)")
            #expect(r.stderr.contains("device.tpm2") && r.stdout.isEmpty, "\(what): \(r.stderr)")
            #expect(Self.snapshot(sb) == before, "\(what): nothing rewritten")
        }
        #expect(FileBytes.write(path, good))
        let r = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
        #expect(r.status == 0, "\(r)")
    }

    @Test func aLooseTPMKeyFileIsRefused() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("loose")
        try Self.store(sb, name, TestData.textSecret(name), with: tpm)
        let path = "\(sb.stateFolder)/device.tpm2"
        #expect(chmod(path, 0o644) == 0)
        let r = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
        #expect(r.status == 78 && r.stderr.contains("device.tpm2"), "\(r)")
        let store = try sb.vaultctl(["store", sb.uniqueSlot("other")], stdin: .bytes([1]), overriding: Self.using(tpm))
        #expect(store.status == 78, "nothing is sealed to a key file others could have replaced: \(store)")
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o644, "left as it was")
    }

    @Test func withoutItsHelperATPMSealedReadIs69AndChangesNothing() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("helper")
        try Self.store(sb, name, TestData.textSecret(name), with: tpm)
        // vaultctl alone in a folder: no vaultctl-tpm beside it.
        let lonely = try Fixtures.makeFolder("lonely")
        let cp = ProcessRunner.run(Paths.tool("cp"), [Paths.vaultctl, "\(lonely)/vaultctl"], environment: Fixtures.baseEnvironment)
        try #require(cp.status == 0, "\(cp)")
        let before = Self.snapshot(sb)
        let env = try sb.environment(askpass: .correct).merging(Self.using(tpm)) { $1 }
        let r = ProcessRunner.run("\(lonely)/vaultctl", ["read", name], environment: env).droppingPAMWrapperNoise()
        #expect(r.status == 69, "\(r)")
        #expect(r.stderr.contains("The TPM helper vaultctl-tpm is missing: it was looked for at \(lonely)/vaultctl-tpm"), "\(r.stderr)")
        #expect(!r.stderr.contains("Start or attach"), "the TPM is fine; the helper is what is missing: \(r.stderr)")
        #expect(Self.snapshot(sb) == before)
        // A new vault cannot seal a key without it either: the same words, 69.
        let fresh = try Sandbox()
        let freshEnv = try fresh.environment(askpass: .correct).merging(Self.using(tpm)) { $1 }
        let s2 = ProcessRunner.run("\(lonely)/vaultctl", ["store", name], environment: freshEnv, stdin: .bytes([1]))
        #expect(s2.status == 69 && s2.stderr.contains("looked for at \(lonely)/vaultctl-tpm"), "\(s2)")
    }

    /// Debian's `staff` group (gid 50), or `users` where there is none: a group-writable folder is refused
    /// whatever its group.
    static var staffGroup: gid_t { getgrnam("staff")?.pointee.gr_gid ?? getgrnam("users")?.pointee.gr_gid ?? 100 }

    /// A helper that others could replace is never run (it would be handed the seed): 78, with what is wrong.
    @Test func aHelperOthersCouldReplaceIsRefusedWith78() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("trust")
        let secret = TestData.textSecret(name)
        try Self.store(sb, name, secret, with: tpm)
        // vaultctl with a helper that notes each run, then runs the real one.
        let folder = try Fixtures.makeFolder("trust")
        let ran = "\(folder)-ran"
        let cp = ProcessRunner.run(Paths.tool("cp"), [Paths.vaultctl, "\(folder)/vaultctl"], environment: Fixtures.baseEnvironment)
        try #require(cp.status == 0, "\(cp)")
        let helper = "\(folder)/vaultctl-tpm"
        let script = "#!/bin/sh\necho ran >> '\(ran)'\nexec '\(Paths.folder(of: Paths.vaultctl))/vaultctl-tpm' \"$@\"\n"
        try #require(FileText.write(helper, script, mode: 0o755) && chmod(helper, 0o755) == 0 && chmod(folder, 0o755) == 0)
        let env = try sb.environment(askpass: .correct).merging(Self.using(tpm)) { $1 }
        func read() -> ProcessResult {
            ProcessRunner.run("\(folder)/vaultctl", ["read", name], environment: env).droppingPAMWrapperNoise()
        }
        let before = Self.snapshot(sb)
        let cases: [(String, () -> Void, () -> Void, String)] = [
            ("group-writable helper", { chmod(helper, 0o775) }, { chmod(helper, 0o755) }, "writable by its group or others (mode 775)"),
            ("world-writable helper", { chmod(helper, 0o757) }, { chmod(helper, 0o755) }, "writable by its group or others (mode 757)"),
            ("world-writable folder", { chmod(folder, 0o777) }, { chmod(folder, 0o755) }, "its folder \(folder) is writable by its group or others"),
            // Group-writable, whatever the group (Debian's staff included: /usr/local/bin is root:staff 2775).
            ("group-writable folder", { chown(folder, 0, Self.staffGroup); chmod(folder, 0o2775) },
             { chown(folder, getuid(), getgid()); chmod(folder, 0o755) }, "its folder \(folder) is writable by its group or others"),
            ("helper owned by another user", { chown(helper, 65534, 65534) }, { chown(helper, getuid(), getgid()) }, "is owned by uid 65534"),
        ]
        for (what, spoil, mend, words) in cases {
            spoil()
            let r = read()
            #expect(r.status == 78, "\(what): \(r)")
            #expect(r.stderr.contains("Refusing \(helper)") && r.stderr.contains(words), "\(what): \(r.stderr)")
            #expect(r.stdout.isEmpty && !Paths.exists(ran), "\(what): the helper never ran")
            #expect(Self.snapshot(sb) == before, "\(what)")
            mend()
        }
        // Debian's /usr/local layout (issue 26, point 3): bin/ is root:staff 2775, so a helper there is refused;
        // the installed one in PREFIX/libexec/vaultctl/ (made by install -d: 2755, not group-writable) is used.
        let prefix = try Fixtures.makeFolder("staff-prefix")
        let bin = "\(prefix)/bin", libexec = "\(prefix)/libexec/vaultctl"
        try #require(mkdir(bin, 0o755) == 0 && mkdir("\(prefix)/libexec", 0o755) == 0 && mkdir(libexec, 0o755) == 0)
        let staffCopy = ProcessRunner.run(Paths.tool("cp"), [Paths.vaultctl, "\(bin)/vaultctl"], environment: Fixtures.baseEnvironment)
        try #require(staffCopy.status == 0, "\(staffCopy)")
        try #require(FileText.write("\(bin)/vaultctl-tpm", "#!/bin/sh\necho bin >> '\(ran)'\nexit 1\n", mode: 0o755))
        try #require(FileText.write("\(libexec)/vaultctl-tpm", script, mode: 0o755))
        try #require(chmod("\(bin)/vaultctl-tpm", 0o755) == 0 && chmod("\(libexec)/vaultctl-tpm", 0o755) == 0)
        try #require(chown(bin, 0, Self.staffGroup) == 0 && chmod(bin, 0o2775) == 0 && chmod(libexec, 0o2755) == 0)
        let onStaff = ProcessRunner.run("\(bin)/vaultctl", ["read", name], environment: env).droppingPAMWrapperNoise()
        #expect(onStaff.status == 0 && onStaff.stdout == secret, "a root:staff 2775 bin/: \(onStaff)")
        #expect(FileText.read(ran) == "ran\n", "the libexec helper ran, never the one in bin/: \(FileText.read(ran) ?? "")")
        unlink(ran)
        // A link to a helper in a folder others can write is judged by where it leads.
        let shared = try Fixtures.makeFolder("shared")
        try #require(chmod(shared, 0o777) == 0 && rename(helper, "\(shared)/vaultctl-tpm") == 0)
        try #require(symlink("\(shared)/vaultctl-tpm", helper) == 0)
        let linked = read()
        #expect(linked.status == 78 && linked.stderr.contains("its folder \(shared) is writable"), "\(linked)")
        #expect(!Paths.exists(ran))
        // Made safe again, the same helper runs and the value reads.
        unlink(helper)
        try #require(rename("\(shared)/vaultctl-tpm", helper) == 0)
        let ok = read()
        #expect(ok.status == 0 && ok.stdout == secret, "\(ok)")
        #expect(Paths.exists(ran))
    }

    /// `VAULTCTL_TPM2_TCTI` unset: the default is the kernel's `/dev/tpmrm0`; where there is none (as on
    /// this machine and CI), the device key is bound to the machine id and every status says so.
    @Test(.enabled(if: access(TPMChoiceDefaults.kernelDevice, F_OK) != 0, "this machine has a kernel TPM"))
    func withoutAKernelTPMTheDefaultIsTheMachineID() throws {
        let sb = try Sandbox()
        var env = try sb.environment(askpass: .correct)
        env.removeValue(forKey: "VAULTCTL_TPM2_TCTI")
        func run(_ args: [String], stdin: Stdin = .null) -> ProcessResult {
            ProcessRunner.run(Paths.vaultctl, args, environment: env, stdin: stdin).droppingPAMWrapperNoise()
        }
        let name = sb.uniqueSlot("default")
        let secret = TestData.textSecret(name)
        let s = run(["store", name, "--mode", "device"], stdin: .bytes(secret))
        try #require(s.status == 0, "\(s)")
        #expect(Paths.exists("\(sb.stateFolder)/device.key") && !Paths.exists("\(sb.stateFolder)/device.tpm2"))
        let st = run(["status", name, "--json"])
        #expect(st.status == 0 && st.stdoutText.contains(#""binding":"machine-id""#), "\(st)")
        #expect(st.stdoutText.contains("bound to this machine's id"), "\(st)")
        let ks = run(["device-key", "status"])
        #expect(ks.status == 0 && ks.stdoutText.hasPrefix("machine-id:"), "\(ks)")
        #expect(ks.stdoutText.contains("It cannot be moved under a TPM here") && ks.stdoutText.contains("this machine shows no TPM (/dev/tpmrm0 is not there"), "\(ks)")
        #expect(!st.stdoutText.contains("device-key seal"), "no TPM, so seal is not offered: \(st)")
        let seal = run(["device-key", "seal"])
        #expect(seal.status == 69 && seal.stderr.contains("this machine shows no TPM"), "\(seal)")
        let r = run(["read", name])
        #expect(r.status == 0 && r.stdout == secret, "\(r)")
    }

    /// The sealed object (and its storage primary) are exempt from dictionary-attack protection: their
    /// auth value is empty, so there is nothing to guess. A TPM that other programs' failures put in
    /// lockout still unseals the device key.
    @Test func aTPMInDictionaryAttackLockoutStillUnsealsTheKey() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("lockout")
        try Self.store(sb, name, TestData.textSecret(name), with: tpm)
        // One failure locks the TPM out, for 120 s per failure.
        let setup = tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "1", "-t", "120", "-l", "120"])
        try #require(setup.status == 0, "\(setup)")
        let work = try Fixtures.makeFolder("da")
        // A DA-protected object with a password, then a wrong password for it.
        var steps: [ProcessResult] = []
        steps.append(tpm.tool("tpm2_createprimary", ["-C", "o", "-c", "\(work)/p.ctx"]))
        _ = tpm.tool("tpm2_flushcontext", ["-t"])
        steps.append(ProcessRunner.run(Paths.tool("sh"), ["-c", "printf x | TPM2TOOLS_TCTI='\(tpm.tcti)' tpm2_create -C \(work)/p.ctx -p right -i- -u \(work)/o.pub -r \(work)/o.priv"],
                                       environment: Fixtures.baseEnvironment))
        _ = tpm.tool("tpm2_flushcontext", ["-t"])
        steps.append(tpm.tool("tpm2_load", ["-C", "\(work)/p.ctx", "-u", "\(work)/o.pub", "-r", "\(work)/o.priv", "-c", "\(work)/o.ctx"]))
        _ = tpm.tool("tpm2_flushcontext", ["-t"])
        for step in steps { try #require(step.status == 0, "\(step)") }
        let wrong = tpm.tool("tpm2_unseal", ["-c", "\(work)/o.ctx", "-p", "wrong"])
        #expect(wrong.status != 0)
        _ = tpm.tool("tpm2_flushcontext", ["-t"])
        let lockedOut = tpm.tool("tpm2_unseal", ["-c", "\(work)/o.ctx", "-p", "right"])
        try #require(lockedOut.status != 0 && lockedOut.stderr.contains("lockout"), "the TPM is in lockout: \(lockedOut)")

        let r = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
        #expect(r.status == 0 && r.stdout == TestData.textSecret(name), "\(r)")
    }

    /// A key sealed by a vaultctl before the noDA templates (its seed under the older, DA-protected primary)
    /// still opens, and, being DA-protected, is refused with 75 and the time to wait while the TPM is in
    /// lockout. Made here with tpm2-tools: the seed of a new key unsealed, then sealed again under the
    /// older template, and the key file put back together around it.
    @Test func aKeySealedUnderTheOlderTemplateStillOpens() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("legacy")
        try Self.store(sb, name, TestData.textSecret(name), with: tpm)
        let keyPath = "\(sb.stateFolder)/device.tpm2"
        let file = try #require(FileBytes.read(keyPath))
        let parts = Self.tpmParts(file)
        try #require(parts.count == 3)
        let work = try Fixtures.makeFolder("legacy")
        try #require(FileBytes.write("\(work)/pub", parts[1]) && FileBytes.write("\(work)/priv", parts[2]))
        func run(_ tool: String, _ args: [String]) throws -> ProcessResult {
            let r = tpm.tool(tool, args)
            _ = tpm.tool("tpm2_flushcontext", ["-t"])
            try #require(r.status == 0, "\(tool): \(r)")
            return r
        }
        let template = ["-C", "o", "-g", "sha256", "-G", "ecc256:aes128cfb"]
        _ = try run("tpm2_createprimary", template + ["-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt", "-c", "\(work)/new.ctx"])
        _ = try run("tpm2_load", ["-C", "\(work)/new.ctx", "-u", "\(work)/pub", "-r", "\(work)/priv", "-c", "\(work)/object.ctx"])
        let seed = try run("tpm2_unseal", ["-c", "\(work)/object.ctx"]).stdout
        try #require(seed.count == 32 && FileBytes.write("\(work)/seed", seed))
        _ = try run("tpm2_createprimary", template + ["-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|decrypt", "-c", "\(work)/old.ctx"])
        _ = try run("tpm2_create", ["-C", "\(work)/old.ctx", "-a", "fixedtpm|fixedparent|userwithauth", "-i", "\(work)/seed",
                                    "-u", "\(work)/old.pub", "-r", "\(work)/old.priv"])
        let printed = try run("tpm2_readpublic", ["-c", "\(work)/old.ctx", "-o", "\(work)/old-primary.pub"])
        let nameHex = try #require(printed.stdoutText.split(separator: "\n").first { $0.hasPrefix("name: ") }).dropFirst(6)
        var name2b: [UInt8] = [0, UInt8(nameHex.count / 2)]
        var digits = Substring(nameHex)
        while digits.count >= 2 { name2b.append(UInt8(digits.prefix(2), radix: 16)!); digits = digits.dropFirst(2) }
        let oldPub = try #require(FileBytes.read("\(work)/old.pub")), oldPriv = try #require(FileBytes.read("\(work)/old.priv"))
        let header = Array(file[0..<(8 + 16 + 32)])
        try #require(FileBytes.write(keyPath, header + name2b + oldPub + oldPriv, mode: 0o600))

        let r = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
        #expect(r.status == 0 && r.stdout == TestData.textSecret(name), "the older key opens: \(r)")

        // DA-protected: a lockout from another program's failure refuses it, saying how long to wait.
        _ = try run("tpm2_dictionarylockout", ["-s", "-n", "1", "-t", "120", "-l", "120"])
        _ = try run("tpm2_create", ["-C", "\(work)/old.ctx", "-p", "right", "-i", "\(work)/seed", "-u", "\(work)/da.pub", "-r", "\(work)/da.priv"])
        _ = try run("tpm2_load", ["-C", "\(work)/old.ctx", "-u", "\(work)/da.pub", "-r", "\(work)/da.priv", "-c", "\(work)/da.ctx"])
        let wrong = tpm.tool("tpm2_unseal", ["-c", "\(work)/da.ctx", "-p", "wrong"])
        #expect(wrong.status != 0)
        _ = tpm.tool("tpm2_flushcontext", ["-t"])
        let locked = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
        #expect(locked.status == 75 && locked.stderr.contains("try again in 120 s"), "\(locked)")
    }

    /// Reads followed by unclean TPM shutdowns (swtpm killed: a crash, a power cut, a killed VM) count no
    /// failure: the key still opens after four of them (swtpm's defaults lock out after three), and the
    /// TPM's lockout counter stays 0.
    @Test func uncleanTPMShutdownsAfterReadsNeverLockTheKeyOut() throws {
        let tpm = try SoftwareTPM.start()
        defer { tpm.stop() }
        let sb = try Sandbox()
        let name = sb.uniqueSlot("unclean")
        try Self.store(sb, name, TestData.textSecret(name), with: tpm)
        for round in 1...4 {
            let r = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
            #expect(r.status == 0 && r.stdout == TestData.textSecret(name), "read \(round): \(r)")
            try tpm.crash()
        }
        let last = try sb.vaultctl(["read", name], overriding: Self.using(tpm))
        #expect(last.status == 0, "after four unclean shutdowns: \(last)")
        let counter = tpm.tool("tpm2_getcap", ["properties-variable"])
        #expect(counter.stdoutText.contains("TPM2_PT_LOCKOUT_COUNTER: 0x0\n"), "\(counter.stdoutText)")
    }
}

/// The default TPM device, as vaultctl's `TPMChoice` names it.
enum TPMChoiceDefaults {
    static let kernelDevice = "/dev/tpmrm0"
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
