import CSecret
import Dispatch

/// The sync slot: an item in the Secret Service default collection, found by the schema
/// `org.vaultctl.Slot` with the string attribute `slot` = the slot name (the same attributes
/// `secret-tool store --label=L xdg:schema org.vaultctl.Slot slot NAME` writes).
///
/// This is the one file that imports CSecret. It uses the `…_sync` calls that take a `GHashTable` (the
/// variadic ones do not import), copies each `GError` out before freeing it, and runs every call under the
/// `Watchdog` so nothing waits on D-Bus for long.
///
/// libsecret 0.20.5 answers a lookup in a locked collection, and a lookup on a provider without a default
/// collection, with NULL and no error, exactly like "no item". So this slot never uses lookup: it resolves the
/// `default` alias itself and searches without unlocking, which lists locked items too.
public struct SecretServiceSlot: Slot {
    public static let schemaName = "org.vaultctl.Slot"
    public static let attribute = "slot"
    public let mode = SlotMode.sync
    /// Seconds one Secret Service operation may take before it counts as unavailable.
    public static let defaultTimeout: Double = 5
    let timeout: Double

    public init(timeout: Double = SecretServiceSlot.defaultTimeout) {
        self.timeout = timeout
    }

    /// The label vaultctl gives the items it writes.
    public static func label(for name: SlotName) -> String { "vaultctl: \(name.rawValue)" }

    public func holding(_ name: SlotName) -> Holding {
        do {
            return try Watchdog.run(seconds: timeout, "looking for slot '\(name)'") {
                Result { () throws(SlotError) -> Holding in
                    let session = try Session.open()
                    let items = try session.search(name, loadSecrets: false)
                    defer { items.release() }
                    // An item in a locked collection counts as held.
                    guard let item = items.newest else { return .empty }
                    return .holds(locked: secret_item_get_locked(item) != 0)
                }
            }
        } catch {
            return .unknown(error)
        }
    }

    /// The label of the collection holding the item, and the item's own label.
    public func place(of name: SlotName) -> String? {
        try? Watchdog.run(seconds: timeout, "describing slot '\(name)'") {
            Result { () throws(SlotError) -> String? in
                let session = try Session.open()
                let items = try session.search(name, loadSecrets: false)
                defer { items.release() }
                guard let item = items.newest else { return nil }
                let collection = Session.string(secret_collection_get_label(session.collection)) ?? "default"
                let label = Session.string(secret_item_get_label(item)) ?? SecretServiceSlot.label(for: name)
                return "the Secret Service collection '\(collection)' as item '\(label)'"
            }
        }
    }

    /// Asks the provider to lock its default collection (what `vaultctl lock` does beside its own lock).
    /// The corresponding C function is `secret_service_lock_sync`.
    public func lockDefaultCollection() throws(SlotError) {
        try Watchdog.run(seconds: timeout, "locking the default collection") {
            Result { () throws(SlotError) in
                let session = try Session.open()
                if secret_collection_get_locked(session.collection) != 0 { return }
                let objects = g_list_append(nil, UnsafeMutableRawPointer(session.collection))
                defer { g_list_free(objects) }
                var error: UnsafeMutablePointer<GError>?
                var locked: UnsafeMutablePointer<GList>?
                _ = secret_service_lock_sync(session.service, objects, nil, &locked, &error)
                if let locked { g_list_free_full(locked, g_object_unref) }
                if error != nil { throw .serviceUnavailable(Session.take(error, "locking the default collection")) }
            }
        }
    }

    public func read(_ name: SlotName) throws(SlotError) -> SecretBytes {
        let value = try Watchdog.run(seconds: timeout, "reading slot '\(name)'") {
            Result { () throws(SlotError) -> SendableSecret in
                let session = try Session.open(transfersSecrets: true)
                let items = try session.search(name, loadSecrets: true)
                defer { items.release() }
                guard let item = items.newest else { throw .empty(name) }
                if secret_item_get_locked(item) != 0 {
                    throw .locked("slot '\(name)' is in a locked collection; unlock your keyring (for example by logging in to the desktop) and try again")
                }
                guard let value = secret_item_get_secret(item) else {
                    throw .serviceUnavailable("the provider returned no secret for slot '\(name)'")
                }
                defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
                var length = 0
                guard let bytes = secret_value_get(value, &length) else { throw .empty(name) }
                return SendableSecret(SecretBytes(copying: UnsafeRawBufferPointer(start: bytes, count: length)))
            }
        }
        return value.secret
    }

