import JSON

/// One line of the audit log. Never the secret, never its length.
public struct AuditEntry: Sendable, Equatable {
    public var time: String
    public var command: String
    public var slot: String?
    public var origin: String
    /// "ok", "handed-over" (a supply gave the secret to COMMAND; its "ok" or "failed" line follows), "refused"
    /// (a check said no before any prompt), "failed" (authentication or delivery failed), "erased" and
    /// "kept" (`credential erase`, one line per slot compared; "kept" also for a `credential store` that found
    /// a value already there), "nothing-stored" (`credential get` with nothing to give), "rejected" (an
    /// `askpass` delivery the asking program came back for: not accepted, counted as a failure), "cancelled"
    /// (Ctrl-C before the command's own line was written), or "error"
    /// (anything else).
    public var result: String
    public var reason: String?

    public init(time: String, command: String, slot: String?, origin: String, result: String, reason: String?) {
        self.time = time
        self.command = command
        self.slot = slot
        self.origin = origin
        self.result = result
        self.reason = reason
    }
}

extension AuditEntry: JSONDocument {
    /// `{"command": …, "origin": …, "reason": …, "result": …, "slot": …, "time": …}`; `slot` and `reason`
    /// are left out when there are none.
    package init(json: JSONValue) throws(JSONError) {
        let fields = try JSONFields(json, "an audit entry")
        time = try fields.required("time", \.stringValue)
        command = try fields.required("command", \.stringValue)
        slot = try fields.optional("slot", \.stringValue)
        origin = try fields.required("origin", \.stringValue)
        result = try fields.required("result", \.stringValue)
        reason = try fields.optional("reason", \.stringValue)
    }

    package var json: JSONValue {
        .object(dropping: [
            "time": .string(time), "command": .string(command), "slot": slot.map(JSONValue.string),
            "origin": .string(origin), "result": .string(result), "reason": reason.map(JSONValue.string),
        ])
    }
}
