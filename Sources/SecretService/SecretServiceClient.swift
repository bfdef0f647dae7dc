#if canImport(Glibc)
import Glibc
#endif
import Slots

/// The Secret Service API (org.freedesktop.Secret.*) over one bus connection, one per process.
///
/// The first operation connects and says `Hello`; the `default` alias is resolved alongside the first search
/// (or on its own, before the first operation that needs the default collection); the key exchange happens
/// once, alongside the first search of a command that moves a value (for a gated read, the look before the
/// password prompt). Replies the provider owes us
/// are pipelined wherever they do not depend on each other. A connection that failed or timed out is not
/// tried again in this process: the same answer comes back at once, so a command that asks several times
/// still finishes within one timeout. Not `Sendable`: it lives inside `shared`'s mutex.
final class SecretServiceClient {
    static let destination = "org.freedesktop.secrets"
    static let servicePath = "/org/freedesktop/secrets"
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"

    /// What an operation may throw: a failure of the bus (described by `shared`), or a slot error as it is.
    enum Failure: Error {
        case bus(DBusError)
        case slot(SlotError)
    }

    /// An item of ours and whether it sits locked.
    struct Item: Equatable {
        let path: String
        let locked: Bool
    }

    private let bus: BusConnection
    /// The process name of the provider's process (`/proc/PID/comm`: `keepassxc`, `gnome-keyring-d`), as the
    /// bus said at connect time; nil when it could not be read.
    let provider: Provider?
    /// The default collection's object path, once the `default` alias was resolved (`defaultCollection()`).
    private var collectionPath: String?
    private var session: (path: String, key: SessionKey)?
    private var deadline: Deadline
    /// Seconds one operation's bus exchanges may take (the slot's timeout), renewed after a prompt.
    private var timeout: Double = 5
    /// When the prompts of the current operation must be answered by: all of them share one bound.
    private var promptDeadline: Deadline?
    /// The last search's answer (see `recentItems`); forgotten when this process changes anything.
    private var lastFound: (name: SlotName, items: [Item])?
    /// How many operations `shared` ran on this client: a kept look is offered only to the operation right
    /// after it.
    private var operations = 0
    /// The unlocked item the look before a read chose (`itemBeforeRead`), with the operation that looked.
    /// Only the next operation, a read of the same slot, may use it (`secretFoundBeforeRead`), and only once.
    private var keptForRead: (name: SlotName, path: String, operation: Int)?

    private init(bus: BusConnection, deadline: Deadline, provider: Provider?) {
        self.bus = bus
        self.deadline = deadline
        self.provider = provider
    }

    // MARK: - One client per process

    private enum State {
        case none
        case connected(SecretServiceClient)
        /// The bus or the provider failed; the same error for the rest of the process.
        case failed(SlotError)
        /// No connection could be made; the same failure for the rest of the process, told in the words of
        /// each operation that asks (the first may have been `SecretServiceSlot.connectAhead`).
        case unconnected(Failure)
    }