    public func write(_ name: SlotName, _ secret: SecretBytes) throws(SlotError) {
        guard (1...SecretBytes.maximumCount).contains(secret.count) else { throw .badSecretSize(secret.count) }
        let carried = SendableSecret(secret)
        try Watchdog.run(seconds: timeout, "storing slot '\(name)'", changes: true) {
            Result { () throws(SlotError) in
                let session = try Session.open(transfersSecrets: true)
                try session.store(name, carried.secret)
            }
        }
    }

    @discardableResult
    public func delete(_ name: SlotName) throws(SlotError) -> Bool {
        try Watchdog.run(seconds: timeout, "deleting slot '\(name)'", changes: true) {
            Result { () throws(SlotError) -> Bool in
                let session = try Session.open()
                let items = try session.search(name, loadSecrets: false)
                defer { items.release() }
                if items.all.contains(where: { secret_item_get_locked($0) != 0 }) {
                    throw .locked("slot '\(name)' is in a locked collection; unlock your keyring and try again")
                }
                for item in items.all {
                    var error: UnsafeMutablePointer<GError>?
                    if secret_item_delete_sync(item, nil, &error) == 0 {
                        throw .serviceUnavailable(Session.take(error, "deleting slot '\(name)'"))
                    }
                }
                return !items.isEmpty
            }
        }
    }

    /// The slot names in the collection. libsecret would build a proxy object per item (about five D-Bus
    /// calls each); this asks for the item paths once and then only each item's `Attributes` property.
    public func names() throws(SlotError) -> [SlotName] {
        try Watchdog.run(seconds: timeout, "listing slots") {
            Result { () throws(SlotError) -> [SlotName] in
                let session = try Session.open()
                return try session.slotNames()
            }
        }
    }
}

/// Carries a `SecretBytes` into and out of the watchdog's worker. `@unchecked Sendable`: only one thread
/// touches it at a time (the worker until it signals, then the waiter).
struct SendableSecret: @unchecked Sendable {
    let secret: SecretBytes
    init(_ secret: SecretBytes) { self.secret = secret }
}

/// One conversation with the provider: the service, its default collection, and the schema.
private struct Session {
    let service: UnsafeMutablePointer<SecretService>
    let collection: UnsafeMutablePointer<SecretCollection>
    let schema: UnsafeMutablePointer<SecretSchema>

    /// Opens the key-exchange session on an existing connection, once.
    /// The corresponding C function is `secret_service_ensure_session_sync`.
    fileprivate func ensureSecretSession() throws(SlotError) {
        var error: UnsafeMutablePointer<GError>?
        if secret_service_ensure_session_sync(service, nil, &error) == 0 {
            throw Session.unavailable(&error, "opening a session")
        }
    }

    /// Connects and resolves the `default` alias; with `transfersSecrets`, also opens a session (a key
    /// exchange, needed only to read or write a value). No bus, no provider, or no default collection is
    /// `serviceUnavailable`, never "no item".
    static func open(transfersSecrets: Bool = false) throws(SlotError) -> Session {
        try SessionCache.shared.session(transfersSecrets: transfersSecrets)
    }

    /// A new connection (what the cache calls once per process).
    fileprivate static func connect(transfersSecrets: Bool) throws(SlotError) -> Session {
        var error: UnsafeMutablePointer<GError>?
        let flags = transfersSecrets ? SECRET_SERVICE_OPEN_SESSION : SECRET_SERVICE_NONE
        guard let service = secret_service_get_sync(flags, nil, &error) else {
            throw unavailable(&error, "connecting")
        }
        guard let collection = secret_collection_for_alias_sync(service, "default", SECRET_COLLECTION_NONE, nil, &error) else {
            if error != nil { throw unavailable(&error, "finding the default collection") }
            throw .serviceUnavailable("the provider has no default collection (create or choose a default keyring, for example in Seahorse)")
        }
        return Session(service: service, collection: collection, schema: makeSchema())
    }

    /// The items of slot `name` in the default collection, locked ones included.
    func search(_ name: SlotName, loadSecrets: Bool) throws(SlotError) -> Items {
        let attributes = stringTable([(SecretServiceSlot.attribute, name.rawValue)])
        defer { g_hash_table_unref(attributes) }
        var flags = SECRET_SEARCH_ALL.rawValue
        if loadSecrets { flags |= SECRET_SEARCH_LOAD_SECRETS.rawValue }
        var error: UnsafeMutablePointer<GError>?
        let list = secret_collection_search_sync(collection, schema, attributes, SecretSearchFlags(flags), nil, &error)
        if let error {
            var e: UnsafeMutablePointer<GError>? = error
            throw .serviceUnavailable(Session.take(&e, "searching"))
        }
        return Items(list: list)
    }

