#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport
import Slots
@testable import vaultctl

/// Issue 36, point 11: a machine that is not set up as vaultctl needs says what is missing and what an
/// administrator does about it, through the gate and without it (`GateMachine`): no machine id (a
/// container), a security-key stack without its mappings file, a gate that lost its set-group-ID mode.
@Suite(.serialized, .enabled(if: GateMachine.canRun, "needs root: a mount namespace, users and a set-group-ID file"), .tags(.needsRoot))
final class MachineSetupTests {
    static let shared = Result { try GateMachine.start() }
    let m: GateMachine

    /// The two paths: through the gate, and the same binary with no gate beside it.
    enum Path: String, CaseIterable { case gate, unprotected }

    init() throws {
        m = try Self.shared.get()
        m.reset()
        m.asRoot("printf 'auth required pam_unix.so nodelay\\naccount required pam_unix.so\\n' > /etc/pam.d/vaultctl; rm -rf /etc/vaultctl")
    }

    func vaultctl(_ path: Path) -> String { path == .gate ? m.vaultctl : m.plainVaultctl }

    func log(_ path: Path) -> String {
        path == .gate ? m.gateLog("alice") : m.asRoot("cat \(m.home("alice"))/.local/state/vaultctl/audit.log 2>/dev/null").stdoutText
    }

