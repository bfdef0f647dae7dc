// A JSON probe of the benchmark (bench/run.py builds it, never the product): it reads the documents a typical
// vaultctl command reads, parses them with one JSON library (`Probe`, from one of the Probe*.swift files) and
// looks up one slot's entry in the mode record, as a read or a status does.
//
//     probe POLICY.json MODES.json RATELIMIT.json SLOT EXPECTED-MODE
//
// Prints "ok" when the entry's mode is EXPECTED-MODE and the other two documents parsed; else exits 1.
#if canImport(Glibc)
import Glibc
#endif

/// The whole file at `path`, read with open/read (what vaultctl's SecureFile does, without its checks).
func readFile(_ path: String) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { fputs("probe: cannot open \(path)\n", stderr); exit(1) }
    defer { close(fd) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 { fputs("probe: cannot read \(path)\n", stderr); exit(1) }
        if n == 0 { break }
        out += chunk[0..<n]
    }
    return out
}

let args = CommandLine.arguments
guard args.count == 6 else { fputs("usage: probe POLICY MODES RATELIMIT SLOT EXPECTED\n", stderr); exit(1) }
let mode = Probe.mode(policy: readFile(args[1]), modes: readFile(args[2]), rateLimit: readFile(args[3]),
                      slot: args[4], expected: args[5])
guard mode == args[5] else { fputs("probe: \(Probe.name) found \(mode ?? "nothing"), not \(args[5])\n", stderr); exit(1) }
puts("ok")
