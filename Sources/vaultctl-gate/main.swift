#if canImport(Glibc)
import Glibc
#endif
import GateService
import Slots
import GateProtocol
import VaultRules

// vaultctl-gate: installed 2755 root:vaultctl, the only program that reaches the protected store
// (/var/lib/vaultctl). The CLI starts it for each command that needs it and speaks the gate protocol
// (GateFrame) on its standard input and output. See docs/gate.md.
/// The gate's whole run; its exit status. (In a function: its values are its own, not globals.)
func runGate() -> Int32 {
    StartupChecks.restartInCleanEnvironment()
    Hardening.ensureStandardDescriptors()
    StartupChecks.checkPrivilege()
    StartupChecks.clearInheritance()

    // The name and the home from the user database (root's), never from the caller's environment.
    guard let (user, home) = PAMGate.invokingAccount() else {
        StartupChecks.refuse(.slot(.gateUnavailable("your user id \(getuid()) has no entry in the user database, so PAM cannot authenticate you")))
    }
    let store = GateStore(uid: getuid())
    // Only now (the environment, descriptors and signals are the gate's own): what an authentication needs,
    // ahead of it, while the rest of the start goes on. Its thread is done before the process ends, however
    // it ends (exit's handlers never run beside it).
    let prepared = StartupChecks.authenticating ? GateSession.prepareToAuthenticate() : nil
    do throws(VaultError) {
        try GateStore.checkRoot()
        let machine: MachineIdentity
        do { machine = try MachineIdentity.current() } catch { throw .slot(error) }
        let configuration = try GateConfiguration.load()
        // Root's policy, which the user's own may tighten: read when a request first needs it (a look does not).
        let policy = { () throws(VaultError) -> Policy in
            // The user's from the home directory's default place (the gate sees no XDG_CONFIG_HOME), as the
            // user's own file (the gate runs as the user), with the group dropped while it looks: the user's
            // path is the user's to shape (symlinks into the store), and only what the user may read should be
            // read there.
            let reading = try GroupDrop.asUser("read your policy") { () throws(VaultError) -> PolicyReading in
                PolicyReading(configFolder: "\(home)/.config/vaultctl")
            }
            return try reading.effective()
        }
        let code = GateSession(store: store, user: user, home: home, machine: machine, policy: policy, tpm: configuration.tpm,
                               expectsAuthentication: StartupChecks.authenticating, prepared: prepared).run()
        _ = prepared?.value()
        return code
    } catch {
        _ = prepared?.value()
        StartupChecks.refuse(error)
    }
}
exit(runGate())
