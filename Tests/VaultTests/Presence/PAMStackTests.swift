import Foundation
import Testing
@testable import Vault

/// What `status --json` and `device-key status` say the PAM stack asks for: read from the files as libpam
/// finds them, claiming nothing the lines do not name.
@Suite struct PAMStackTests {
    let folder = TemporaryFolder()
    var etc: String { folder.appending("etc") }
    var lib: String { folder.appending("lib") }

    init() throws {
        try FileManager.default.createDirectory(atPath: folder.appending("etc"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.appending("lib"), withIntermediateDirectories: true)
    }

    func write(_ path: String, _ text: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    func read() -> PAMStack? { PAMStack.read(service: "vaultctl", directories: [etc, lib]) }

    @Test func theShippedStacksNameWhatTheyAskFor() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
        try write("\(etc)/common-auth", "auth [success=1 default=ignore] pam_unix.so nullok\nauth requisite pam_deny.so\nauth required pam_permit.so\n")
        try write("\(etc)/common-account", "account required pam_unix.so\n")
        let expected: [(String, [String])] = [("vaultctl", ["password"]), ("vaultctl-fingerprint", ["fingerprint"]),
                                              ("vaultctl-security-key", ["security key"]), ("vaultctl-password-and-key", ["password", "security key"])]
        for (file, factors) in expected {
            try write("\(etc)/vaultctl", try String(contentsOfFile: "\(repository)/policy/pam.d/\(file)", encoding: .utf8))
            let stack = try #require(read())
            #expect(stack.factors == factors, "\(file): \(stack)")
            #expect(stack.file == "\(etc)/vaultctl")
        }
        #expect(read()?.auth.last == PAMStack.Entry(control: "required", module: "pam_u2f", factor: "security key"))
    }

    @Test func includesSubstacksControlsAndContinuationsAreFollowed() throws {
        try write("\(lib)/finger", "-auth sufficient /usr/lib/x86_64-linux-gnu/security/pam_fprintd.so max-tries=1\n")
        try write("\(etc)/vaultctl", """
            # a comment naming pam_u2f.so
            auth substack finger
            auth [success=done new_authtok_reqd=done \\
                  default=ignore] pam_unix.so   # the password
            AUTH required pam_something_else.so
            account required pam_permit.so
            @include missing-file
            """)
        let stack = try #require(read())
        #expect(stack.auth == [
            PAMStack.Entry(control: "sufficient", module: "pam_fprintd", factor: "fingerprint"),
            PAMStack.Entry(control: "[success=done new_authtok_reqd=done default=ignore]", module: "pam_unix", factor: "password"),
            PAMStack.Entry(control: "required", module: "pam_something_else", factor: nil),
        ])
        #expect(stack.factors == ["fingerprint", "password"])
        #expect(stack.sentence.contains("fingerprint (pam_fprintd, sufficient); password (pam_unix, [success=done new_authtok_reqd=done default=ignore])"), "\(stack.sentence)")
        #expect(stack.json.contains("\"factors\":[\"fingerprint\",\"password\"]"), "\(stack.json)")
    }

    @Test func withoutTheServiceFileItIsOthersAndAnInclusionLoopEnds() throws {
        #expect(read() == nil)
        try write("\(lib)/other", "@include other\nauth required pam_deny.so\n")
        let stack = try #require(read())
        #expect(stack.file == "\(lib)/other")
        #expect(stack.factors.isEmpty && stack.auth.allSatisfy { $0.module == "pam_deny" } && stack.auth.count == 8, "\(stack.auth.count)")
        #expect(stack.sentence.contains("names no password, fingerprint or security-key module"), "\(stack.sentence)")
        try write("\(etc)/vaultctl", "account required pam_permit.so\n")
        #expect(read()?.sentence.contains("names no authentication module") == true)
    }
}
