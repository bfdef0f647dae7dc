#if canImport(Glibc)
import Glibc
#endif
import Slots
import TPMSealing

// vaultctl-tpm: the TPM half of the device key, started by vaultctl (Slots' `TPMHelper`), never by hand.
//
//   vaultctl-tpm seal TCTI     the 32-byte seed on stdin → the TPM blob on stdout
//   vaultctl-tpm unseal TCTI   the blob on stdin → the seed on stdout
//
// Exit 0 with the answer, or exit 1 with one failure line (`TPMFailure.line`) on stdout; 64 for bad use.
// It holds the seed only in `SecretBytes`, with core dumps off and the process not dumpable.

Hardening.apply()
Hardening.ensureStandardDescriptors()

let arguments = CommandLine.arguments
guard arguments.count == 3, ["seal", "unseal"].contains(arguments[1]) else {
    let usage = "usage: vaultctl-tpm seal|unseal TCTI (started by vaultctl; the bytes go through stdin and stdout)\n"
    _ = usage.withCString { write(2, $0, strlen($0)) }
    exit(64)
}

/// Standard input, whole, into a wiped buffer (at most 8 KiB).
func readInput() -> SecretBytes {
    let input = SecretBytes(capacity: 8192)
    input.withUnsafeMutableBytes { raw, used in
        while used < raw.count {
            let n = read(0, raw.baseAddress! + used, raw.count - used)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            used += n
        }
    }
    return input
}

func writeOut(_ raw: UnsafeRawBufferPointer) {
    var done = 0
    while done < raw.count {
        let n = write(1, raw.baseAddress! + done, raw.count - done)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { exit(1) }
        done += n
    }
}

do throws(TPMFailure) {
    let input = readInput()
    if arguments[1] == "seal" {
        let blob = try TPM2.seal(input, tcti: arguments[2])
        blob.withUnsafeBytes { writeOut($0) }
    } else {
        let blob = input.withUnsafeBytes { Array($0) }  // the blob is not secret
        let seed = try TPM2.unseal(blob, tcti: arguments[2])
        seed.withUnsafeBytes { writeOut($0) }
    }
    exit(0)
} catch {
    let line = error.line + "\n"
    Array(line.utf8).withUnsafeBytes { writeOut($0) }
    exit(1)
}
