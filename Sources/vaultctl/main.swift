#if canImport(Glibc)
import Glibc
#endif
import GateProtocol
import Slots
import VaultRules
import Vault
import CStartHardening  // its constructor made this process not dumpable before main

/// parse → call → render → exit code. (In a function: its values are its own, not globals.)
func main() -> Never {
    _ = vaultctl_start_hardening_linked()
    Hardening.ensureStandardDescriptors()  // before anything is opened
    let arguments = ProcessArguments.current()  // before hardening: a non-dumpable process may not read /proc/self
    Hardening.apply()
    let launched = EarlyGate.launch()  // the gate the constructor started (once not dumpable), loading meanwhile
    signal(SIGPIPE, SIG_IGN)
    let words: [String]
    switch GitHelperEntry.route(arguments) {
    case .words(let w): words = w
    case .ignore: exit(0)
    }
    let code = Entrypoint.run(words, launched: launched)
    exit(code.rawValue)
}
main()
