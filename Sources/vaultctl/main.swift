#if canImport(Glibc)
import Glibc
#endif
import Vault

/// parse → call → render → exit code.
Hardening.ensureStandardDescriptors()  // before anything is opened
let launched = EarlyGate.launch()  // the installed gate loads while the words are decoded and parsed
let arguments = ProcessArguments.current()  // before hardening: a non-dumpable process may not read /proc/self
Hardening.apply()
signal(SIGPIPE, SIG_IGN)
let words: [String]
switch GitHelperEntry.route(arguments) {
case .words(let w): words = w
case .ignore: exit(0)
}
let code = Entrypoint.run(words, launched: launched)
exit(code.rawValue)
