import Testing
@testable import JSON

/// Parses UTF-8 `text` with `JSONParser`.
func parseJSON(_ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth) throws(JSONError) -> JSONValue {
    try JSONParser.parse(Array(text.utf8), maximumDepth: maximumDepth)
}

/// The error `JSONParser` rejects `bytes` with; records an issue (and returns nil) when it accepts them.
func jsonRejection(bytes: [UInt8], maximumDepth: Int = JSONParser.defaultMaximumDepth,
                   sourceLocation: SourceLocation = #_sourceLocation) -> JSONError? {
    do {
        let value = try JSONParser.parse(bytes, maximumDepth: maximumDepth)
        Issue.record("accepted: \(value)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// `jsonRejection(bytes:)` for UTF-8 text.
func jsonRejection(_ text: String, maximumDepth: Int = JSONParser.defaultMaximumDepth,
                   sourceLocation: SourceLocation = #_sourceLocation) -> JSONError? {
    jsonRejection(bytes: Array(text.utf8), maximumDepth: maximumDepth, sourceLocation: sourceLocation)
}

/// True for a `.syntax` error, whatever its line.
func isSyntaxError(_ error: JSONError?) -> Bool {
    if case .syntax? = error { return true }
    return false
}

/// The text `JSONWriter` writes for `value`.
func writtenJSON(_ value: JSONValue, style: JSONWriter.Style = .compact) -> String {
    String(decoding: JSONWriter.bytes(value, style: style), as: UTF8.self)
}
