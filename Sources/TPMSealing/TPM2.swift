import CTSS2
import Slots
#if canImport(Glibc)
import Glibc
#endif

/// The one funnel to tpm2-tss (ESAPI, the TCTI loader, libtss2-mu): seal 32 bytes into a TPM sealed data
/// object, and unseal them again.
///
/// The sealed object is a KEYEDHASH object whose sensitive data is the caller's bytes, a child of a primary
/// storage key that is created afresh from a fixed template each time (the TCG provisioning guide's ECC
/// P-256 storage key template, as systemd's tpm2-util.c uses): the same TPM always derives the same primary
/// from its storage seed, so nothing is kept in the TPM's persistent memory. No PCR policy is set (a
/// firmware or kernel update must not lock anyone out); the object's auth value is empty, so the TPM's own
/// binding (`fixedTPM`, `fixedParent`: the private blob is encrypted under this TPM's primary key) is what
/// keeps it here. Both `Create` (which carries the secret in) and `Unseal` (which carries it out) run in an
/// HMAC session salted by the primary key with AES-128-CFB parameter encryption, so the secret never
/// crosses the TPM's bus or socket in the clear.
///
/// The blob this returns and takes is `TPM2B_NAME` of the primary (to tell "another TPM" from "damaged"),
/// then `TPM2B_PUBLIC` and `TPM2B_PRIVATE` of the sealed object, each marshalled by libtss2-mu.
///
/// Only the `vaultctl-tpm` helper links this (see `TPMHelper` in Slots for why).
public enum TPM2 {
    public typealias Failure = TPMFailure

    /// How long one TPM command may take before the TCTI gives up (a stopped or hung TPM never hangs us).
    public static let commandTimeoutSeconds = 5.0

