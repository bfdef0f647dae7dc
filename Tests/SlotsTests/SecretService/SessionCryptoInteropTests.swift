import Foundation
import Testing
@testable import SecretService
@testable import Slots

/// The session algorithm against an independent implementation, live: Python's `cryptography` (Debian
/// python3-cryptography) plays the Secret Service side of `dh-ietf1024-sha256-aes128-cbc-pkcs7` with its own
/// big-number arithmetic, HKDF and AES-CBC, following libsecret's `secret-session.c` (and the specification's
/// "Transfer of Secrets"). Each run draws fresh keys on both sides, so this is not a fixed vector.
@Suite("Session crypto against Python's cryptography")
struct SessionCryptoInteropTests {
    /// The server side: `server.py A_HEX [Y_HEX IV_HEX CT_HEX]`. Without the last three it draws a server
    /// exponent y and prints `y B iv ct`, where B = 2^y mod p and ct encrypts the plaintext under
    /// HKDF-SHA256(A^y mod p); with them it decrypts ct and prints the plaintext in hex.
    static let server = """
    import os, sys
    from cryptography.hazmat.primitives import hashes, padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    p = int("FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
            "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
            "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF", 16)
    a = int(sys.argv[1], 16)
    y = int(sys.argv[2], 16) if len(sys.argv) > 2 else int.from_bytes(os.urandom(128), "big") % (p - 3) + 2
    shared = pow(a, y, p).to_bytes(128, "big")
    key = HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"").derive(shared)
    if len(sys.argv) > 2:
        d = Cipher(algorithms.AES(key), modes.CBC(bytes.fromhex(sys.argv[3]))).decryptor()
        padded = d.update(bytes.fromhex(sys.argv[4])) + d.finalize()
        u = padding.PKCS7(128).unpadder()
        print((u.update(padded) + u.finalize()).hex())
    else:
        iv = os.urandom(16)
        pad = padding.PKCS7(128).padder()
        data = pad.update(b"from the python server") + pad.finalize()
        e = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        print("%x %s %s %s" % (y, pow(2, y, p).to_bytes(128, "big").hex(), iv.hex(), (e.update(data) + e.finalize()).hex()))
    """

    /// Runs the server side; its output goes to files, not pipes (a pipe's write end can leak into a process
    /// another test spawns at the same moment and keep a reader waiting), and it has 30 s.
    static func python(_ arguments: [String]) throws -> [String] {
        try withTemporaryFolder { folder in
            let outPath = "\(folder)/out", errPath = "\(folder)/err"
            FileManager.default.createFile(atPath: outPath, contents: nil)
            FileManager.default.createFile(atPath: errPath, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", server] + arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
            try process.run()
            for _ in 0..<3000 where process.isRunning { usleep(10_000) }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            let errors = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
            try #require(process.terminationReason == .exit && process.terminationStatus == 0,
                         "python3 (with python3-cryptography) failed or took over 30 s: \(errors)")
            let out = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
            return out.split(whereSeparator: \.isWhitespace).map(String.init)
        }
    }

    @Test(arguments: 1...3)
    func bothSidesAgreeAndEachReadsTheOther(_ run: Int) throws {
        let client = SessionKeyExchange()
        let served = try Self.python([hex(client.publicKey)])
        try #require(served.count == 4, "\(served)")
        let key = try #require(client.sessionKey(serverPublicKey: bytes(hex: served[1])))

        let fromServer = try #require(bytes(hex: served[3]).withUnsafeBytes {
            key.decrypt(parameters: bytes(hex: served[2]), value: $0)
        })
        #expect(fromServer.testBytes == Array("from the python server".utf8))

        let mine = SecretBytes.test("from the swift client, run \(run): \u{0}\u{ff}")
        let sealed = key.encrypt(mine)
        let opened = try Self.python([hex(client.publicKey), served[0], hex(sealed.parameters), hex(sealed.value)])
        #expect(opened == [hex(mine.testBytes)])
    }
}
