import JSON

extension RateLimiter {
    /// The contents of `ratelimit.json`: `{"version": 1, "failures": [TIME, …], "pending": [{"pid": PID,
    /// "time": TIME, "answered": true}, …], "blockedUntil": TIME}`, times in seconds since the epoch
    /// (`Double`, which round-trips exactly). `pending` and `blockedUntil` are left out when there are none.
    struct Document: JSONDocument {
        var version = 1
        var failures: [Double] = []
        var pending: [Pending]? = nil
        var blockedUntil: Double?

        init() {}

        package init(json: JSONValue) throws(JSONError) {
            let fields = try JSONFields(json, "the rate limit")
            version = try fields.required("version", \.intValue)
            failures = try fields.required("failures") { $0.array(of: \.doubleValue) }
            pending = try fields.optional("pending") { (value) throws(JSONError) in
                try value.array { (item) throws(JSONError) in try Pending(json: item) }
            }
            blockedUntil = try fields.optional("blockedUntil", \.doubleValue)
        }

        package var json: JSONValue {
            .object(dropping: [
                "version": .integer(version),
                "failures": .array(failures.map { JSONValue($0) }),
                "pending": pending.map { .array($0.map(\.json)) },
                "blockedUntil": blockedUntil.map { JSONValue($0) },
            ])
        }
    }

    /// An attempt in progress: the process holding the place, and since when.
    struct Pending: JSONDocument, Equatable {
        var pid: Int32
        var time: Double
        /// The password was handed over; the verdict had not come back yet.
        var answered: Bool?

        init(pid: Int32, time: Double, answered: Bool? = nil) {
            self.pid = pid
            self.time = time
            self.answered = answered
        }

        package init(json: JSONValue) throws(JSONError) {
            let fields = try JSONFields(json, "an attempt in progress")
            pid = try fields.required("pid", \.int32Value)
            time = try fields.required("time", \.doubleValue)
            answered = try fields.optional("answered", \.boolValue)
        }

        package var json: JSONValue {
            .object(dropping: ["pid": .integer(Int(pid)), "time": JSONValue(time), "answered": answered.map(JSONValue.bool)])
        }
    }
}