    /// Guarded by `lock`. `nonisolated(unsafe)`: the lock, not the compiler, keeps it to one thread at a
    /// time (a `Mutex` would have to prove the client's replies disconnected from it, and a `SecretBytes`
    /// read through the client cannot be).
    nonisolated(unsafe) private static var state = State.none
    nonisolated(unsafe) private static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(m, nil)
        return m
    }()

    /// Runs `body` with the process's client, within `timeout` seconds from now.
    static func shared<T>(timeout: Double, _ what: String, changes: Bool,
                          _ body: (SecretServiceClient) throws(Failure) -> T) throws(SlotError) -> T {
        // One bound from the call on, the wait for the client's lock included: an operation never waits
        // longer than `timeout` in all, even behind `SecretServiceSlot.connectAhead`'s connection.
        let deadline = Deadline(secondsFromNow: timeout)
        var until = timespec()
        clock_gettime(CLOCK_REALTIME, &until)
        let nanoseconds = Int(until.tv_nsec) + Int(deadline.remainingMilliseconds) * 1_000_000
        until.tv_sec += nanoseconds / 1_000_000_000
        until.tv_nsec = nanoseconds % 1_000_000_000
        guard pthread_mutex_timedlock(lock, &until) == 0 else {
            throw describe(.bus(.timedOut), what, changes: false, timeout: timeout)
        }
        defer { pthread_mutex_unlock(lock) }
        let outcome: Result<T, SlotError> = {
            let client: SecretServiceClient
            switch state {
            case .failed(let error):
                return .failure(error)
            case .unconnected(let failure):
                return .failure(describe(failure, what, changes: false, timeout: timeout))
            case .connected(let c):
                client = c
                client.deadline = deadline
            case .none:
                do throws(Failure) {
                    client = try connect(deadline: deadline)
                } catch {
                    state = .unconnected(error)
                    return .failure(describe(error, what, changes: false, timeout: timeout))
                }
                state = .connected(client)
            }
            client.timeout = timeout
            client.promptDeadline = nil
            client.operations += 1
            do throws(Failure) {
                return .success(try body(client))
            } catch {
                let e = describe(error, what, changes: changes, timeout: timeout)
                if case .bus(let b) = error, b.breaksConnection { state = .failed(e) }
                return .failure(e)
            }
        }()
        return try outcome.get()
    }

    private static func connect(deadline: Deadline) throws(Failure) -> SecretServiceClient {
        var bus: BusConnection
        do { bus = try BusConnection.open(deadline: deadline) } catch { throw .bus(error) }
        // The provider's Ping (`waitUntilTheProviderKnowsThisConnection`) goes out in the same trip as the bus's
        // answer to who the provider is: one round trip for both. A provider that names its clients by their
        // executables gets a connection whose process it can read (BusConnector), pinged in turn; this first
        // one is then closed unused (its Ping is answered by the provider's D-Bus library alone).
        let (process, replies): (String?, [Reply])
        do {
            (process, replies) = try bus.askProviderProcessName(alongside: [ping], destination: destination, deadline: deadline)
        } catch { throw .bus(error) }
        let provider = process.map(Provider.init(processName:))
        if provider?.namesClientsByExecutable == true, let seen = bus.reopenedThroughConnector(deadline: deadline) {
            let client = SecretServiceClient(bus: seen, deadline: deadline, provider: provider)
            try client.waitUntilTheProviderKnowsThisConnection()
            return client
        }
        try pinged(replies[0])
        return SecretServiceClient(bus: bus, deadline: deadline, provider: provider)
    }

    /// A first call on the new connection, answered before anything else is sent.
    ///
    /// gnome-keyring (42.1) registers a new client from an idle callback. A call it handles before that
    /// callback ran finds no client: `OpenSession` then answers with a null value and the daemon dies
    /// (`GLib-ERROR: g_variant_new: expected GVariant of type 'v' but received value has type '(null)'`),
    /// and a `Properties.Get` of a collection or item aborts it; under parallel clients this crashed it
    /// within seconds, and the daemon started again on demand comes up locked. A `Peer.Ping` whose answer
    /// is waited for lets that callback run first (docs/gnome-keyring-crash/README.md has the cause,
    /// the measurements and a reproducer). One round trip per process, shared with the bus's answer in
    /// `connect`; every provider's D-Bus library answers `Peer` by itself, and one that does not is taken as
    /// answered.
    private func waitUntilTheProviderKnowsThisConnection() throws(Failure) {
        try Self.pinged(callAll([Self.ping])[0])
    }

    private static let ping = method(servicePath, "org.freedesktop.DBus.Peer", "Ping")

    /// The Ping's answer: an error only when it is not "unknown method" (a provider that does not answer `Peer`).
    private static func pinged(_ reply: Reply) throws(Failure) {
        if case .failure(.remote(let name, _)) = reply, name.hasPrefix("org.freedesktop.DBus.Error.Unknown") { return }
        _ = try values(reply)
    }

    // MARK: - The default collection

    private static let readAlias = method(servicePath, serviceInterface, "ReadAlias", [.string("default")])

    private static func aliasPath(_ reply: Reply) throws(Failure) -> String {
        guard let path = try values(reply).first?.objectPath else { throw .bus(.protocolError("the provider answered ReadAlias with something else")) }
        return path
    }

    /// The default collection's object path, resolving the `default` alias the first time.
    ///
    /// gnome-keyring registers a new client from an idle callback, and a first call that it handles before
    /// that callback runs finds no collection ("/", with a CRITICAL in its log). Rare, and only for the
    /// first calls of a connection: asking again a moment later tells it from "no default collection".
    func defaultCollection() throws(Failure) -> String {
        if let collectionPath { return collectionPath }
        var path = try Self.aliasPath(callAll([Self.readAlias])[0])
        for pause in [10_000, 40_000] as [UInt32] where path == "/" && deadline.remainingMilliseconds > 100 {
            usleep(pause)
            path = try Self.aliasPath(callAll([Self.readAlias])[0])
        }
        guard path != "/" else {
            throw .slot(.serviceUnavailable("the provider has no default collection (create or choose a default keyring, for example in Seahorse)"))
        }
        collectionPath = path
        return path
    }

    /// `calls` (calls that do not name the default collection), with the `default` alias resolved in the same
    /// trip when it is not yet: one round trip fewer for the first operation. The provider answers a
    /// connection's calls in order, so an alias that resolves vouches for the calls after it; one that does
    /// not (no default collection, or the first-call race above, which the Ping at connect time now keeps
    /// away) is resolved on its own and the calls asked again.
    private func callAllResolvingAlias(_ calls: [BusCall]) throws(Failure) -> [Reply] {
        guard collectionPath == nil else { return try callAll(calls) }
        let replies = try callAll([Self.readAlias] + calls)
        let path = try Self.aliasPath(replies[0])
        if path != "/" {
            collectionPath = path
            return Array(replies.dropFirst())
        }
        _ = try defaultCollection()
        return try callAll(calls)
    }

    /// The words for a failure.
    private static func describe(_ failure: Failure, _ what: String, changes: Bool, timeout: Double) -> SlotError {
        switch failure {
        case .slot(let e):
            return e
        case .bus(let e):
            switch e {
            case .libraryUnavailable(let why):
                return .serviceUnavailable("vaultctl could not load libsystemd, which it talks to the session bus with, or a library it needs (\(why)); install libsystemd and what it depends on (Debian: libsystemd0)")
            case .noAddress:
                // After `su -`, ssh or on a console there is often no session bus: say which variable is missing.
                let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) } ?? ""
                return .serviceUnavailable(runtime.isEmpty
                    ? "there is no D-Bus session bus (neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set, as after 'su -'; 'dbus-run-session -- bash' starts a shell with one)"
                    : "there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and \(runtime)/bus is not there; 'dbus-run-session -- bash' starts a shell with one)")
            case .badAddress(let fromEnvironment):
                return .serviceUnavailable(fromEnvironment
                    ? "DBUS_SESSION_BUS_ADDRESS is not a D-Bus address vaultctl can use"
                    : "the session bus address is not valid")
            case .cannotConnect(let why):
                return .serviceUnavailable("the session bus did not answer (\(why))")
            case .authenticationRejected:
                return .serviceUnavailable("the session bus refused vaultctl's credentials or closed the connection before accepting vaultctl (is it another user's bus?) (while \(what))")
            case .timedOut:
                return .serviceUnavailable("it did not answer within \(Int(timeout)) s while \(what)"
                    + (changes ? " (the change may still have been made; check with 'vaultctl status')" : ""))
            case .disconnected:
                return .serviceUnavailable("the session bus closed the connection while \(what)")
            case .protocolError(let why):
                return .serviceUnavailable("\(why) (while \(what))")
            case .remote(let name, let message):
                switch name {
                case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
                    return .serviceUnavailable("no Secret Service provider is running on the session bus (start gnome-keyring, KeePassXC's Secret Service integration, or another provider)")
                case "org.freedesktop.Secret.Error.IsLocked":
                    return .locked("the collection is locked (while \(what)); unlock your keyring and try again")
                case "org.freedesktop.DBus.Error.NoReply" where message.split(separator: " ").contains("disconnected"):
                    // The bus daemon's words when the provider left the bus with the call unanswered. (Split into
                    // words: String.contains(String) would link _StringProcessing, 2 MiB of regex engine.)
                    return .serviceUnavailable("the Secret Service provider stopped (crashed?) during the call, while \(what)"
                        + (changes ? " (the change may or may not have been made; check with 'vaultctl status')" : "")
                        + "; a provider started again on demand may come up locked")
                default:
                    // The provider's own words, kept to one line of printable text.
                    return .serviceUnavailable("\(SlotErrorText.oneLine(message)) (while \(what))")
                }
            }
        }
    }

    // MARK: - Calls

    /// One call's answer: its values, or the error it got.
    typealias Reply = Result<[DBusValue], DBusError>

    private static func values(_ result: Reply) throws(Failure) -> [DBusValue] {
        switch result {
        case .success(let v): return v
        case .failure(let e): throw .bus(e)
        }
    }

    private func callAll(_ calls: [BusCall]) throws(Failure) -> [Reply] {
        do { return try bus.callAll(calls, destination: Self.destination, deadline: deadline) } catch { throw .bus(error) }
    }

    private func call(_ m: BusCall) throws(Failure) -> [DBusValue] {
        try Self.values(callAll([m])[0])
    }

    private static func method(_ path: String, _ interface: String, _ member: String, _ args: [DBusValue] = []) -> BusCall {
        BusCall(path, interface, member, args)
    }

    private static func getProperty(_ path: String, _ interface: String, _ name: String) -> BusCall {
        BusCall(path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
    }

    /// The key exchange's first half: our public key, for the session algorithm.
    private static func openSession(_ exchange: SessionKeyExchange) -> BusCall {
        method(servicePath, serviceInterface, "OpenSession",
               [.string(SessionKeyExchange.algorithm), .variant(.bytes(exchange.publicKey))])
    }

    /// A collection's `Locked` property.
    private static func lockedProperty(_ collection: String) -> BusCall { getProperty(collection, collectionInterface, "Locked") }

    /// The answer to `collectionLocked`.
    private static func lockedState(_ reply: Reply) throws(Failure) -> Bool {
        guard let locked = try values(reply).first?.unwrapped.bool else {
            throw .bus(.protocolError("the provider's collection has no Locked property"))
        }
        return locked
    }

    /// A search of every collection for items with `attributes` (`Service.SearchItems`, as libsecret does):
    /// a value in a collection other than the default one is still there.
    private static func search(_ attributes: [(String, String)]) -> BusCall {
        method(servicePath, serviceInterface, "SearchItems", [DBusValue.stringDictionary(attributes)])
    }

    /// What `search` found: the unlocked items, then the locked ones (the provider sorts them). gnome-keyring
    /// finds items in a locked collection; KeePassXC finds none there. Nothing found while some collection is
    /// locked is therefore "could not look", never "empty" (one more trip, only when nothing was found).
    private func searched(_ reply: Reply, collections: Reply) throws(Failure) -> [Item] {
        let v = try Self.values(reply)
        guard v.count == 2, let unlocked = v[0].objectPaths, let locked = v[1].objectPaths else {
            throw .bus(.protocolError("the provider answered SearchItems with something else"))
        }
        let found = unlocked.map { Item(path: $0, locked: false) } + locked.map { Item(path: $0, locked: true) }
        if found.isEmpty, try someCollectionIsLocked(Self.collections(collections)) { throw .slot(Self.lockedCollection) }
        return found
    }

    /// The provider's collections (`Service.Collections`), asked in the same trip as a search.
    private static let collectionsProperty = getProperty(servicePath, serviceInterface, "Collections")

    private static func collections(_ reply: Reply) throws(Failure) -> [String] {
        guard let paths = try values(reply).first?.unwrapped.objectPaths else {
            throw .bus(.protocolError("the provider's service has no Collections property"))
        }
        return paths
    }

    // MARK: - Searching a provider that may ask to unlock first

    /// Whether a search across every collection may make this provider ask the person to unlock something.
    ///
    /// KeePassXC (2.7) answers `Service.SearchItems` while no database is unlocked by showing its unlock
    /// dialog and holding the answer until the person unlocks or cancels ("Prompt to unlock database before
    /// searching", `FdoSecrets/UnlockBeforeSearch`, on by default; `Service::searchItems` in its
    /// src/fdosecrets/objects/Service.cpp): a `status` or `list` would show a dialog and wait out its bound. Its
    /// `Collection.SearchItems` never asks (a locked database answers nothing), so vaultctl reads which
    /// collections are locked first and searches each one on its own. gnome-keyring and the specification's
    /// `SearchItems` never prompt: one call across every collection, as libsecret does.
    var searchMayPrompt: Bool { provider?.searchMayPrompt ?? false }

    /// A collection as `searchCollectionByCollection` saw it.
    struct CollectionSeen {
        let path: String
        let locked: Bool
        /// Its label as shown (`shownLabel`), when asked for.
        let label: String?
    }

    /// The items with `attributes` in every collection, asked so that nothing can prompt: the collections
    /// (with `extra` calls, such as the key exchange, in the same trip, their replies given back), then each
    /// one's `Locked` (and `Label`, with `labels`) and its own `Collection.SearchItems` in one trip, then,
    /// with `itemLocks`, each found item's own `Locked` (KeePassXC's "confirm access" locks items, per
    /// client, in an unlocked collection) in a third, only when something was found. An item of a locked
    /// collection is locked. A collection or item gone meanwhile is passed over. Items come unlocked first, as
    /// `Service.SearchItems` gives them.
    func searchCollectionByCollection(_ attributes: [(String, String)], extra: [BusCall] = [], labels: Bool = false,
                                      itemLocks: Bool = true) throws(Failure) -> (items: [Item], collections: [CollectionSeen], extra: [Reply]) {
        let first = try callAllResolvingAlias([Self.collectionsProperty] + extra)
        let paths = try Self.collections(first[0])
        let n = paths.count
        let answers = try callAll(paths.map(Self.lockedProperty)
                                  + (labels ? paths.map { Self.getProperty($0, Self.collectionInterface, "Label") } : [])
                                  + paths.map { Self.method($0, Self.collectionInterface, "SearchItems", [DBusValue.stringDictionary(attributes)]) })
        var collections: [CollectionSeen] = []
        var found: [(path: String, inLocked: Bool)] = []
        for (i, path) in paths.enumerated() {
            let search = answers[(labels ? 2 : 1) * n + i]
            if case .failure(.remote(let name, _)) = answers[i], Self.isGone(name) { continue }
            if case .failure(.remote(let name, _)) = search, Self.isGone(name) { continue }
            let locked = try Self.lockedState(answers[i])
            let label = labels ? Self.shownLabel((try? Self.values(answers[n + i]))?.first?.unwrapped.string ?? "", ofCollection: path) : nil
            collections.append(CollectionSeen(path: path, locked: locked, label: label))
            guard let items = try Self.values(search).first?.objectPaths else {
                throw .bus(.protocolError("the provider answered Collection.SearchItems with something else"))
            }
            found += items.map { ($0, locked) }
        }
        var items: [Item] = []
        let open = found.filter { !$0.inLocked }
        if itemLocks && !open.isEmpty {
            for (item, reply) in zip(open, try callAll(open.map { Self.getProperty($0.path, Self.itemInterface, "Locked") })) {
                if case .failure(.remote(let name, _)) = reply, Self.isGone(name) { continue }
                guard let locked = try Self.values(reply).first?.unwrapped.bool else {
                    throw .bus(.protocolError("the provider's item has no Locked property"))
                }
                items.append(Item(path: item.path, locked: locked))
            }
        } else {
            items = open.map { Item(path: $0.path, locked: false) }
        }
        items += found.filter(\.inLocked).map { Item(path: $0.path, locked: true) }
        items = items.filter { !$0.locked } + items.filter(\.locked)
        if items.isEmpty, collections.contains(where: \.locked) { throw .slot(Self.lockedCollection) }
        return (items, collections, Array(first.dropFirst()))
    }

    /// Whether any of `paths` is locked (each one's `Locked`, asked in one trip).
    private func someCollectionIsLocked(_ paths: [String]) throws(Failure) -> Bool {
        for reply in try callAll(paths.map { Self.getProperty($0, Self.collectionInterface, "Locked") }) {
            if case .failure(.remote(let name, _)) = reply, Self.isGone(name) { continue }
            if try Self.lockedState(reply) { return true }
        }
        return false
    }

    // MARK: - Operations

    /// Whether a search also opens the encrypted session (when there is none yet), in the same round trip.
    enum SessionOpening {
        case no
        /// For a read right after: a failed exchange fails the search.
        case now
        /// For a read after the presence gate: a failed exchange (no libgcrypt, a provider without the
        /// algorithm) is left for that read, which tries again and says why; the search stands.
        case ahead
    }

    /// The items of slot `name` in every collection, locked ones included, each with its own lock state (an
    /// item may be locked in an unlocked collection: KeePassXC's "confirm access"). With `openingSession`, the
    /// key exchange rides along when there is no session yet: one round trip for both.
    func items(slot name: SlotName, openingSession: SessionOpening = .no) throws(Failure) -> [Item] {
        var exchange: SessionKeyExchange?
        if session == nil {
            switch openingSession {
            case .no: break
            case .now: exchange = try Self.newExchange()
            case .ahead: exchange = try? Self.newExchange()
            }
        }
        let extra = exchange.map { [Self.openSession($0)] } ?? []
        let finish = { (reply: Reply) throws(Failure) in
            guard let exchange else { return }
            if openingSession == .ahead { try? self.finishSession(reply, exchange) } else { try self.finishSession(reply, exchange) }
        }
        let found: [Item]
        if searchMayPrompt {
            // The key exchange rides with the first trip; the search itself never prompts.
            let result = try searchCollectionByCollection(SecretServiceSlot.attributes(name), extra: extra)
            if let reply = result.extra.first { try finish(reply) }
            found = result.items
        } else {
            let replies = try callAllResolvingAlias([Self.search(SecretServiceSlot.attributes(name)), Self.collectionsProperty] + extra)
            if exchange != nil { try finish(replies[2]) }
            found = try searched(replies[0], collections: replies[1])
        }
        lastFound = (name, found)
        return found
    }

    /// The item a read of `name` would use (`newest`), found before the presence gate with the session
    /// opened in the same trip, and kept for that read when it is unlocked: after the gate the read then
    /// needs one round trip (`GetSecret` and the item's `Attributes`) instead of a second search, a key
    /// exchange and `GetSecret`.
    func itemBeforeRead(slot name: SlotName) throws(Failure) -> Item? {
        let item = try newest(items(slot: name, openingSession: .ahead))
        keptForRead = item.flatMap { $0.locked ? nil : (name, $0.path, operations) }
        return item
    }

    /// The value of the item `itemBeforeRead` kept for `name` in the operation just before this one (taken:
    /// offered once), or nil when there is none, or when the provider answers for it with an error (it was
    /// deleted, moved or locked while the person authenticated, or the provider started again) or says it
    /// no longer carries this slot's attributes (any program may change them): then the caller looks again,
    /// with a new key exchange in that search's trip. An item that is still there and still this slot's is
    /// read as it is now, so a value stored over it meanwhile is the one read; a second copy that another
    /// program added meanwhile (elsewhere) is not preferred over it, as it would be by a read that starts
    /// after that copy was added: a read that overlaps a change answers the old value or the new one.
    func secretFoundBeforeRead(slot name: SlotName) throws(Failure) -> SecretBytes? {
        let kept = keptForRead
        keptForRead = nil
        guard let kept, kept.name == name, kept.operation == operations - 1, let session else { return nil }
        let replies = try callAll([Self.getProperty(kept.path, Self.itemInterface, "Attributes"),
                                   Self.getSecret(kept.path, session: session.path)])
        let attributes = (try? Self.values(replies[0]))?.first?.unwrapped.stringPairs
        let stillOurs = attributes.map { a in SecretServiceSlot.attributes(name).allSatisfy { a[$0.0] == $0.1 } } ?? false
        switch replies[1] {
        case .success(let v) where stillOurs:
            return try Self.decrypt(v, of: kept.path, slot: name, key: session.key)
        case .failure(let error) where error.breaksConnection:
            throw .bus(error)
        default:
            // Nothing was decrypted. The session may be the reason (a provider that started again knows it no
            // more): the new search opens a new one in its own trip.
            self.session = nil
            return nil
        }
    }

    static let lockedCollection = SlotError.locked("a Secret Service collection is locked, so vaultctl cannot tell what it holds; unlock it and try again (gnome-keyring unlocks at your desktop login, and without one by 'gnome-keyring-daemon --replace --unlock --components=secrets' with the password on its standard input: the README's \"Without a desktop\"; KeePassXC when you open its database)")

    /// What the last `items(slot:)` of this process found for `name`, or a new search: for words about a
    /// place (status asks where a value is right after asking whether it is there), never for a decision.
    func recentItems(slot name: SlotName) throws(Failure) -> [Item] {
        if let lastFound, lastFound.name == name { return lastFound.items }
        return try items(slot: name)
    }

    /// The most recently modified item, when another program stored more than one.
    func newest(_ items: [Item]) throws(Failure) -> Item? {
        guard items.count > 1 else { return items.first }
        let replies = try callAll(items.map { Self.getProperty($0.path, Self.itemInterface, "Modified") })
        var best: (Item, UInt64)?
        for (item, reply) in zip(items, replies) {
            let modified = (try? Self.values(reply))?.first?.unwrapped.uint64 ?? 0
            // An unlocked copy before a locked one (it can be read without a prompt, as libsecret prefers), then
            // the newest; ties go to the smaller path, so every command picks the same one.
            let key = (item.locked ? 0 : 1, modified, item.path)
            if let b = best {
                let bestKey = (b.0.locked ? 0 : 1, b.1, b.0.path)
                if key.0 > bestKey.0 || (key.0 == bestKey.0 && (key.1 > bestKey.1 || (key.1 == bestKey.1 && key.2 < bestKey.2))) {
                    best = (item, modified)
                }
            } else {
                best = (item, modified)
            }
        }
        return best?.0
    }

    /// The collection that holds `item` (its parent object: providers name items below their collection, as
    /// the specification's examples do) and the labels of both, in one trip; an empty collection label is shown as the last part
    /// of its path, the provider's own name for it.
    func labels(item: String) throws(Failure) -> (collection: String?, item: String?) {
        let holder = item.split(separator: "/").dropLast().joined(separator: "/")
        let replies = try callAll([Self.getProperty(item, Self.itemInterface, "Label"),
                                   Self.getProperty("/" + holder, Self.collectionInterface, "Label")])
        let itemLabel = (try? Self.values(replies[0]))?.first?.unwrapped.string
        // A parent that answers no collection Label is not a collection this client can name.
        guard let label = (try? Self.values(replies[1]))?.first?.unwrapped.string else { return (nil, itemLabel) }
        return (Self.shownLabel(label, ofCollection: holder), itemLabel)
    }

    private func finishSession(_ reply: Reply, _ exchange: SessionKeyExchange) throws(Failure) {
        let v: [DBusValue]
        do { v = try Self.values(reply) } catch {
            if case .bus(.remote("org.freedesktop.DBus.Error.NotSupported", _)) = error {
                throw .slot(.serviceUnavailable("the provider does not offer the encrypted transfer (\(SessionKeyExchange.algorithm)) that vaultctl requires"))
            }
            throw error
        }
        guard v.count == 2, let serverKey = v[0].unwrapped.bytes, let path = v[1].objectPath,
              let key = exchange.sessionKey(serverPublicKey: serverKey) else {
            throw .bus(.protocolError("the provider's answer to the key exchange is not valid"))
        }
        session = (path, key)
    }

    /// A fresh key exchange; refused when libgcrypt, which does its arithmetic and cipher, cannot be used.
    private static func newExchange() throws(Failure) -> SessionKeyExchange {
        if let why = Gcrypt.unavailableReason {
            throw .slot(.serviceUnavailable("vaultctl could not load libgcrypt, which encrypts values on the bus (\(why)); install it (Debian: libgcrypt20)"))
        }
        return SessionKeyExchange()
    }

    /// A session, opening one when there is none.
    private func ensureSession() throws(Failure) -> (path: String, key: SessionKey) {
        if let session { return session }
        let exchange = try Self.newExchange()
        let reply = try callAll([Self.openSession(exchange)])
        try finishSession(reply[0], exchange)
        return session!
    }

    private static func getSecret(_ item: String, session: String) -> BusCall {
        method(item, itemInterface, "GetSecret", [.objectPath(session)])
    }

    /// The value of `item`, decrypted into a wiped buffer.
    func secret(of item: String, slot name: SlotName) throws(Failure) -> SecretBytes {
        let session = try ensureSession()
        return try Self.decrypt(call(Self.getSecret(item, session: session.path)), of: item, slot: name, key: session.key)
    }

    /// The answer to `GetSecret` for `item`, decrypted under `key` into a wiped buffer.
    private static func decrypt(_ v: [DBusValue], of item: String, slot name: SlotName, key: SessionKey) throws(Failure) -> SecretBytes {
        guard let fields = v.first?.fields, fields.count == 4, let parameters = fields[1].bytes, let value = fields[2].bytes else {
            throw .bus(.protocolError("the provider returned no secret for slot '\(name)'"))
        }
        // A value outside 1 byte … 64 KiB is refused before and after decryption, never printed: another
        // program may have stored anything under our attributes.
        let outOfBounds = SlotError.tampered(path: "the Secret Service item \(item) (slot '\(name)')",
                                             detail: "it holds a value outside the 1 to \(SecretBytes.maximumCount) bytes vaultctl reads; replace it with 'vaultctl store \(name)'")
        guard value.count <= SecretBytes.maximumCount + PKCS7Padding.blockBytes else { throw .slot(outOfBounds) }
        guard let plain = value.withUnsafeBytes({ key.decrypt(parameters: parameters, value: $0) }) else {
            throw .slot(.serviceUnavailable("the provider's answer for slot '\(name)' does not decrypt under the session key"))
        }
        guard (1...SecretBytes.maximumCount).contains(plain.count) else { throw .slot(outOfBounds) }
        return plain
    }

    /// Stores `secret` as an item with `attributes`, replacing the item that has exactly those.
    func store(_ secret: SecretBytes, attributes: [(String, String)], label: String) throws(Failure) {
        lastFound = nil
        let collection = try defaultCollection()
        // The slot's items ride along with the collection's lock state: one trip, as before. A provider whose
        // search may prompt (`searchMayPrompt`) is searched only once the default collection is known unlocked.
        let searchFirst = !searchMayPrompt
        var calls = [Self.lockedProperty(collection)] + (searchFirst ? [Self.search(attributes)] : [])
        let exchange = session == nil ? try Self.newExchange() : nil
        if let exchange {
            calls.append(Self.openSession(exchange))
        }
        var replies = try callAll(calls)
        var collectionWasLocked = false
        if try Self.lockedState(replies[0]) {
            collectionWasLocked = true
            if try !unlock([collection], purpose: "unlock the default collection to store an item in it (it is locked)").contains(collection) {
                throw .slot(.locked("the default collection is locked; unlock it and try again (gnome-keyring unlocks at your desktop login, and without one by 'gnome-keyring-daemon --replace --unlock --components=secrets' with the password on its standard input: the README's \"Without a desktop\"; KeePassXC when you open its database)"))
            }
        }
        if let exchange { try finishSession(replies[calls.count - 1], exchange) }
        if !searchFirst && !collectionWasLocked {
            replies.insert(try callAll([Self.search(attributes)])[0], at: 1)
        }
        let session = try ensureSession()
        let wire = Self.secretStructure(secret, session: session)
        // A value of this slot already in the default collection is replaced in place (`Item.SetSecret`):
        // KeePassXC asks the person to confirm a `CreateItem` that replaces an item, even with its access
        // confirmation off, and takes `SetSecret` as it is. An item the provider keeps locked (KeePassXC's
        // "confirm access"), or a search made while the collection was locked, goes the `CreateItem` way,
        // whose prompt asks the person.
        // Only when it is the one item of this slot in the whole provider: with copies (another program may
        // plant one, and make it the newest), `CreateItem` decides as before, so a secret never goes into an
        // item this process would not have written to.
        if !collectionWasLocked, let v = try? Self.values(replies[1]), v.count == 2,
           let unlocked = v[0].objectPaths, let locked = v[1].objectPaths,
           unlocked.count == 1, locked.isEmpty, Self.parent(of: unlocked[0]) == collection {
            if try setSecret(wire, of: unlocked[0]) {
                KeptCopies.note(.replaced, in: collection, provider: provider)
                return
            }
        }
        let properties = DBusValue.array(element: "{sv}", [
            .dictEntry(.string("org.freedesktop.Secret.Item.Label"), .variant(.string(label))),
            .dictEntry(.string("org.freedesktop.Secret.Item.Attributes"), .variant(.stringDictionary(attributes))),
        ])
        // A replacing `CreateItem` sets the secret of the item with these attributes in the collection, when the
        // search (made unlocked) saw one there.
        let replacing = !collectionWasLocked && ((try? Self.values(replies[1]))?.compactMap(\.objectPaths).joined()
            .contains { Self.parent(of: $0) == collection } ?? false)
        let v = try call(Self.method(collection, Self.collectionInterface, "CreateItem", [properties, wire, .boolean(true)]))
        guard v.count == 2, v[0].objectPath != nil, let prompt = v[1].objectPath else {
            throw .bus(.protocolError("the provider answered CreateItem with something else"))
        }
        if prompt != "/" {
            let created = try runPrompt(prompt, purpose: "store the item '\(SlotErrorText.oneLine(label, limit: 140))'")
            guard let item = created.objectPath, item != "/" else {
                throw .slot(.serviceUnavailable("the provider's prompt completed without the item it was to create"))
            }
        }
        if replacing { KeptCopies.note(.replaced, in: collection, provider: provider) }
    }

    /// Sets the secret of the item at `item` (`Item.SetSecret`); false when the item is gone (deleted
    /// meanwhile), so the caller creates one.
    private func setSecret(_ wire: DBusValue, of item: String) throws(Failure) -> Bool {
        do {
            _ = try call(Self.method(item, Self.itemInterface, "SetSecret", [wire]))
        } catch {
            if case .bus(.remote(let name, _)) = error {
                if Self.isGone(name) { return false }  // deleted meanwhile: created anew
                // Locked again since it was unlocked (before the change lock): refused, never a prompt that
                // waits for a person while the change lock is held.
                if name == "org.freedesktop.Secret.Error.IsLocked" {
                    throw .slot(.locked("the provider locked the item again while vaultctl was storing; try again"))
                }
            }
            throw error
        }
        return true
    }

    /// The Secret Service's secret structure for `secret`, encrypted for `session`. text/plain only for text
    /// (what secret-tool stores and other clients show); anything else is bytes. Checked in place: no
    /// `String` ever holds the secret.
    private static func secretStructure(_ secret: SecretBytes, session: (path: String, key: SessionKey)) -> DBusValue {
        let (parameters, value) = session.key.encrypt(secret)
        let contentType = secret.withUnsafeBytes { UTF8Validation.isValid($0, allowingNUL: false) } ? "text/plain" : "application/octet-stream"
        return .structure([.objectPath(session.path), .bytes(parameters), .bytes(value), .string(contentType)])
    }

    /// The object that holds `path` (an item's collection): providers name items below their collection.
    private static func parent(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    }

    /// Deletes the items at `paths` (one trip for all of them). One already gone counts as deleted.
    func delete(_ paths: [String]) throws(Failure) {
        lastFound = nil
        guard !paths.isEmpty else { return }
        for (path, reply) in zip(paths, try callAll(paths.map { Self.method($0, Self.itemInterface, "Delete") })) {
            let v: [DBusValue]
            do { v = try Self.values(reply) } catch {
                if case .bus(.remote(let name, _)) = error, Self.isGone(name) { continue }
                throw error
            }
            if let prompt = v.first?.objectPath { try runPromptIfAny(prompt, purpose: "delete an item of vaultctl's") }
            KeptCopies.note(.deleted, in: Self.parent(of: path), provider: provider)
        }
    }

    /// The `slot` attribute of every vaultctl item the provider shows in any collection (locked ones too),
    /// and the labels of the collections that are locked (asked in the same trip as the attributes): a
    /// provider may hide a locked collection's items.
    func slotNames() throws(Failure) -> (names: [String], lockedCollections: [String]) {
        let schema = [("xdg:schema", SecretServiceSlot.schemaName)]
        if searchMayPrompt {
            // Locked, labels and each collection's search in one trip (nothing prompts), then the attributes.
            let (items, collections, _) = try searchCollectionByCollection(schema, labels: true, itemLocks: false)
            let answers = try callAll(items.map { Self.getProperty($0.path, Self.itemInterface, "Attributes") })
            return (try Self.slotAttributes(answers), collections.filter(\.locked).compactMap(\.label))
        }
        let replies = try callAllResolvingAlias([Self.search(schema), Self.collectionsProperty])
        let paths = try searched(replies[0], collections: replies[1]).map(\.path)
        let collections = try Self.collections(replies[1])
        let answers = try callAll(paths.map { Self.getProperty($0, Self.itemInterface, "Attributes") }
                                  + collections.map(Self.lockedProperty)
                                  + collections.map { Self.getProperty($0, Self.collectionInterface, "Label") })
        var locked: [String] = []
        for (i, collection) in collections.enumerated() {
            // Only a collection that says it is locked is named; one that cannot say (gone meanwhile, an
            // error, an odd answer) does not cost the whole listing.
            guard (try? Self.lockedState(answers[paths.count + i])) == true else { continue }
            let label = (try? Self.values(answers[paths.count + collections.count + i]))?.first?.unwrapped.string ?? ""
            locked.append(Self.shownLabel(label, ofCollection: collection))
        }
        return (try Self.slotAttributes(Array(answers.prefix(paths.count))), locked)
    }

    /// The `slot` attribute in each answer to an item's `Attributes`; an item deleted meanwhile is passed over.
    private static func slotAttributes(_ answers: [Reply]) throws(Failure) -> [String] {
        var names: [String] = []
        for reply in answers {
            let v: [DBusValue]
            do { v = try values(reply) } catch {
                if case .bus(.remote(let name, _)) = error, isGone(name) { continue }  // deleted meanwhile
                throw error
            }
            if let slot = v.first?.unwrapped.stringPairs?[SecretServiceSlot.attribute] { names.append(slot) }
        }
        return names
    }

    /// Locks the default collection unless it already is; whether this call locked it. Returns only when the
    /// provider said it is locked: `Lock` answers with the objects it locked and a prompt ("/" when none is
    /// needed).
    /// `beforeLocking` runs once it is known that this call will lock it, before the provider is asked.
    func lockCollection(beforeLocking: (String) -> Void = { _ in }) throws(Failure) -> Bool {
        let collection = try defaultCollection()
        if try Self.lockedState(callAll([Self.lockedProperty(collection)])[0]) { return false }
        beforeLocking(collection)
        let v = try call(Self.method(Self.servicePath, Self.serviceInterface, "Lock", [.array(element: "o", [.objectPath(collection)])]))
        guard v.count == 2, let locked = v[0].objectPaths, let prompt = v[1].objectPath else {
            throw .bus(.protocolError("the provider answered Lock with something else"))
        }
        let alsoLocked = prompt == "/" ? [] : (try runPrompt(prompt, purpose: "lock the collection").objectPaths ?? [])
        guard (locked + alsoLocked).contains(collection) else {
            throw .slot(.serviceUnavailable("the provider did not say it locked the collection"))
        }
        return true
    }

    /// The provider in words a person recognizes: its program (`KeePassXC`, `gnome-keyring`, else its process
    /// name) and the label of the collection new values go to ("KeePassXC, 'Passwords'"). A locked KeePassXC
    /// database shows its file name as its label. nil parts are left out; nil when there is neither.
    func providerDescription() -> String? {
        let program = provider?.programName
        let collection = (try? defaultCollection()).map { "'\(SlotErrorText.oneLine(label(ofCollection: $0), limit: 100))'" }
        let parts = [program, collection].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// The label of `collection` (an empty one shown as the last part of its path).
    func label(ofCollection path: String) -> String {
        let label = (try? call(Self.getProperty(path, Self.collectionInterface, "Label")))?.first?.unwrapped.string ?? ""
        return Self.shownLabel(label, ofCollection: path)
    }

    /// A collection's label as shown: an empty one is the last part of its path, the provider's own name for it.
    private static func shownLabel(_ label: String, ofCollection path: String) -> String {
        label.isEmpty ? String(path.split(separator: "/").last ?? Substring(path)) : label
    }

    // MARK: - Prompts

    static let promptInterface = "org.freedesktop.Secret.Prompt"

    /// How long to wait for a person to answer a prompt when there is a graphical session to show it:
    /// `VAULTCTL_PROMPT_SECONDS` (1 to 600), else 60.
    static var promptSeconds: Double {
        guard let text = getenv("VAULTCTL_PROMPT_SECONDS").map({ String(cString: $0) }),
              let seconds = Int(text), (1...600).contains(seconds) else { return 60 }
        return Double(seconds)
    }

    /// Told, before vaultctl waits, what the person should answer (the command line writes it to stderr).
    /// Set once at start-up, before any thread; `nonisolated(unsafe)` for that reason.
    nonisolated(unsafe) static var promptNotice: (String) -> Void = { _ in }

    /// Whether a prompt can be shown to a person here: a Wayland or X11 session is named in the environment.
    static var hasGraphicalSession: Bool {
        (["WAYLAND_DISPLAY", "DISPLAY"] as [String]).contains { name in getenv(name).map { $0.pointee != 0 } ?? false }
    }

    /// Runs the provider's prompt at `path` the Secret Service way (`Prompt.Prompt`, then its `Completed`
    /// signal) and returns the signal's result; `purpose` says what it asks ("store the item 'vaultctl: x'").
    ///
    /// Without a graphical session it waits only briefly: a prompt that needs no person (KeePassXC's prompt for
    /// a new item) completes at once, and one that needs a person cannot be answered here. With one, it first
    /// says what to answer, then waits up to `promptSeconds`. A prompt not answered in time is dismissed
    /// (`Prompt.Dismiss`); one dismissed is refused. Never a hang, and nothing is changed by a refusal.
    func runPrompt(_ path: String, purpose: String) throws(Failure) -> DBusValue {
        let graphical = Self.hasGraphicalSession
        let seconds = graphical ? Self.promptSeconds : 2
        if promptDeadline == nil { promptDeadline = Deadline(secondsFromNow: seconds) }
        // Said only when the prompt does not complete at once: KeePassXC answers many calls with a prompt that
        // completes without showing anything, and the person must not look for a dialog that never comes.
        let notice = { Self.promptNotice("The Secret Service provider shows a prompt to \(purpose); answer it on your screen (vaultctl waits up to \(Int(seconds)) s).") }
        let completed: [DBusValue]?
        do {
            completed = try bus.callAwaitingSignal(BusCall(path, Self.promptInterface, "Prompt", [.string("")]),
                                                   destination: Self.destination, path: path,
                                                   interface: Self.promptInterface, member: "Completed",
                                                   waitDeadline: promptDeadline!,
                                                   slowAnswer: graphical ? (Deadline(secondsFromNow: 0.5), notice) : nil)
        } catch {
            throw .bus(error)
        }
        guard let completed else {
            _ = try? bus.callAll([BusCall(path, Self.promptInterface, "Dismiss")], destination: Self.destination,
                                 deadline: Deadline(secondsFromNow: 1))
            let leftOpen = provider.map { $0.leavesDialogAfterDismiss ? "; \($0.programName) leaves its dialog on screen: close it (answering it now changes nothing)" : "" } ?? ""
            throw .slot(.promptUnanswered(graphical
                ? "nobody answered the provider's prompt to \(purpose) within \(Int(seconds)) s\(leftOpen)"
                : "the provider's prompt to \(purpose) did not complete within \(Int(seconds)) s, and there is no graphical session here where a person could answer it (DISPLAY and WAYLAND_DISPLAY are not set); answer it from your desktop session, or allow vaultctl in the provider's settings"))
        }
        guard completed.count == 2, let dismissed = completed[0].bool else {
            throw .bus(.protocolError("the provider's prompt completed with something else"))
        }
        if dismissed {
            throw .slot(.promptUnanswered("the provider's prompt to \(purpose) was dismissed, or the provider could not show it"
                + (graphical ? "" : " (there is no graphical session here)")))
        }
        // The result may outlive the exchange's own deadline: give the calls that follow a fresh bound.
        deadline = Deadline(secondsFromNow: timeout)
        return completed[1].unwrapped
    }

    /// Runs the prompt a call answered with, unless it is "/" (none needed).
    private func runPromptIfAny(_ prompt: String, purpose: String) throws(Failure) {
        if prompt != "/" { _ = try runPrompt(prompt, purpose: purpose) }
    }

    /// Asks the provider to unlock `objects` (`Service.Unlock`), running its prompt if it has one; the
    /// objects it says are unlocked.
    func unlock(_ objects: [String], purpose: String) throws(Failure) -> [String] {
        let v = try call(Self.method(Self.servicePath, Self.serviceInterface, "Unlock",
                                     [.array(element: "o", objects.map { .objectPath($0) })]))
        guard v.count == 2, let unlocked = v[0].objectPaths, let prompt = v[1].objectPath else {
            throw .bus(.protocolError("the provider answered Unlock with something else"))
        }
        if prompt == "/" { return unlocked }
        return unlocked + (try runPrompt(prompt, purpose: purpose).objectPaths ?? [])
    }

    /// Error names that mean "that object is not there (any more)".
    private static func isGone(_ name: String) -> Bool {
        name == "org.freedesktop.DBus.Error.UnknownObject" || name == "org.freedesktop.DBus.Error.UnknownMethod"
            || name == "org.freedesktop.Secret.Error.NoSuchObject"
    }
}

extension DBusError {
    /// Whether the connection is unusable after this (as opposed to one call's error reply).
    var breaksConnection: Bool {
        if case .remote = self { return false }
        return true
    }
}
