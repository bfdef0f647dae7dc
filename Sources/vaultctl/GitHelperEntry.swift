/// `git-credential-vaultctl [OPTIONS] ACTION`: vaultctl run under the name git gives a credential helper
/// (`credential.helper vaultctl` makes git run `git-credential-vaultctl get`, installed as a link to the
/// binary). git puts the helper's own arguments first and the action last.
enum GitHelperEntry {
    static let programName = "git-credential-vaultctl"

    enum Route: Equatable {
        /// Run these vaultctl words.
        case words([String])
        /// An action helpers do not know: git's protocol says to ignore it silently (exit 0).
        case ignore
    }

    /// The words to run for `argv` (program name first).
    static func route(_ argv: [String]) -> Route {
        let rest = Array(argv.dropFirst())
        guard let program = argv.first, program.split(separator: "/").last.map(String.init) == programName else {
            return .words(rest)
        }
        guard let action = rest.last else { return .words(["credential"]) }
        guard ["get", "store", "erase"].contains(action) else { return .ignore }
        return .words(["credential", action] + rest.dropLast())
    }
}
