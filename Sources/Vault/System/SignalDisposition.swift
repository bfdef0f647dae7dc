import GateProtocol
import VaultRules

#if canImport(Glibc)
import Glibc
#endif

/// What a signal does in this process now, as `sigaction` tells it (no allocation: usable in a forked child).
public enum SignalDisposition {
    /// Whether `signal` is ignored (`SIG_IGN`, the handler value 1: a C function pointer, compared as its
    /// bits). A program started in the background by a shell has SIGINT ignored, and keeps it so.
    public static func isIgnored(_ signal: Int32) -> Bool {
        var current = sigaction()
        sigaction(signal, nil, &current)
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 1
    }
}
