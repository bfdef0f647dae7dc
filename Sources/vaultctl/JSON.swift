import JSON
import GateProtocol
import Vault
import VaultRules

/// Minimal JSON text for metadata output (names, modes, messages; never secrets).
enum JSON {
    /// `s` as a JSON string literal, escaped as vaultctl's files are (`JSONEscaping`).
    static func string(_ s: String) -> String {
        JSONEscaping.quoted(s)
    }
}
