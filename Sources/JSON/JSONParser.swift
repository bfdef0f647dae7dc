import Slots

/// A strict JSON reader (RFC 8259): bytes in, a `JSONValue` out, or the first problem as a `JSONError`.
///
/// Strict where readers differ, so that what vaultctl accepts is what any careful reader would read the
/// same way: no trailing commas, no comments, no leading zeros, no `NaN`, no duplicate keys in one object,
/// nothing but whitespace (space, tab, CR, LF) after the value, strings that are valid UTF-8 with no raw
/// control characters, only the JSON escapes, and `\u` surrogates only in pairs. A UTF-8 byte order mark
/// before the value is skipped (RFC 8259 allows ignoring it; some editors write one).
///
/// Nesting is limited (`maximumDepth`), and the reader recurses only once per level, so hostile input
/// cannot exhaust the stack. It never reads past the buffer and never traps.
///
/// vaultctl's own rather than a library's because none was cheap enough: `make bench` measures jansson,
/// json-c and FoundationEssentials against it per command (`bench/json-probes/`; figures in the README's
/// "How it is built").
package struct JSONParser {
    /// The nesting limit when the caller names none: far more than any of vaultctl's documents need.
    package static let defaultMaximumDepth = 32

    /// Reads `bytes` as one JSON document.
    package static func parse(_ bytes: UnsafeRawBufferPointer,
                      maximumDepth: Int = defaultMaximumDepth) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        return try parser.document()
    }

    /// Reads `bytes` as one JSON document.
    package static func parse(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(JSONError) -> JSONValue {
        try bytes.withTypedUnsafeBytes { (raw) throws(JSONError) -> JSONValue in try parse(raw, maximumDepth: maximumDepth) }
    }

    private let bytes: UnsafeRawBufferPointer
    private let maximumDepth: Int
    /// The next byte to read.
    private var i = 0
    /// Where the value being read sits, for `duplicateKey` and `unreadableValue`.
    private var path: [JSONPath.Component] = []

    private init(bytes: UnsafeRawBufferPointer, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    /// A parser for `values(at:in:)` (JSONLookup.swift).
    package init(lookingIn bytes: UnsafeRawBufferPointer, maximumDepth: Int) {
        self.init(bytes: bytes, maximumDepth: maximumDepth)
    }

    private mutating func skipByteOrderMark() {
        if bytes.starts(with: [0xef, 0xbb, 0xbf]) { i = 3 }
    }

    private mutating func document() throws(JSONError) -> JSONValue {
        skipByteOrderMark()
        skipWhitespace()
        let value = try value(depth: 0)
        skipWhitespace()
        guard i == bytes.count else { throw syntax("the end of the text") }
        return value
    }

    // MARK: Values

    /// The value starting at `i`; `depth` is how many arrays and objects hold it.
    private mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard i < bytes.count else { throw syntax("a value") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string(isKey: false))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: throw syntax("a value")
        }
    }

    private mutating func object(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
        i += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            i += 1
            return .object(members)
        }
        while true {
            guard peek(UInt8(ascii: "\"")) else { throw syntax("a key in quotes") }
            let key = try string(isKey: true)
            path.append(.key(key))
            guard members[key] == nil else { throw .duplicateKey(JSONPath(path)) }
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw syntax("':' after the key") }
            i += 1
            skipWhitespace()
            members[key] = try value(depth: depth)
            path.removeLast()
            skipWhitespace()
            guard i < bytes.count else { throw syntax("',' or '}'") }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(members)
            }
            guard bytes[i] == UInt8(ascii: ",") else { throw syntax("',' or '}'") }
            try comma()
        }
    }

    private mutating func array(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
        i += 1  // [
        var items: [JSONValue] = []
        skipWhitespace()
        if peek(UInt8(ascii: "]")) {
            i += 1
            return .array(items)
        }
        while true {
            path.append(.index(items.count))
            items.append(try value(depth: depth))
            path.removeLast()
            skipWhitespace()
            guard i < bytes.count else { throw syntax("',' or ']'") }
            if bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            guard bytes[i] == UInt8(ascii: ",") else { throw syntax("',' or ']'") }
            try comma()
        }
    }

    /// Steps over the comma at `i` and the whitespace after it; a closing bracket next is a trailing comma.
    private mutating func comma() throws(JSONError) {
        let at = i
        i += 1
        skipWhitespace()
        if peek(UInt8(ascii: "}")) || peek(UInt8(ascii: "]")) { throw .trailingComma(line: line(at: at)) }
    }

    private mutating func literal(_ word: StaticString) throws(JSONError) {
        let expected = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard bytes.count - i >= expected.count,
              UnsafeRawBufferPointer(rebasing: bytes[i..<(i + expected.count)]).elementsEqual(expected) else {
            throw syntax("a value")
        }
        i += expected.count
    }

    // MARK: Numbers

    private mutating func number() throws(JSONError) -> JSONValue {
        let start = i
        var isPlainInteger = true
        if peek(UInt8(ascii: "-")) { i += 1 }
        if peek(UInt8(ascii: "0")) {
            i += 1
        } else {
            guard skipDigits() else { throw syntax("a digit") }
        }
        if peek(UInt8(ascii: ".")) {
            i += 1
            isPlainInteger = false
            guard skipDigits() else { throw syntax("a digit after '.'") }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            i += 1
            isPlainInteger = false
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { i += 1 }
            guard skipDigits() else { throw syntax("a digit in the exponent") }
        }
        let token = UnsafeRawBufferPointer(rebasing: bytes[start..<i])
        guard let value = JSONNumber.value(token, isPlainInteger: isPlainInteger) else {
            throw .unreadableValue(JSONPath(path))
        }
        return value
    }

    /// Steps over `[0-9]*`; false when there was not one digit.
    private mutating func skipDigits() -> Bool {
        let start = i
        while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
        return i > start
    }

    // MARK: Strings

    /// The string starting at the quote at `i`, escapes decoded.
    ///
    /// A value that is not a valid string is `unreadableValue` at its path; a key, a `syntax` error.
    private mutating func string(isKey: Bool) throws(JSONError) -> String {
        let token = try stringBytes(isKey: isKey)
        if let decoded = token.decoded { return String(decoding: decoded, as: UTF8.self) }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[token.raw]), as: UTF8.self)
    }

    /// A string of the text, checked: its bytes between the quotes, and the same decoded when it had escapes.
    package struct StringToken {
        let raw: Range<Int>
        let decoded: [UInt8]?

        func equals(_ other: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
            if let decoded { return decoded == other }
            return UnsafeRawBufferPointer(rebasing: bytes[raw]).elementsEqual(other)
        }
    }

    /// The string starting at the quote at `i`, its escapes decoded and all of it checked to be valid UTF-8
    /// (so `String(decoding:)` of it changes nothing). Nothing is copied for a string without escapes.
    private mutating func stringBytes(isKey: Bool) throws(JSONError) -> StringToken {
        let start = i
        i += 1  // "
        var decoded: [UInt8] = []
        var run = i  // start of the bytes not yet copied to `decoded`
        var invalid = false
        scan: while true {
            guard i < bytes.count else { throw syntax("'\"' to end the string") }
            switch bytes[i] {
            case UInt8(ascii: "\""):
                break scan
            case UInt8(ascii: "\\"):
                decoded += UnsafeRawBufferPointer(rebasing: bytes[run..<i])
                guard escape(into: &decoded) else {
                    invalid = true
                    break scan
                }
                run = i
            case 0..<0x20:
                invalid = true
                break scan
            default:
                i += 1
            }
        }
        var token: StringToken?
        if !invalid {
            if decoded.isEmpty {
                let raw = (start + 1)..<i
                if UTF8Validation.isValid(UnsafeRawBufferPointer(rebasing: bytes[raw])) { token = StringToken(raw: raw, decoded: nil) }
            } else {
                decoded += UnsafeRawBufferPointer(rebasing: bytes[run..<i])
                if UTF8Validation.isValid(decoded) { token = StringToken(raw: (start + 1)..<i, decoded: decoded) }
            }
        }
        guard let token else {
            if isKey { throw .syntax(line: line(at: start), expected: "a key that is a valid string") }
            throw .unreadableValue(JSONPath(path))
        }
        i += 1  // "
        return token
    }

    /// Decodes the escape at `i` (a backslash) into `out` as UTF-8; false when it is not a valid one.
    private mutating func escape(into out: inout [UInt8]) -> Bool {
        guard i + 1 < bytes.count else { return false }
        let letter = bytes[i + 1]
        i += 2
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(letter)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0c)
        case UInt8(ascii: "n"): out.append(0x0a)
        case UInt8(ascii: "r"): out.append(0x0d)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            guard let first = hex4() else { return false }
            var value = UInt32(first)
            if (0xd800...0xdbff).contains(first) {
                // A high surrogate counts only with a low one right after it.
                guard peek(UInt8(ascii: "\\")), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "u") else { return false }
                i += 2
                guard let second = hex4(), (0xdc00...0xdfff).contains(second) else { return false }
                value = 0x10000 + ((UInt32(first) - 0xd800) << 10) + (UInt32(second) - 0xdc00)
            }
            guard let scalar = Unicode.Scalar(value) else { return false }  // a lone low surrogate
            UTF8.encode(scalar) { out.append($0) }
        default:
            return false
        }
        return true
    }

    /// The four hex digits at `i`, stepped over; nil when they are not four hex digits.
    private mutating func hex4() -> UInt16? {
        guard bytes.count - i >= 4 else { return nil }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[i]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt16(digit)
            i += 1
        }
        return value
    }

    // MARK: Looking up members (JSONLookup.swift)

    package mutating func lookupDocument(_ paths: [[[UInt8]]]) throws(JSONError) -> [JSONValue?] {
        skipByteOrderMark()
        skipWhitespace()
        var found = [JSONValue?](repeating: nil, count: paths.count)
        try lookup(paths, Array(paths.indices), level: 0, depth: 0, into: &found)
        skipWhitespace()
        guard i == bytes.count else { throw syntax("the end of the text") }
        return found
    }

    /// Reads the value at `i` for the paths in `active`, which agree up to `level`: built whole for those that
    /// end here, walked into for those that go on, skipped (but checked) otherwise.
    private mutating func lookup(_ paths: [[[UInt8]]], _ active: [Int], level: Int, depth: Int,
                                 into found: inout [JSONValue?]) throws(JSONError) {
        if active.contains(where: { paths[$0].count == level }) {
            let value = try value(depth: depth)
            for k in active { found[k] = value.member(at: paths[k][level...]) }
            return
        }
        guard !active.isEmpty, peek(UInt8(ascii: "{")) else { return try skipValue(depth: depth) }
        guard depth + 1 <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
        i += 1  // {
        skipWhitespace()
        if peek(UInt8(ascii: "}")) {
            i += 1
            return
        }
        var seen: [[UInt8]] = []
        while true {
            guard peek(UInt8(ascii: "\"")) else { throw syntax("a key in quotes") }
            let key = try stringBytes(isKey: true)
            // Most keys match no path (a record of many slots, one asked for): no array made for them.
            let first = active.firstIndex { key.equals(paths[$0][level], in: bytes) }
            let matching = first.map { f in active[f...].filter { key.equals(paths[$0][level], in: bytes) } } ?? []
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else { throw syntax("':' after the key") }
            i += 1
            skipWhitespace()
            if matching.isEmpty {
                try skipValue(depth: depth + 1)
            } else {
                let name = paths[matching[0]][level]
                path.append(.key(String(decoding: name, as: UTF8.self)))
                guard !seen.contains(name) else { throw .duplicateKey(JSONPath(path)) }
                seen.append(name)
                try lookup(paths, matching, level: level + 1, depth: depth + 1, into: &found)
                path.removeLast()
            }
            skipWhitespace()
            guard i < bytes.count else { throw syntax("',' or '}'") }
            if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return
            }
            guard bytes[i] == UInt8(ascii: ",") else { throw syntax("',' or '}'") }
            try comma()
        }
    }

    /// Steps over the value at `i`, checking it as `value(depth:)` does, building nothing.
    private mutating func skipValue(depth: Int) throws(JSONError) {
        guard i < bytes.count else { throw syntax("a value") }
        switch bytes[i] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let closing = bytes[i] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let isObject = closing == UInt8(ascii: "}")
            guard depth + 1 <= maximumDepth else { throw .tooDeep(limit: maximumDepth) }
            i += 1
            skipWhitespace()
            if peek(closing) {
                i += 1
                return
            }
            while true {
                if isObject {
                    guard peek(UInt8(ascii: "\"")) else { throw syntax("a key in quotes") }
                    _ = try stringBytes(isKey: true)
                    skipWhitespace()
                    guard peek(UInt8(ascii: ":")) else { throw syntax("':' after the key") }
                    i += 1
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                guard i < bytes.count else { throw syntax(isObject ? "',' or '}'" : "',' or ']'") }
                if bytes[i] == closing {
                    i += 1
                    return
                }
                guard bytes[i] == UInt8(ascii: ",") else { throw syntax(isObject ? "',' or '}'" : "',' or ']'") }
                try comma()
            }
        case UInt8(ascii: "\""): _ = try stringBytes(isKey: false)
        default: _ = try value(depth: depth)  // a number or a literal: nothing to build worth sparing
        }
    }

    // MARK: Bytes

    private func peek(_ byte: UInt8) -> Bool {
        i < bytes.count && bytes[i] == byte
    }

    private mutating func skipWhitespace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0a, 0x0d: i += 1
            default: return
            }
        }
    }

    /// The line (from 1) that holds the byte at `offset`.
    private func line(at offset: Int) -> Int {
        1 + UnsafeRawBufferPointer(rebasing: bytes[..<min(offset, bytes.count)]).reduce(0) { $0 + ($1 == 0x0a ? 1 : 0) }
    }

    private func syntax(_ expected: String) -> JSONError {
        .syntax(line: line(at: i), expected: expected)
    }
}
