#if canImport(Glibc)
import Glibc
#endif
import JSON
import GateProtocol
import Slots
import VaultRules

/// The last `askpass` delivery of each slot, so that an asking program that comes back for the same thing
/// counts as having rejected what it was given.
///
/// ssh-add with a wrong passphrase in the slot calls its askpass program again and again; each call is a
/// delivery that succeeded as far as vaultctl can see. A request that repeats the last delivery of its slot
/// (the same PROMPT from the same asking process, the parent identified by pid and kernel start time, so a
/// later process with the same pid is not taken for it) within `windowSeconds` means the consumer did not
/// accept it: that delivery counts as a failed attempt, once, and the rate limit ends the loop.
///
/// Kept in `<state>/askpass-last.json` (0600, written atomically under a lock): per slot, the time of the
/// delivery and a keyed BLAKE2b fingerprint of the request under a random salt kept in the same file. No
/// secret, no PROMPT text. A parent whose start time cannot be read is never matched (nothing is counted).
public struct AskpassRepeats: Sendable {
    /// How soon after a delivery a repeat of it counts: an asking program retries at once; a person who runs
    /// the same command again on purpose after half a minute is not counted.
    public static let windowSeconds: Double = 30

    let file: StateFile<Document>
    let clock: any Clock

    public init(stateFolder: String, clock: any Clock = SystemClock()) {
        file = StateFile(folder: stateFolder, name: "askpass-last.json", empty: Document())
        self.clock = clock
    }

    /// One askpass request: the slot, the prompt the asking program passed, and that program.
    public struct Request: Sendable {
        let slot: SlotName
        let prompt: String
        let parentPid: Int32
        let parentStart: UInt64?

        public init(slot: SlotName, prompt: String, parentPid: Int32, parentStart: UInt64?) {
            self.slot = slot
            self.prompt = prompt
            self.parentPid = parentPid
            self.parentStart = parentStart
        }

        /// This process's request: its parent is the asking program (the README's wrappers `exec` vaultctl).
        public static func current(slot: SlotName, prompt: String) -> Request {
            let parent = getppid()
            return Request(slot: slot, prompt: prompt, parentPid: parent, parentStart: AttemptMarkers.startTime(of: parent))
        }

        /// The fingerprint of everything that identifies the request, keyed with `salt`.
        func fingerprint(salt: SecretBytes) -> String? {
            guard let parentStart else { return nil }
            let text = "\(slot.rawValue)\u{0}\(parentPid)\u{0}\(parentStart)\u{0}\(prompt)"
            let digest = Array(text.utf8).withUnsafeBytes { Hashing.keyedHash(message: $0, key: salt) }
            return Hex.encode(digest)
        }
    }

    /// Whether `request` repeats its slot's last delivery within the window. A repeat forgets that delivery,
    /// so one rejected delivery is counted once however often it is asked for again.
    public func isRepeat(_ request: Request) throws(VaultError) -> Bool {
        try file.update { (doc) throws(SlotError) -> Bool in
            let now = clock.now()
            doc.prune(now: now)
            guard let salt = doc.salt.flatMap(Hex.decode), let mine = request.fingerprint(salt: salt),
                  let last = doc.slots[request.slot.rawValue], last.request == mine else { return false }
            doc.slots[request.slot.rawValue] = nil
            return true
        }
    }

    /// Notes that `request` was answered (the secret went to standard output).
    public func delivered(_ request: Request) throws(VaultError) {
        try file.update { (doc) throws(SlotError) in
            let now = clock.now()
            doc.prune(now: now)
            if doc.salt.flatMap(Hex.decode) == nil { doc.salt = Hex.encode(SecretBytes.random(count: 32)) }
            guard let salt = doc.salt.flatMap(Hex.decode), let mine = request.fingerprint(salt: salt) else {
                doc.slots[request.slot.rawValue] = nil
                return
            }
            doc.slots[request.slot.rawValue] = Delivered(time: now, request: mine)
        }
    }

    /// `{"version": 1, "salt": HEX, "slots": {"NAME": {"time": T, "request": HEX}}}`.
    struct Document: JSONDocument {
        var version = 1
        var salt: String?
        var slots: [String: Delivered] = [:]

        init() {}

        package init(json: JSONValue) throws(JSONError) {
            let fields = try JSONFields(json, "the askpass record")
            version = try fields.required("version", \.intValue)
            salt = try fields.optional("salt", \.stringValue)
            let members = try fields.required("slots", \.objectValue)
            for (name, value) in members { slots[name] = try Delivered(json: value) }
        }

        package var json: JSONValue {
            .object(dropping: [
                "version": .integer(version),
                "salt": salt.map(JSONValue.string),
                "slots": .object(slots.mapValues(\.json)),
            ])
        }

        /// Drops deliveries outside the window (and any from the future: a clock set back).
        mutating func prune(now: Double) {
            slots = slots.filter { now - $0.value.time < AskpassRepeats.windowSeconds && $0.value.time <= now }
        }
    }

    struct Delivered: JSONDocument {
        var time: Double
        var request: String

        init(time: Double, request: String) {
            self.time = time
            self.request = request
        }

        package init(json: JSONValue) throws(JSONError) {
            let fields = try JSONFields(json, "an askpass delivery")
            time = try fields.required("time", \.doubleValue)
            request = try fields.required("request", \.stringValue)
        }

        package var json: JSONValue { .object(["time": JSONValue(time), "request": .string(request)]) }
    }
}
