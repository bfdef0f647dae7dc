#if canImport(Glibc)
import Glibc
#endif
import Vault

/// parse → call → render → exit code.
Hardening.apply()
signal(SIGPIPE, SIG_IGN)
let code = Entrypoint.run(Array(CommandLine.arguments.dropFirst()))
exit(code.rawValue)
