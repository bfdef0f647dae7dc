import TestSupport
import Foundation
import Testing
@testable import Vault
@testable import VaultRules

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
        #expect(read()?.auth.last == PAMStack.Entry(control: "required", module: "pam_u2f", factor: "security key",
                                                    arguments: ["authfile=/etc/vaultctl/u2f_mappings", "cue"]))
    }

    /// Issue 36, point 11: the words for a security-key stack whose root-owned mappings file is missing, and
    /// only for a stack that names pam_u2f with that file.
    @Test func aMissingKeyMappingsFileIsNamedOnlyForAStackThatNamesIt() throws {
        let missing: (String) -> Bool = { _ in false }
        let present: (String) -> Bool = { _ in true }
        try write("\(etc)/vaultctl", "auth required pam_u2f.so authfile=/etc/vaultctl/u2f_mappings cue\n")
        #expect(try #require(read()).missingKeyMappings(exists: missing) == "/etc/vaultctl/u2f_mappings")
        #expect(try #require(read()).missingKeyMappings(exists: present) == nil)
        // Included from another file, after a password: still named.
        try write("\(etc)/key", "auth required /usr/lib/x86_64-linux-gnu/security/pam_u2f.so authfile=/etc/vaultctl/u2f_mappings\n")
        try write("\(etc)/vaultctl", "auth required pam_unix.so\nauth include key\n")
        #expect(try #require(read()).missingKeyMappings(exists: missing) == "/etc/vaultctl/u2f_mappings")
        // Another file, the per-user default, or another module: not this remedy.
        for stack in ["auth required pam_u2f.so authfile=/etc/u2f_mappings\n", "auth required pam_u2f.so cue\n",
                      "auth required pam_unix.so authfile=/etc/vaultctl/u2f_mappings\n"] {
            try write("\(etc)/vaultctl", stack)
            #expect(try #require(read()).missingKeyMappings(exists: missing) == nil, "\(stack)")
        }
        let words = PAMStack.keyMappingsRemedy(user: "alice")
        #expect(words.contains("/etc/vaultctl/u2f_mappings") && words.contains("is missing"), "\(words)")
        #expect(words.contains("sudo sh -c 'pamu2fcfg -u alice >> /etc/vaultctl/u2f_mappings'") && words.contains("Debian: pamu2fcfg"), "\(words)")
        #expect(!words.contains("no reader or key"), "\(words)")
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
            """)
        let stack = try #require(read())
        #expect(stack.auth == [
            PAMStack.Entry(control: "sufficient", module: "pam_fprintd", factor: "fingerprint", arguments: ["max-tries=1"]),
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
        // A service with no auth line authenticates with other's, as libpam does.
        try write("\(etc)/vaultctl", "account required pam_permit.so\n")
        let fallback = try #require(read())
        #expect(fallback.authFrom == "\(lib)/other" && fallback.auth.first?.module == "pam_deny", "\(fallback)")
        #expect(fallback.sentence.contains("whose auth lines are \(lib)/other's"), "\(fallback.sentence)")
    }

    /// libpam cuts the comment before it joins a continued line: a backslash at the end of a comment joins
    /// nothing (a stack that looks like "fingerprint only" but lets anyone in must show pam_permit).
    @Test func aCommentEndingInABackslashJoinsNothingAndAnUnreadableFileIsNotGuessed() throws {
        try write("\(etc)/vaultctl", "# fingerprint only, one try \\\nauth sufficient pam_permit.so\nauth required pam_fprintd.so max-tries=1\n")
        let stack = try #require(read())
        #expect(stack.auth.map(\.module) == ["pam_permit", "pam_fprintd"], "\(stack.auth)")
        // An inclusion that cannot be read: what the stack asks for is not known, and status says so.
        try write("\(etc)/vaultctl", "@include \(etc)/secret\n")
        try write("\(etc)/secret", "auth required pam_unix.so\n")
        chmod("\(etc)/secret", 0o000)
        defer { chmod("\(etc)/secret", 0o600) }
        if getuid() != 0 {  // root reads it anyway
            let unknown = try #require(read())
            #expect(unknown.unreadable == ["\(etc)/secret"] && unknown.sentence.contains("is not known"), "\(unknown)")
        }
        try write("\(etc)/vaultctl", "@include \(etc)/folder\n")
        try FileManager.default.createDirectory(atPath: "\(etc)/folder", withIntermediateDirectories: true)
        let folder = try #require(read())
        #expect(folder.unreadable == ["\(etc)/folder"] && folder.json.contains("\"unreadable\":"), "\(folder)")
    }
}