    /// Every slot name of our schema in the default collection (locked items too), without item proxies.
    /// The corresponding C functions are `secret_collection_search_for_dbus_paths_sync` and
    /// `g_dbus_connection_call_sync` (org.freedesktop.DBus.Properties.Get of each item's `Attributes`).
    func slotNames() throws(SlotError) -> [SlotName] {
        let attributes = stringTable([])
        defer { g_hash_table_unref(attributes) }
        var error: UnsafeMutablePointer<GError>?
        guard let paths = secret_collection_search_for_dbus_paths_sync(collection, schema, attributes, nil, &error) else {
            if error != nil { throw .serviceUnavailable(Session.take(&error, "listing slots")) }
            return []
        }
        defer { g_strfreev(paths) }
        let proxy = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GDBusProxy.self)
        guard let connection = g_dbus_proxy_get_connection(proxy) else {
            throw .serviceUnavailable("the provider's connection is gone (while listing slots)")
        }
        // Every Get is sent at once and the replies gathered as they come (pipelined on one connection),
        // on a private main context so nothing else's callbacks run here.
        let context = g_main_context_new()
        g_main_context_push_thread_default(context)
        defer {
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        let replies = AttributeReplies()
        let box = Unmanaged.passRetained(replies)
        defer { box.release() }
        var i = 0
        while let path = paths[i] {
            i += 1
            replies.expected += 1
            let args = [g_variant_new_string("org.freedesktop.Secret.Item"), g_variant_new_string("Attributes")]
            let parameters = args.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, 2) }
            g_dbus_connection_call(connection, "org.freedesktop.secrets", path, "org.freedesktop.DBus.Properties",
                                   "Get", parameters, nil, G_DBUS_CALL_FLAGS_NONE, 5000, nil,
                                   { source, result, data in
                                       let replies = Unmanaged<AttributeReplies>.fromOpaque(data!).takeUnretainedValue()
                                       replies.take(source, result)
                                   }, box.toOpaque())
        }
        while replies.received < replies.expected {
            g_main_context_iteration(context, 1)
        }
        if let failure = replies.failure { throw .serviceUnavailable("\(failure) (while reading items' attributes)") }
        let names = Set(replies.values.compactMap(SlotName.init))
        return names.sorted()
    }

    func store(_ name: SlotName, _ secret: SecretBytes) throws(SlotError) {
        if secret_collection_get_locked(collection) != 0 {
            throw .locked("the default collection is locked; unlock your keyring (for example by logging in to the desktop) and try again")
        }
        let attributes = stringTable([(SecretServiceSlot.attribute, name.rawValue)])
        defer { g_hash_table_unref(attributes) }
        // text/plain only for text (what secret-tool stores and other clients show); anything else is bytes.
        let value = secret.withUnsafeBytes { raw in
            let isText = Session.isText(raw)
            return secret_value_new(raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count,
                                    isText ? "text/plain" : "application/octet-stream")
        }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        var error: UnsafeMutablePointer<GError>?
        if secret_service_store_sync(service, schema, attributes, "default", SecretServiceSlot.label(for: name),
                                     value, nil, &error) == 0 {
            throw .serviceUnavailable(Session.take(error, "storing slot '\(name)'"))
        }
    }

    /// Whether bytes are UTF-8 text without NUL, checked in place (no `String` ever holds the secret).
    static func isText(_ raw: UnsafeRawBufferPointer) -> Bool {
        var bytes = raw.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &bytes) {
            case .valid(let encoded): if encoded.count == 1 && encoded.first == 0 { return false }
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// The words for a failure to reach the provider: no provider on the bus, no bus, or what GLib said.
    static func unavailable(_ error: inout UnsafeMutablePointer<GError>?, _ what: String) -> SlotError {
        if let e = error, e.pointee.domain == g_dbus_error_quark(), e.pointee.code == G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue {
            g_clear_error(&error)
            return .serviceUnavailable("no Secret Service provider is running on the session bus (start gnome-keyring, KeePassXC's Secret Service integration, or another provider)")
        }
        if getenv("DBUS_SESSION_BUS_ADDRESS") == nil {
            g_clear_error(&error)
            return .serviceUnavailable("there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        }
        return .serviceUnavailable("the session bus did not answer (\(take(&error, what)))")
    }

    /// Copies a newly allocated C string and frees it.
    static func string(_ p: UnsafeMutablePointer<CChar>?) -> String? {
        guard let p else { return nil }
        defer { g_free(p) }
        return String(cString: p)
    }

    /// Copies a GError's message out and frees it.
    static func take(_ error: UnsafeMutablePointer<GError>?, _ what: String) -> String {
        var e = error
        return take(&e, what)
    }

    static func take(_ error: inout UnsafeMutablePointer<GError>?, _ what: String) -> String {
        guard let e = error else { return "it failed while \(what)" }
        let message = e.pointee.message.map { String(cString: $0) } ?? "unknown error"
        g_error_free(e)
        error = nil
        return "\(message) (while \(what))"
    }

    private static func makeSchema() -> UnsafeMutablePointer<SecretSchema> {
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        g_hash_table_insert(types, g_strdup(SecretServiceSlot.attribute),
                            UnsafeMutableRawPointer(bitPattern: Int(SECRET_SCHEMA_ATTRIBUTE_STRING.rawValue)))
        defer { g_hash_table_unref(types) }
        return secret_schema_newv(SecretServiceSlot.schemaName, SECRET_SCHEMA_NONE, types)
    }

    private func stringTable(_ pairs: [(String, String)]) -> OpaquePointer {
        let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
        for (k, v) in pairs { g_hash_table_insert(table, g_strdup(k), g_strdup(v)) }
        return table
    }
}

/// A GList of SecretItem, freed with `release()`.
private struct Items {
    let all: [UnsafeMutablePointer<SecretItem>]
    private let list: UnsafeMutablePointer<GList>?

    init(list: UnsafeMutablePointer<GList>?) {
        self.list = list
        var out: [UnsafeMutablePointer<SecretItem>] = []
        var node = list
        while let n = node {
            if let data = n.pointee.data { out.append(data.assumingMemoryBound(to: SecretItem.self)) }
            node = n.pointee.next
        }
        all = out
    }

    var isEmpty: Bool { all.isEmpty }

    /// The most recently modified item, when another program stored more than one.
    var newest: UnsafeMutablePointer<SecretItem>? {
        all.max { secret_item_get_modified($0) < secret_item_get_modified($1) }
    }

    func release() {
        if let list { g_list_free_full(list, g_object_unref) }
    }
}

/// One connection to the provider per process: a read asks first whether the slot holds a value, then
/// (after PAM) for the value, and `status` asks twice too; reconnecting and resolving the default alias each
/// time doubled the D-Bus round trips. `@unchecked Sendable`: the session is created under `lock`, and the
/// GDBus proxies it holds are safe to call from any thread. It lives as long as the process.
private final class SessionCache: @unchecked Sendable {
    static let shared = SessionCache()
    private let lock = DispatchSemaphore(value: 1)
    private var cached: Session?
    private var hasSecretSession = false

    func session(transfersSecrets: Bool) throws(SlotError) -> Session {
        lock.wait()
        defer { lock.signal() }
        let session: Session
        if let cached {
            session = cached
            if transfersSecrets && !hasSecretSession {
                try session.ensureSecretSession()
                hasSecretSession = true
            }
        } else {
            session = try Session.connect(transfersSecrets: transfersSecrets)
            cached = session
            hasSecretSession = transfersSecrets
        }
        return session
    }
}

/// Replies to the pipelined `Attributes` reads of `slotNames()`. Not `Sendable`: used on one thread, from
/// the main context that thread iterates.
private final class AttributeReplies {
    var expected = 0
    var received = 0
    var values: [String] = []
    var failure: String?

    func take(_ source: UnsafeMutablePointer<GObject>?, _ result: OpaquePointer?) {
        received += 1
        var error: UnsafeMutablePointer<GError>?
        let connection = source.map { OpaquePointer($0) }
        guard let reply = g_dbus_connection_call_finish(connection, result, &error) else {
            failure = failure ?? Session.take(&error, "reading an item's attributes")
            return
        }
        defer { g_variant_unref(reply) }
        guard let boxed = g_variant_get_child_value(reply, 0) else { return }
        defer { g_variant_unref(boxed) }
        guard let dictionary = g_variant_get_variant(boxed) else { return }
        defer { g_variant_unref(dictionary) }
        guard let value = g_variant_lookup_value(dictionary, SecretServiceSlot.attribute, nil) else { return }
        defer { g_variant_unref(value) }
        if String(cString: g_variant_get_type_string(value)) == "s", let text = g_variant_get_string(value, nil) {
            values.append(String(cString: text))
        }
    }
}
