/// Why bytes were not read as JSON, or a JSON value not as the document it should be.
///
/// The parser stops at the first problem, in the order of the text. `syntax` covers everything that is not
/// JSON at all (a byte where none may be, the end of the text in the middle of a value, anything but
/// whitespace after the value); the other cases name a problem a person can fix by name. Lines count from 1.
///
/// `Sendable`: values only.
package enum JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not JSON on `line`: `expected` says what would have been (`"a value"`, `"',' or '}'"`,
    /// `"the end of the text"`, …).
    case syntax(line: Int, expected: String)
    /// A comma right before `}` or `]`, on `line` (where the comma is).
    case trailingComma(line: Int)
    /// Arrays and objects nest deeper than `limit` (the document's own object or array is level 1).
    case tooDeep(limit: Int)
    /// One object holds the key at the end of this path twice. Keys are compared as Swift strings after
    /// their escapes are decoded: `"a"` and `"\u0061"` are the same key, and so are two canonically
    /// equivalent spellings (`"\u00e9"` and `"e\u0301"`), which some readers would take as two.
    case duplicateKey(JSONPath)
    /// The value at this path cannot be read: a number beyond `Double`, or a string that is not valid
    /// (invalid UTF-8, a raw control character, an unknown escape, a lone surrogate). A key that is not a
    /// valid string is a `syntax` error of its object.
    case unreadableValue(JSONPath)
    /// The JSON is fine but is not the document expected: `what` names the field that is missing or has
    /// the wrong type (`"\"pid\" must be a whole number"`).
    case mismatch(String)

    package var description: String {
        switch self {
        case .syntax(let line, let expected): return "not valid JSON: line \(line) should have \(expected)"
        case .trailingComma(let line): return "not valid JSON: line \(line) has a comma before a closing \"}\" or \"]\""
        case .tooDeep(let limit): return "not valid JSON here: it nests deeper than \(limit) levels"
        case .duplicateKey(let path): return "not valid JSON here: the key \"\(path)\" appears twice"
        case .unreadableValue(let path): return "not valid JSON: the value of \"\(path)\" cannot be read"
        case .mismatch(let what): return what
        }
    }
}
