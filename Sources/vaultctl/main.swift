#if canImport(Glibc)
import Glibc
#endif
import Vault

/// parse → call → render → exit code.
Hardening.ensureStandardDescriptors()  // before anything is opened
let arguments = ProcessArguments.current()  // before hardening: a non-dumpable process may not read /proc/self
Hardening.apply()
signal(SIGPIPE, SIG_IGN)
let code = Entrypoint.run(Array(arguments.dropFirst()))
exit(code.rawValue)