    /// Seals `secret` (at most 128 bytes) under this TPM's storage primary; returns the blob described above.
    public static func seal(_ secret: SecretBytes, tcti: String) throws(Failure) -> [UInt8] {
        try withContext(tcti) { (ctx: Connection) throws(Failure) -> [UInt8] in
            let (primary, primaryName) = try createPrimary(ctx)
            defer { ctx.flush(primary) }
            let session = try startSession(ctx, primary: primary)
            defer { ctx.flush(session) }

            var sensitive = TPM2B_SENSITIVE_CREATE()
            guard secret.count <= MemoryLayout.size(ofValue: sensitive.sensitive.data.buffer) else {
                throw .failed("the secret is too large to seal")
            }
            defer { wipe(&sensitive) }
            secret.withUnsafeBytes { raw in
                withUnsafeMutableBytes(of: &sensitive.sensitive.data.buffer) { $0.copyMemory(from: raw) }
            }
            sensitive.sensitive.data.size = UInt16(secret.count)

            var template = TPM2B_PUBLIC()
            template.publicArea.type = 0x0008  // TPM2_ALG_KEYEDHASH
            template.publicArea.nameAlg = 0x000B  // TPM2_ALG_SHA256
            // fixedTPM | fixedParent | userWithAuth | noDA: cannot be duplicated, loads only under this
            // parent, and exempt from dictionary-attack protection. Its auth value is empty, so there is
            // nothing to guess and DA protection buys nothing; without noDA every use of it marks the TPM so
            // that the next unclean shutdown (a crash, a power cut, a killed VM) counts as a failed
            // authorization, and three of those lock every device secret out (swtpm: for 1000 s). The
            // primary is noDA too, as the TCG provisioning guidance's storage key template is: loading
            // under it authorizes with its (empty) auth value as well.
            template.publicArea.objectAttributes = 0x0000_0002 | 0x0000_0010 | 0x0000_0040 | Self.noDA
            template.publicArea.parameters.keyedHashDetail.scheme.scheme = 0x0010  // TPM2_ALG_NULL
            var outside = TPM2B_DATA()
            var pcrs = TPML_PCR_SELECTION()
            var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
            var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
            defer { Esys_Free(outPrivate); Esys_Free(outPublic) }
            try ctx.call("create the sealed object", {
                Esys_Create_Async($0, primary, session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template,
                                  &outside, &pcrs)
            }, { Esys_Create_Finish($0, &outPrivate, &outPublic, nil, nil, nil) })
            guard let outPrivate, let outPublic else { throw .failed("the TPM returned no sealed object") }
            var name = primaryName
            var blob = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_NAME>.size + MemoryLayout<TPM2B_PUBLIC>.size
                                                   + MemoryLayout<TPM2B_PRIVATE>.size)
            var offset = 0
            let marshalled = blob.withUnsafeMutableBufferPointer { out -> Bool in
                Tss2_MU_TPM2B_NAME_Marshal(&name, out.baseAddress, out.count, &offset) == 0
                    && Tss2_MU_TPM2B_PUBLIC_Marshal(outPublic, out.baseAddress, out.count, &offset) == 0
                    && Tss2_MU_TPM2B_PRIVATE_Marshal(outPrivate, out.baseAddress, out.count, &offset) == 0
            }
            guard marshalled else { throw .failed("the sealed object could not be marshalled") }
            return Array(blob[..<offset])
        }
    }

    /// The parts of a blob, parsed by libtss2-mu; nil when it is not exactly a name, a public and a private area.
    struct Parts {
        var primaryName = TPM2B_NAME()
        var objectPublic = TPM2B_PUBLIC()
        var objectPrivate = TPM2B_PRIVATE()
    }

    static func parse(_ blob: [UInt8]) -> Parts? {
        var parts = Parts()
        var offset = 0
        let ok = blob.withUnsafeBufferPointer { b -> Bool in
            Tss2_MU_TPM2B_NAME_Unmarshal(b.baseAddress, b.count, &offset, &parts.primaryName) == 0
                && Tss2_MU_TPM2B_PUBLIC_Unmarshal(b.baseAddress, b.count, &offset, &parts.objectPublic) == 0
                && Tss2_MU_TPM2B_PRIVATE_Unmarshal(b.baseAddress, b.count, &offset, &parts.objectPrivate) == 0
        }
        guard ok, offset == blob.count, parts.objectPublic.publicArea.type == 0x0008 else { return nil }
        return parts
    }

    /// Unseals a blob `seal` made, on the TPM that made it.
    ///
    /// A blob from a vaultctl before the primary was `noDA` names the other primary: that one is derived
    /// (from the same seed and the earlier template) when the current one's name does not match, so such a
    /// key still opens (still under dictionary-attack protection: only keys sealed since are exempt).
    public static func unseal(_ blob: [UInt8], tcti: String) throws(Failure) -> SecretBytes {
        guard var parts = parse(blob) else {
            throw .damaged("its TPM blobs do not parse as a primary name, a public and a private area")
        }
        return try withContext(tcti) { (ctx: Connection) throws(Failure) -> SecretBytes in
            var (primary, primaryName) = try createPrimary(ctx)
            if bytes(of: primaryName) != bytes(of: parts.primaryName) {
                ctx.flush(primary)
                (primary, primaryName) = try createPrimary(ctx, noDA: false)
            }
            defer { ctx.flush(primary) }
            guard bytes(of: primaryName) == bytes(of: parts.primaryName) else { throw .foreign }
            let session = try startSession(ctx, primary: primary)
            defer { ctx.flush(session) }
            var object: ESYS_TR = ESYS_TR_NONE
            do throws(Failure) {
                try ctx.call("load the sealed object", {
                    Esys_Load_Async($0, primary, session, ESYS_TR_NONE, ESYS_TR_NONE,
                                    &parts.objectPrivate, &parts.objectPublic)
                }, { Esys_Load_Finish($0, &object) })
            } catch {
                // Under this TPM's own primary, INTEGRITY, SIZE or VALUE means the blobs were changed.
                if case .refused(let rc, _) = error, [0x09F, 0x0A2, 0x095].contains(formatOne(rc)) {
                    throw .damaged("this TPM refuses its sealed object as changed")
                }
                throw error
            }
            defer { ctx.flush(object) }
            var out: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
            defer {
                if let out { wipe(&out.pointee) }
                Esys_Free(out)
            }
            try ctx.call("unseal the device key", {
                Esys_Unseal_Async($0, object, session, ESYS_TR_NONE, ESYS_TR_NONE)
            }, { Esys_Unseal_Finish($0, &out) })
            guard let out else { throw .failed("the TPM returned nothing to unseal") }
            let count = Int(out.pointee.size)
            return withUnsafeBytes(of: &out.pointee.buffer) { raw in
                SecretBytes(copying: UnsafeRawBufferPointer(rebasing: raw[0..<min(count, raw.count)]))
            }
        }
    }

    // MARK: - Plumbing

    /// One ESAPI context over a loaded TCTI, whose every command must finish by `deadline`.
    ///
    /// ESAPI's one-call functions wait without bound (they set the TCTI timeout to "block"), so each
    /// command is sent with its `_Async` half and collected with its `_Finish` half under a short TCTI
    /// timeout, again until the deadline: a TPM that stopped answering is "unavailable" within seconds.
    final class Connection {
        let context: OpaquePointer
        let deadline: Deadline

        init(_ context: OpaquePointer, deadline: Deadline) {
            self.context = context
            self.deadline = deadline
        }

        /// Sends one command and waits (bounded) for its answer; a non-zero answer throws.
        func call(_ what: String, _ send: (OpaquePointer) -> TSS2_RC,
                  _ finish: (OpaquePointer) -> TSS2_RC) throws(Failure) {
            let sent = send(context)
            guard sent == 0 else { throw TPM2.failure(sent, what) }
            while true {
                _ = Esys_SetTimeout(context, max(1, min(200, deadline.remainingMilliseconds)))
                let rc = finish(context)
                if rc & 0xFFFF == 9 /* TSS2_BASE_RC_TRY_AGAIN */ && rc & 0xFF_0000 != 0 {
                    guard deadline.remainingMilliseconds > 0 else {
                        throw .unavailable("the TPM did not answer within \(Int(commandTimeoutSeconds)) s when asked to \(what)")
                    }
                    continue
                }
                guard rc == 0 else {
                    if rc & 0xFFF == 0x921 { throw .lockout(seconds: lockoutWait()) }  // TPM2_RC_LOCKOUT
                    throw TPM2.failure(rc, what)
                }
                return
            }
        }

        /// Frees a transient object or session (best effort: the TPM's resource manager flushes on close).
        func flush(_ handle: ESYS_TR) {
            guard handle != ESYS_TR_NONE else { return }
            try? call("flush a handle", { Esys_FlushContext_Async($0, handle) }, { Esys_FlushContext_Finish($0) })
        }

        /// Seconds until the TPM leaves dictionary-attack lockout: its recovery interval times the failures
        /// at or above the limit (`TPM2_PT_LOCKOUT_COUNTER`, `MAX_AUTH_FAIL`, `LOCKOUT_INTERVAL`); nil when
        /// it did not say, or when only the lockout hierarchy's owner can clear it (interval 0).
        func lockoutWait() -> UInt32? {
            var more: TPMI_YES_NO = 0
            var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
            defer { Esys_Free(data) }
            do {
                try call("report its lockout state", {
                    Esys_GetCapability_Async($0, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                             0x0000_0006 /* TPM2_CAP_TPM_PROPERTIES */, 0x0000_020E, 3)
                }, { Esys_GetCapability_Finish($0, &more, &data) })
            } catch { return nil }
            guard let data else { return nil }
            var values: [UInt32: UInt32] = [:]
            var list = data.pointee.data.tpmProperties
            let count = Int(list.count)
            withUnsafeBytes(of: &list.tpmProperty) { raw in
                let props = raw.bindMemory(to: TPMS_TAGGED_PROPERTY.self)
                for i in 0..<min(count, props.count) { values[props[i].property] = props[i].value }
            }
            guard let counter = values[0x20E], let limit = values[0x20F], let interval = values[0x210],
                  interval > 0 else { return nil }
            return interval * max(1, (counter &+ 1) &- limit)
        }
    }

    /// Loads and connects the TCTI (bounded: see `connect`), makes an ESAPI context, runs `body`, and
    /// tears both down.
    private static func withContext<T>(_ tcti: String, _ body: (Connection) throws(Failure) -> T) throws(Failure) -> T {
        _ = quietLogging
        let deadline = Deadline(secondsFromNow: commandTimeoutSeconds)
        let transport = try connect(tcti, deadline: deadline)
        defer {
            var t: OpaquePointer? = transport
            Tss2_TctiLdr_Finalize(&t)
        }
        var context: OpaquePointer?
        let rc = Esys_Initialize(&context, transport, nil)
        guard rc == 0, let context else { throw .unavailable("could not start talking to \(tcti) (\(code(rc)))") }
        defer {
            var c: OpaquePointer? = context
            Esys_Finalize(&c)
        }
        return try body(Connection(context, deadline: deadline))
    }

    /// tpm2-tss logs warnings to stderr by default; vaultctl says what went wrong in its own one line.
    /// A `TSS2_LOG` the user set (to debug) is kept.
    private static let quietLogging: Void = { setenv("TSS2_LOG", "all+NONE", 0) }()

    /// What the connecting thread hands back.
    private final class Connecting: @unchecked Sendable {
        let tcti: String
        let done: Int32
        var rc: TSS2_RC = 0
        var transport: OpaquePointer?
        init(tcti: String, done: Int32) {
            self.tcti = tcti
            self.done = done
        }
    }

    /// `Tss2_TctiLdr_Initialize` with a bound. A TCTI's initialization waits without a timeout for the TPM's
    /// first answers (the swtpm TCTI asks its control socket), so it runs on a helper thread that writes
    /// a byte to a pipe when it returns; this thread waits for that byte until the deadline. A TPM that
    /// never answers leaves the helper blocked (and its two pipe ends open) until the process exits: the
    /// command reports "unavailable" within seconds instead of hanging.
    private static func connect(_ tcti: String, deadline: Deadline) throws(Failure) -> OpaquePointer {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw .failed("could not make a pipe to wait for the TPM") }
        let box = Connecting(tcti: tcti, done: fds[1])
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Connecting>.fromOpaque(raw!).takeRetainedValue()
            var transport: OpaquePointer?
            box.rc = Tss2_TctiLdr_Initialize(box.tcti, &transport)
            box.transport = transport
            var byte: UInt8 = 1
            _ = write(box.done, &byte, 1)
            close(box.done)
            return nil
        }, Unmanaged.passRetained(box).toOpaque())
        guard started == 0 else {
            close(fds[0])
            close(fds[1])
            throw .failed("could not start a thread to connect to the TPM")
        }
        pthread_detach(thread)
        var ready = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&ready, 1, deadline.remainingMilliseconds)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw .unavailable("the TPM at \(tcti) did not answer within \(Int(commandTimeoutSeconds)) s")
            }
            break
        }
        var byte: UInt8 = 0
        _ = read(fds[0], &byte, 1)
        close(fds[0])
        // The helper wrote its results before the byte this thread has read.
        guard box.rc == 0, let transport = box.transport else {
            throw .unavailable("could not connect to \(tcti) (\(code(box.rc)))")
        }
        return transport
    }

    /// TPMA_OBJECT_NODA: the object is exempt from dictionary-attack protection.
    static let noDA: UInt32 = 0x0000_0400

    /// The storage primary from the fixed ECC P-256 template, and its name. `noDA` false: the template of
    /// vaultctl before it was set (for keys sealed then).
    private static func createPrimary(_ ctx: Connection, noDA: Bool = true) throws(Failure) -> (ESYS_TR, TPM2B_NAME) {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var template = TPM2B_PUBLIC()
        template.publicArea.type = 0x0023  // TPM2_ALG_ECC
        template.publicArea.nameAlg = 0x000B  // TPM2_ALG_SHA256
        // fixedTPM | fixedParent | sensitiveDataOrigin | userWithAuth | restricted | decrypt (| noDA)
        template.publicArea.objectAttributes = 0x0000_0002 | 0x0000_0010 | 0x0000_0020 | 0x0000_0040
            | 0x0001_0000 | 0x0002_0000 | (noDA ? Self.noDA : 0)
        template.publicArea.parameters.eccDetail.symmetric.algorithm = 0x0006  // TPM2_ALG_AES
        template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128
        template.publicArea.parameters.eccDetail.symmetric.mode.aes = 0x0043  // TPM2_ALG_CFB
        template.publicArea.parameters.eccDetail.scheme.scheme = 0x0010  // TPM2_ALG_NULL
        template.publicArea.parameters.eccDetail.curveID = 0x0003  // TPM2_ECC_NIST_P256
        template.publicArea.parameters.eccDetail.kdf.scheme = 0x0010  // TPM2_ALG_NULL
        var outside = TPM2B_DATA()
        var pcrs = TPML_PCR_SELECTION()
        var primary: ESYS_TR = ESYS_TR_NONE
        try ctx.call("create the storage primary key", {
            Esys_CreatePrimary_Async($0, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                     &sensitive, &template, &outside, &pcrs)
        }, { Esys_CreatePrimary_Finish($0, &primary, nil, nil, nil, nil) })
        var namePointer: UnsafeMutablePointer<TPM2B_NAME>?
        let named = Esys_TR_GetName(ctx.context, primary, &namePointer)
        defer { Esys_Free(namePointer) }
        guard named == 0, let namePointer else {
            ctx.flush(primary)
            throw failure(named, "name the storage primary key")
        }
        return (primary, namePointer.pointee)
    }

    /// An HMAC session salted by the primary, encrypting the first command and response parameter.
    private static func startSession(_ ctx: Connection, primary: ESYS_TR) throws(Failure) -> ESYS_TR {
        var symmetric = TPMT_SYM_DEF()
        symmetric.algorithm = 0x0006  // TPM2_ALG_AES
        symmetric.keyBits.aes = 128
        symmetric.mode.aes = 0x0043  // TPM2_ALG_CFB
        var session: ESYS_TR = ESYS_TR_NONE
        try ctx.call("start an encrypted session", {
            Esys_StartAuthSession_Async($0, primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                        nil, 0x00 /* TPM2_SE_HMAC */, &symmetric, 0x000B /* TPM2_ALG_SHA256 */)
        }, { Esys_StartAuthSession_Finish($0, &session) })
        // decrypt | encrypt | continueSession
        let set = Esys_TRSess_SetAttributes(ctx.context, session, 0x20 | 0x40 | 0x01, 0xff)
        guard set == 0 else {
            ctx.flush(session)
            throw failure(set, "set the session's attributes")
        }
        return session
    }

    /// A non-zero response code as a failure: the transport's own codes (TCTI layer) mean "unavailable".
    static func failure(_ rc: TSS2_RC, _ what: String) -> Failure {
        if rc & 0xFF_0000 == 0x0A_0000 {  // TSS2_TCTI_RC_LAYER
            return .unavailable("the TPM connection failed when asked to \(what) (\(code(rc)))")
        }
        return .refused(code: rc, what: what)
    }

    /// The code of a TPM format-one response (`TPM2_RC_FMT1` + error number), or 0 when it is not one.
    private static func formatOne(_ rc: UInt32) -> UInt32 {
        guard rc & 0xFF_0000 == 0, rc & 0x80 != 0 else { return 0 }
        return rc & 0xBF
    }

    static func code(_ rc: TSS2_RC) -> String {
        "response code 0x\(String(rc, radix: 16))"
    }

    private static func bytes(of name: TPM2B_NAME) -> [UInt8] {
        var copy = name
        let count = Int(copy.size)
        return withUnsafeBytes(of: &copy.name) { Array($0.prefix(count)) }
    }

    private static func wipe<T>(_ value: inout T) {
        withUnsafeMutableBytes(of: &value) { raw in explicit_bzero(raw.baseAddress!, raw.count) }
    }
}
