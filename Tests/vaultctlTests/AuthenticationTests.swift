import Testing
import TestSupport

/// Every read authenticates through PAM (pam_wrapper + pam_matrix here); a failure is 77 and prints nothing.
@Suite("PAM authentication on read", .tags(.needsServices))
struct AuthenticationTests {
    /// A read that cannot authenticate, and what its message must name.
    enum Refusal: String, CaseIterable, Sendable {
        case wrongPassword
        case askpassDeclines
        /// The runner's children have no controlling terminal (`ProcessRunner`).
        case withoutAskpassOrTerminal
        case missingAskpassProgram

        var askpass: AskpassMode {
            switch self {
            case .wrongPassword: .wrong
            case .askpassDeclines: .declining
            case .withoutAskpassOrTerminal: .unset
            case .missingAskpassProgram: .correct
            }
        }

        func overriding(_ sb: Sandbox) -> [String: String] {
            self == .missingAskpassProgram ? ["VAULT_ASKPASS": "\(sb.root)/no-such-askpass"] : [:]
        }

        var says: String {
            switch self {
            case .wrongPassword: "Authentication failed"
            case .askpassDeclines: "exited with status 1"
            case .withoutAskpassOrTerminal, .missingAskpassProgram: "VAULT_ASKPASS"
            }
        }
    }

    @Test(arguments: Refusal.allCases)
    func readThatCannotAuthenticateIs77(_ refusal: Refusal) throws {
        let sb = try Sandbox()
        let name = sb.uniqueSlot(refusal.rawValue)
        try sb.store(name, TestData.textSecret(name))
        let r = try sb.vaultctl(["read", name], askpass: refusal.askpass, overriding: refusal.overriding(sb))
        r.expectFailure(77, saying: refusal.says)
    }
}
