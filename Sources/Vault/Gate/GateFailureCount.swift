import GateProtocol
import Slots
import VaultRules

/// A protected vault's count of the failures that are not PAM's (`FailureCount`): in the gate's rate limit,
/// which no program running as the user can reset. Recording one needs no password (it can only make the
/// limit stricter); whether the limit blocks comes with the gate's hello-time checks and every gated request.
public struct GateFailureCount: FailureCount {
    public let client: GateClient

    public init(client: GateClient) { self.client = client }

    public func check() throws(VaultError) {
        // The gate refuses a blocked vault before any prompt; asking first would be one more round trip.
    }

    @discardableResult
    public func recordFailure() throws(VaultError) -> Double? {
        let reply = try client.request(.recordFailure)
        return Double(reply.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
    }
}
