#if canImport(Glibc)
import Glibc
#endif
import Slots
import GateProtocol
import VaultRules

/// The gate's side of PAM's conversation: each question goes to the CLI as a frame, and its `answer` (or
/// `cancel`) comes back, within the bound a person has to answer. One thread, one exchange.
final class GateRelay: PromptRelay, @unchecked Sendable {
    let reader: GateFrameReader
    let output: Int32
    /// How long the CLI may take to answer one question (a person typing, an askpass program).
    var answerSeconds: Double
    /// Whether the CLI is gone or spoke out of turn: the exchange ends after the request.
    var broken = false

    init(reader: GateFrameReader, output: Int32, answerSeconds: Double) {
        self.reader = reader
        self.output = output
        self.answerSeconds = answerSeconds
    }

    func ask(_ prompt: String, echo: Bool) -> Result<SecretBytes, VaultError> {
        guard !broken, GateFrame(echo ? .promptShown : .promptHidden, text: prompt).write(to: output) else {
            broken = true
            return .failure(.notAuthenticated("vaultctl, which asked, is gone"))
        }
        switch reader.next(within: answerSeconds) {
        case .success(let frame) where frame.word == .answer:
            return .success(frame.payload)
        case .success(let frame) where frame.word == .cancel:
            return .failure(frame.text.isEmpty ? .cancelledPrompt : .notAuthenticated(frame.text))
        case .failure(.timedOut):
            broken = true
            return .failure(.notAuthenticated("no answer within \(Int(answerSeconds)) s"))
        default:
            broken = true
            return .failure(.notAuthenticated("vaultctl did not answer the question"))
        }
    }

    func show(_ text: String, isError: Bool) {
        if broken { return }
        if !GateFrame(isError ? .error : .info, text: text).write(to: output) { broken = true }
    }
}
