import GateProtocol
import Slots

/// The CLI's half of `GateRequest`: a request as sent, and the slot it names. The gate only reads requests
/// (`GateRequest.parse`), so this half is not in its modules; GateProtocolTests and the fuzzer check that
/// `parse` reads back what `text` writes.
extension GateRequest {
    public var slot: SlotName? {
        switch self {
        case .holding(let n), .read(let n), .store(let n), .delete(let n), .importValue(let n): return n
        case .authenticate(let scope, _):
            if case .slots(let names) = scope, names.count == 1 { return names[0] }
            return nil
        case .names, .lock, .unlock, .finishImport, .log, .deviceKey, .recordFailure, .sealDeviceKey: return nil
        }
    }

    /// The payload as sent.
    public var text: String {
        var out = "\(Self.version) \(verb)"
        switch self {
        case .holding(let n), .read(let n), .store(let n), .delete(let n), .importValue(let n): out += " \(n.rawValue)"
        case .authenticate(let scope, let reason): out += " \(scope.text) \(Self.clean(reason))"
        case .names, .lock, .unlock, .finishImport, .deviceKey, .recordFailure, .sealDeviceKey: break
        case .log(let n, let skip): out += skip > 0 ? " \(n) \(skip)" : " \(n)"
        }
        return out
    }
}

extension GateScope {
    public var text: String {
        switch self {
        case .none: return "-"
        case .everySlot: return "*"
        case .slots(let names): return names.map(\.rawValue).joined(separator: ",")
        }
    }
}
