#if canImport(Glibc)
import Glibc
#endif
import CFuzzer

/// libFuzzer's entry point for the `gate-protocol` target: the oracle (`GateProtocolFuzzCheck`, shared with the corpus replay test)
/// must find nothing wrong; anything it finds is a crash, so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    if let problem = GateProtocolFuzzCheck.violation(UnsafeRawBufferPointer(start: data, count: size)) {
        let line = "gate-protocol fuzz check failed: \(problem)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        abort()
    }
    return 0
}

/// Hands control to libFuzzer (flags, corpus folders, `-runs`, a single input file: as any libFuzzer binary).
@main
enum FuzzGateProtocolMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzz))
    }
}
