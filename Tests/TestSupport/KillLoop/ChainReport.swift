/// What one chain of a kill loop (`KillLoop`) saw: counts, what it found wrong (checked on the test's own thread,
/// where `#expect` belongs), and the states the kills left.
public struct ChainReport: Sendable {
    public var name = ""
    public var done = 0, killed = 0, finished = 0
    public var problems: [String] = []
    public var states: [String: Int] = [:]
    public var notes: [String: Int] = [:]
    public var mostTempFiles = 0

    public init(name: String = "") { self.name = name }

    public mutating func problem(_ text: String) { problems.append(text) }
    public mutating func note(_ key: String) { notes[key, default: 0] += 1 }

    /// Sums of several chains, for one summary line.
    public static func merged(_ reports: [ChainReport]) -> ChainReport {
        var all = ChainReport()
        for r in reports {
            all.done += r.done
            all.killed += r.killed
            all.finished += r.finished
            all.problems += r.problems
            all.mostTempFiles = max(all.mostTempFiles, r.mostTempFiles)
            for (k, v) in r.states { all.states[k, default: 0] += v }
            for (k, v) in r.notes { all.notes[k, default: 0] += v }
        }
        return all
    }

    public static func describe(_ counts: [String: Int]) -> String {
        counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
    }
}

/// Describes bytes that should be one of several known values, for failure messages.
public func describeValue(_ bytes: [UInt8], among values: [String: [UInt8]]) -> String {
    if let (tag, _) = values.first(where: { $0.value == bytes }) { return "value \(tag)" }
    if bytes.isEmpty { return "nothing" }
    let head = String(decoding: bytes.prefix(24), as: UTF8.self).debugDescription
    return "\(bytes.count) bytes matching no stored value (starting \(head))"
}
