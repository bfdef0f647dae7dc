import Slots

/// The PROMPT an asking program passes to `vaultctl askpass`: what is refused, and how it is shown.
///
/// git asks a `GIT_ASKPASS` program for the username first. A wrapper that answers with the token makes
/// git's next prompt `Password for 'https://TOKEN@host': `, which puts the token in vaultctl's argv (every
/// local user sees it in `ps`) and would show it beside the PAM prompt. So git's username prompt is refused
/// (the credential helper is the way for git), the user part of any URL in a prompt is never shown or passed
/// on, and a prompt that turns out to carry the slot's secret gets no answer.
enum AskedPrompt {
    /// Whether `prompt` is git's username question (`Username for 'https://host': `).
    static func isGitUsernamePrompt(_ prompt: String) -> Bool {
        prompt.lowercased().hasPrefix("username for ")
    }

    /// The prompt as shown beside the PAM prompt (and so passed to VAULT_ASKPASS): URL user parts hidden,
    /// control characters as spaces, at most 80 characters.
    static func shown(_ prompt: String) -> String {
        let cleaned = hidingURLUsers(prompt).unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7f ? " " : Character($0)
        }
        return String(cleaned.prefix(80))
    }

    /// `scheme://USER@host` as `scheme://…@host`, for every URL in `text`.
    static func hidingURLUsers(_ text: String) -> String {
        var scalars = Array(text.unicodeScalars)
        var i = 0
        while i + 2 < scalars.count {
            guard scalars[i] == ":", scalars[i + 1] == "/", scalars[i + 2] == "/" else { i += 1; continue }
            let start = i + 3
            var end = start
            while end < scalars.count, !"/'\" \t\n?#".unicodeScalars.contains(scalars[end]) { end += 1 }
            if let at = scalars[start..<end].lastIndex(of: "@"), at > start {
                scalars.replaceSubrange(start..<at, with: ["…"])
                i = start + 2
            } else {
                i = end
            }
        }
        var out = ""
        out.unicodeScalars.append(contentsOf: scalars)
        return out
    }

    /// Secrets shorter than this are not looked for in the prompt: a four-letter PIN may well appear in an
    /// ordinary prompt by chance, and refusing "Enter passphrase" because the secret is "pass" helps nobody.
    static let shortestSecretChecked = 6

    /// Whether the bytes of `prompt` contain `secret` anywhere.
    static func contains(_ prompt: String, _ secret: SecretBytes) -> Bool {
        let haystack = Array(prompt.utf8)
        return secret.withUnsafeBytes { needle in
            guard !needle.isEmpty, needle.count <= haystack.count else { return false }
            for start in 0...(haystack.count - needle.count) {
                var same = true
                for k in 0..<needle.count where haystack[start + k] != needle[k] { same = false; break }
                if same { return true }
            }
            return false
        }
    }
}
