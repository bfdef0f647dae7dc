#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A quick pass over raw JSON bytes for what `JSONDecoder` does not report: how deep the document nests,
/// the first key that appears twice in one object, and a comma right before `}` or `]` (which
/// swift-foundation's `JSONDecoder` accepts, and strict JSON readers such as `jq` do not).
///
/// It runs before the decoder, so a hostile document never reaches the decoder's recursion deeper than
/// `maximumDepth`. It is tolerant: it follows strings (with their escapes) and brackets only, and leaves
/// every other judgement of validity to `JSONDecoder`. Keys are compared by their decoded text, so
/// `"a"` and `"\u0061"` are the same key. It never reads past the buffer and never traps.
struct JSONShape {
    /// Deepest nesting of arrays and objects a document may have.
    static let maximumDepth = 32

    /// True when arrays and objects nest deeper than `maximumDepth`; scanning stopped there.
    private(set) var tooDeep = false
    /// The path of the first repeated key (`rateLimit.failures`), or nil.
    private(set) var duplicateKeyPath: String?
    /// The line (from 1) of the first comma followed by `}` or `]`, or nil.
    private(set) var trailingCommaLine: Int?

    private struct Frame {
        let isObject: Bool
        var expectingKey: Bool
        var keys: Set<String> = []
        /// The key whose value is being read (objects).
        var currentKey = ""
        /// The position of the element being read (arrays).
        var index = 0
    }

    init(_ bytes: UnsafeRawBufferPointer) {
        var frames: [Frame] = []
        var i = 0
        var line = 1
        let n = bytes.count
        scan: while i < n {
            switch bytes[i] {
            case UInt8(ascii: "\""):
                var j = i + 1
                while j < n, bytes[j] != UInt8(ascii: "\"") {
                    j += bytes[j] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard j < n else { break scan }  // unterminated: the decoder says so
                if let top = frames.indices.last, frames[top].isObject, frames[top].expectingKey {
                    frames[top].expectingKey = false
                    if let key = JSONShape.decodeKey(bytes, from: i, through: j) {
                        if frames[top].keys.contains(key), duplicateKeyPath == nil {
                            duplicateKeyPath = JSONShape.path(frames.dropLast(), key)
                        }
                        frames[top].keys.insert(key)
                        frames[top].currentKey = key
                    }
                }
                i = j + 1
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard frames.count < JSONShape.maximumDepth else {
                    tooDeep = true
                    break scan
                }
                let isObject = bytes[i] == UInt8(ascii: "{")
                frames.append(Frame(isObject: isObject, expectingKey: isObject))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !frames.isEmpty { frames.removeLast() }
            case UInt8(ascii: "\n"):
                line += 1
            case UInt8(ascii: ","):
                if trailingCommaLine == nil, let next = JSONShape.nextNonWhitespace(bytes, after: i),
                   next == UInt8(ascii: "}") || next == UInt8(ascii: "]") {
                    trailingCommaLine = line
                }
                if let top = frames.indices.last {
                    if frames[top].isObject { frames[top].expectingKey = true } else { frames[top].index += 1 }
                }
            default:
                break
            }
            i += 1
        }
    }

    private static func nextNonWhitespace(_ bytes: UnsafeRawBufferPointer, after i: Int) -> UInt8? {
        var j = i + 1
        while j < bytes.count {
            switch bytes[j] {
            case 0x20, 0x0a, 0x0d, 0x09: j += 1
            default: return bytes[j]
            }
        }
        return nil
    }

    /// The text of the string token `bytes[start...end]` (quotes included), escapes decoded.
    private static func decodeKey(_ bytes: UnsafeRawBufferPointer, from start: Int, through end: Int) -> String? {
        let token = UnsafeRawBufferPointer(rebasing: bytes[start...end])
        if !token.contains(UInt8(ascii: "\\")) {
            return String(decoding: UnsafeRawBufferPointer(rebasing: token.dropFirst().dropLast()), as: UTF8.self)
        }
        return try? JSONDecoder().decode(String.self, from: Data(token))
    }

    private static func path(_ parents: ArraySlice<Frame>, _ key: String) -> String {
        var path = ""
        // The outermost frame is the document itself; each deeper one is named by where it sits in its parent.
        for frame in parents {
            path = frame.isObject ? join(path, frame.currentKey) : "\(path)[\(frame.index)]"
        }
        return join(path, key)
    }

    private static func join(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }
}