    /// No `/etc/machine-id` and no `/var/lib/dbus/machine-id` (both overlays of this machine): 78, and how to
    /// make one; with one made, the same command works.
    @Test(arguments: Path.allCases)
    func noMachineIDIs78WithHowToMakeOne(_ path: Path) throws {
        let saved = "\(m.folder)/machine-id.saved"
        m.asRoot("cp /etc/machine-id \(saved)")
        defer { m.asRoot("cp \(saved) /etc/machine-id && chmod 444 /etc/machine-id") }
        let removed = m.asRoot("rm -f /etc/machine-id /var/lib/dbus/machine-id && ! test -e /etc/machine-id")
        try #require(removed.status == 0, "\(removed)")

        for args in [["store", "mail"], ["read", "mail"]] {
            let r = m.run("alice", args, program: vaultctl(path), stdin: .text("s3cret"))
            #expect(r.status == 78 && r.stdout.isEmpty, "\(args): \(r)")
            #expect(r.stderr.contains("no machine id") && r.stderr.contains("'systemd-machine-id-setup'")
                    && r.stderr.contains("'dbus-uuidgen --ensure=/etc/machine-id'"), "\(args): \(r.stderr)")
        }
        // Each remedy as printed (one on each path), then the store works.
        let remedy = path == .gate ? "systemd-machine-id-setup" : "dbus-uuidgen --ensure=/etc/machine-id"
        let made = m.asRoot("\(remedy) && test -s /etc/machine-id")
        try #require(made.status == 0, "\(made)")
        let stored = m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret"))
        #expect(stored.status == 0, "\(stored)")
    }

    /// The security-key stacks as shipped, without root's `/etc/vaultctl/u2f_mappings`: the words name the
    /// missing file and how to enrol a key, not a missing reader or key. The counting is as before: nothing
    /// asked, nothing counted; after a password (password-and-key), a failure as any after an answer.
    @Test(arguments: Path.allCases)
    func aSecurityKeyStackWithoutItsMappingsFileSaysHowToEnrol(_ path: Path) throws {
        try #require(m.asRoot("ls /usr/lib/*/security/pam_u2f.so").status == 0, "libpam-u2f is not installed ('make deps')")
        #expect(m.run("alice", ["store", "mail"], program: vaultctl(path), stdin: .text("s3cret")).status == 0)
        m.asRoot("cp \(Paths.repositoryRoot)/policy/pam.d/vaultctl-security-key /etc/pam.d/vaultctl")

        let r = m.run("alice", ["read", "mail"], program: vaultctl(path), timeout: .seconds(40))
        #expect(r.status == 78 && r.stdout.isEmpty, "\(r)")
        #expect(r.stderr.contains("/etc/vaultctl/u2f_mappings (pam_u2f), and that file is missing"), "\(r.stderr)")
        #expect(r.stderr.contains("sudo sh -c 'pamu2fcfg -u alice >> /etc/vaultctl/u2f_mappings'"), "\(r.stderr)")
        #expect(!r.stderr.contains("no reader or key"), "\(r.stderr)")
        #expect(!log(path).contains("\"result\":\"failed\""), "nothing counted: \(log(path))")
        // The other way out names the installer of the program that ran PAM: the gate's `make install`
        // under its PREFIX; the plain copy is not installed, so both installers' commands.
        let prefix = String(m.gate.dropLast("/libexec/vaultctl/vaultctl-gate".count))
        let back = path == .gate
            ? "put the password stack back with 'sudo make install PREFIX=\(prefix) PAM_STACK=password' in vaultctl's source tree"
            : "put the password stack back with 'sudo make install PAM_STACK=password' in vaultctl's source tree (with the Debian package: 'sudo cp /usr/share/doc/vaultctl/pam.d/vaultctl /etc/pam.d/vaultctl')"
        #expect(r.stderr.contains(back), "\(r.stderr)")

        m.asRoot("cp \(Paths.repositoryRoot)/policy/pam.d/vaultctl-password-and-key /etc/pam.d/vaultctl")
        let both = m.run("alice", ["read", "mail", "--password-stdin"], program: vaultctl(path), stdin: .text("alice-pw\n"),
                         timeout: .seconds(40))
        #expect(both.status == 77 && both.stdout.isEmpty, "\(both)")
        #expect(both.stderr.contains("that file is missing") && both.stderr.contains("pamu2fcfg -u alice"), "\(both.stderr)")
        #expect(log(path).contains("\"result\":\"failed\""), "counted as any failure after a password: \(log(path))")

        // With the file there (a key for someone else), the words are the stack's usual ones again.
        m.asRoot("cp \(Paths.repositoryRoot)/policy/pam.d/vaultctl-security-key /etc/pam.d/vaultctl && mkdir -p /etc/vaultctl && echo 'bob:x,y,es256,+presence' > /etc/vaultctl/u2f_mappings")
        let other = m.run("alice", ["read", "mail"], program: vaultctl(path), timeout: .seconds(40))
        #expect(!other.stderr.contains("that file is missing"), "\(other)")
    }

    /// The gate without its set-group-ID mode (what an administrator who removed the package's override
    /// gets): 69 for everyone, with the command that puts the mode back (`make install`'s owner and mode
    /// here; the package's build names its `dpkg-statoverride`); running it makes vaultctl work again.
    @Test func aGateWithoutItsModeSaysHowToPutItBack() throws {
        defer { m.asRoot("chown root:vaultctl \(m.gate) && chmod 2755 \(m.gate)") }
        try #require(m.asRoot("chmod 0755 \(m.gate)").status == 0)

        let r = m.run("alice", ["store", "mail"], stdin: .text("s3cret"))
        #expect(r.status == 69, "\(r)")
        let command = "sudo chown root:vaultctl \(m.gate) && sudo chmod 2755 \(m.gate)"
        #expect(r.stderr.contains("An administrator gives the gate its mode back with '\(command)'"), "\(r.stderr)")

        // The command as printed (as root: no sudo in the machine), and it works again.
        let ran = m.asRoot(command.replacingOccurrences(of: "sudo ", with: ""))
        #expect(ran.status == 0, "\(ran)")
        let again = m.run("alice", ["store", "mail"], stdin: .text("s3cret"))
        #expect(again.status == 0, "\(again)")
    }

    /// The gate names its own install's remedy, found from its own path (never the caller's environment):
    /// here `make install` under the machine's PREFIX, for a store that is gone.
    @Test func aMissingStoreIsPutBackAsThisInstallDoes() throws {
        defer { m.asRoot("install -d -m 0770 -o root -g vaultctl /var/lib/vaultctl") }
        try #require(m.asRoot("rm -rf /var/lib/vaultctl").status == 0)
        let prefix = String(m.gate.dropLast("/libexec/vaultctl/vaultctl-gate".count))
        let r = m.run("alice", ["store", "mail"], stdin: .text("s3cret"))
        #expect(r.status == 69, "\(r)")
        #expect(r.stderr.contains("the protected store /var/lib/vaultctl is missing") && r.stderr.contains("which installing vaultctl makes (root:vaultctl 0770): install vaultctl again with 'sudo make install PREFIX=\(prefix)' in its source tree"), "\(r.stderr)")
    }

    /// Deleting the state folder of a protected vault loses no device-slot secret: they are in the gate's
    /// store (the README, the manual page and SECURITY.md say which folder holds them).
    @Test func aProtectedVaultsSecretsOutliveItsStateFolder() throws {
        let stored = m.run("alice", ["store", "mail"], stdin: .text("s3cret"))
        try #require(stored.status == 0, "\(stored)")
        try #require(m.asRoot("test -e \(m.home("alice"))/.local/state/vaultctl/protected-by-gate && rm -rf \(m.home("alice"))/.local/state/vaultctl").status == 0)
        let read = m.run("alice", ["read", "mail", "--password-stdin"], stdin: .text("alice-pw\n"))
        #expect(read.status == 0 && read.stdoutText == "s3cret", "\(read)")
    }

    /// The package's gate gets the package's statoverride, which an upgrade keeps (a chmod would not last).
    @Test func thePackagesGateIsPutBackWithItsStatoverride() {
        #expect(Installation(.package).gateModeCommand(path: "/usr/libexec/vaultctl/vaultctl-gate")
                == "sudo dpkg-statoverride --update --add root vaultctl 2755 /usr/libexec/vaultctl/vaultctl-gate")
    }
}
