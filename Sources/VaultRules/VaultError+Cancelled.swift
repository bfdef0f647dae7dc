extension VaultError {
    /// Ctrl-D at the password prompt: nothing was answered, so nothing is counted. A `notAuthenticated` like
    /// every other way of not answering, with an audit word of its own ("cancelled"). Through the gate these
    /// words make the round trip unchanged (the CLI's `cancel` frame, the gate's `not-authenticated` refusal),
    /// so they tell it apart: a case of its own would need a new refusal on the wire.
    public static let cancelledPrompt = VaultError.notAuthenticated(cancelledPromptWords)

    private static let cancelledPromptWords = "cancelled at the password prompt"

    /// Whether this is `cancelledPrompt`, made here or back from the gate.
    public var isCancelledPrompt: Bool {
        if case .notAuthenticated(let why) = self { return why == Self.cancelledPromptWords }
        return false
    }
}
