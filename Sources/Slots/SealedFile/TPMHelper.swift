#if canImport(Glibc)
import Glibc
#endif
import CSystem

/// Why a TPM operation did not succeed, as the `vaultctl-tpm` helper reports it; `TPMDeviceKey` turns
/// these into `SlotError`s with a path.
public enum TPMFailure: Error, Equatable, Sendable {
    /// The TCTI could not be loaded or connected, or the TPM did not answer within the time bound.
    case unavailable(String)
    /// The blobs were made under another TPM's storage primary key.
    case foreign
    /// Dictionary-attack lockout; the seconds until the TPM allows one more try, when it said.
    case lockout(seconds: UInt32?)
    /// The blobs do not parse, or this TPM refuses them as changed.
    case damaged(String)
    /// The TPM (or the TSS) answered `code` when asked to do `what`.
    case refused(code: UInt32, what: String)
    /// Anything else that went wrong.
    case failed(String)
    /// The helper is not at this path (found by vaultctl itself; the helper never says it).
    case helperMissing(path: String)
    /// The helper at this path may not be trusted with the seed: why (found by vaultctl itself).
    case helperUntrusted(path: String, why: String)

    /// The one line the helper prints for this failure (tab-separated, no secret in it; each text is made
    /// one line of its own, so a TCTI string with a tab or newline in it cannot shift the fields).
    public var line: String {
        func text(_ s: String) -> String { SlotErrorText.oneLine(s, limit: 600) }
        switch self {
        case .unavailable(let why): return "unavailable\t\(text(why))"
        case .foreign: return "foreign"
        case .lockout(let seconds): return "lockout\t\(seconds.map(String.init) ?? "")"
        case .damaged(let why): return "damaged\t\(text(why))"
        case .refused(let code, let what): return "refused\t\(code)\t\(text(what))"
        case .failed(let why): return "failed\t\(text(why))"
        case .helperMissing(let path): return "failed\tthe TPM helper is missing at \(text(path))"
        case .helperUntrusted(let path, let why): return "failed\tthe TPM helper \(text(path)) is not trusted: \(text(why))"
        }
    }

    /// Reads a line `line` printed; nil for anything else.
    public init?(line: String) {
        let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        switch (fields.first, fields.count) {
        case ("unavailable", 2): self = .unavailable(fields[1])
        case ("foreign", 1): self = .foreign
        case ("lockout", 2): self = .lockout(seconds: UInt32(fields[1]))
        case ("damaged", 2): self = .damaged(fields[1])
        case ("refused", 3):
            guard let code = UInt32(fields[1]) else { return nil }
            self = .refused(code: code, what: fields[2])
        case ("failed", 2): self = .failed(fields[1])
        default: return nil
        }
    }
}

/// Runs the `vaultctl-tpm` helper, the only program linked with tpm2-tss: `seal` (the seed on its standard
/// input, the TPM blob on its output) and `unseal` (the blob in, the seed out).
///
/// Why a helper: tpm2-tss's ESAPI pulls in libcrypto, and loading it (and libtss2-sys) cost every vaultctl
/// command about 2 ms of start-up, TPM or not; now only a command that seals or unseals pays it, in a
/// process of its own. The helper is `vaultctl-tpm` in `PREFIX/libexec/vaultctl/` when installed there,
/// else beside the running `vaultctl` (`path`), run only when it is as safe as vaultctl itself: a regular file owned by root or this user and
/// writable by nobody else, in a folder likewise (as sudo and sshd judge what they run; see `distrust`).
/// The seed crosses only the pipes between the two, never argv or the environment. Everything is bounded: the helper gives up on the TPM after 5 s and says so, and
/// is killed if it has not finished within `deadlineSeconds`.
enum TPMHelper {
    static let fileName = "vaultctl-tpm"
    static let deadlineSeconds = 8.0
    /// Largest answer: a blob (a name, a public and a private area) or a failure line.
    static let maximumOutput = 8192

    static func seal(_ seed: SecretBytes, tcti: String) throws(TPMFailure) -> [UInt8] {
        let out = try seed.withUnsafeBytes { (raw) throws(TPMFailure) -> SecretBytes in
            try run("seal", tcti: tcti, input: raw)
        }
        return out.withUnsafeBytes { Array($0) }  // a blob holds nothing secret
    }

    static func unseal(_ blob: [UInt8], tcti: String) throws(TPMFailure) -> SecretBytes {
        try blob.withTypedUnsafeBytes { (raw) throws(TPMFailure) -> SecretBytes in try run("unseal", tcti: tcti, input: raw) }
    }

    /// The helper's path: the installed one beside vaultctl-gate (`PREFIX/libexec/vaultctl/`, as `make install`
    /// and the package put it) when there is one, else beside the running executable (a build tree, the gate
    /// itself). The libexec folder is one `install -d` made, not writable by its group: on Debian's
    /// `/usr/local` (`root:staff 2775`, where `/etc/staff-group-for-usr-local` exists) `bin/` is writable by
    /// group staff, so a helper there is refused, and no exception to the trust rule is needed.
    static var path: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let exe = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = exe.lastIndex(of: "/") else { return nil }
        let folder = String(exe[..<slash])
        let prefix = SecureFile.parent(of: folder)
        let installed = "\(prefix == "/" ? "" : prefix)/libexec/vaultctl/\(fileName)"
        if installed != "\(folder)/\(fileName)", access(installed, F_OK) == 0 { return installed }
        return "\(folder)/\(fileName)"
    }

    /// Why the helper at `path` may not be run, or nil when it may. The file (after symbolic links) must be
    /// a regular, executable file owned by root or this user that neither its group nor others can write;
    /// the folder it is in, and the folder of the name vaultctl found, must be owned likewise and writable
    /// by nobody else. Anyone who could replace the helper would be handed the device key's seed.

    static func distrust(_ path: String) -> String? {
        // In vaultctl-gate (set-group-ID: its group is not the caller's), the caller is not trusted: only a
        // helper root owns, in folders root owns, runs with the gate's group.
        let me: uid_t? = getegid() == getgid() ? getuid() : nil
        func owner(_ st: stat) -> Bool { st.st_uid == 0 || st.st_uid == me }
        guard let resolved = realpath(path, nil) else { return "it cannot be resolved (\(String(cString: strerror(errno))))" }
        let file = String(cString: resolved)
        free(resolved)
        var st = stat()
        guard stat(file, &st) == 0 else { return "it cannot be examined (\(String(cString: strerror(errno))))" }
        guard st.st_mode & S_IFMT == S_IFREG else { return "\(file) is not a regular file" }
        guard owner(st) else { return "\(file) is owned by uid \(st.st_uid), not by root or you" }
        guard st.st_mode & 0o022 == 0 else {
            return "\(file) is writable by its group or others (mode \(String(st.st_mode & 0o7777, radix: 8))); run chmod go-w on it"
        }
        guard access(file, X_OK) == 0 else { return "\(file) is not executable" }
        var folders = [SecureFile.parent(of: file)]
        if SecureFile.parent(of: path) != folders[0] { folders.append(SecureFile.parent(of: path)) }
        for folder in folders {
            guard stat(folder, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { return "its folder \(folder) cannot be examined" }
            guard owner(st) else { return "its folder \(folder) is owned by uid \(st.st_uid), not by root or you" }
            guard st.st_mode & 0o022 == 0 else {
                return "its folder \(folder) is writable by its group or others (mode \(String(st.st_mode & 0o7777, radix: 8))), so another user could replace it"
            }
        }
        return nil
    }

    private static func run(_ operation: String, tcti: String, input: UnsafeRawBufferPointer) throws(TPMFailure) -> SecretBytes {
        guard let helper = path else {
            throw .helperMissing(path: "\(fileName) beside vaultctl (the running program's path could not be read)")
        }
        var st = stat()
        guard stat(helper, &st) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .helperMissing(path: helper) }
            throw .helperUntrusted(path: helper, why: "it cannot be examined (\(String(cString: strerror(errno))))")
        }
        if let why = distrust(helper) { throw .helperUntrusted(path: helper, why: why) }
        guard let toHelper = ChildSpawn.pipe() else { throw .failed("could not make a pipe to the TPM helper") }
        guard let fromHelper = ChildSpawn.pipe() else {
            close(toHelper.read); close(toHelper.write)
            throw .failed("could not make a pipe to the TPM helper")
        }
        let inFDs: [Int32] = [toHelper.read, toHelper.write]
        let outFDs: [Int32] = [fromHelper.read, fromHelper.write]
        let started = ChildSpawn.start([helper, operation, tcti], searchingPATH: false) { actions in
            posix_spawn_file_actions_adddup2(&actions, inFDs[0], 0)
            posix_spawn_file_actions_adddup2(&actions, outFDs[1], 1)
        }
        var pid: pid_t = 0
        var rc: Int32 = 0
        switch started {
        case .success(let p): pid = p
        case .failure(let f): rc = f.errno
        }
        close(inFDs[0])
        close(outFDs[1])
        guard rc == 0 else {
            close(inFDs[1]); close(outFDs[0])
            throw .unavailable("could not start the TPM helper \(helper): \(String(cString: strerror(rc)))")
        }
        // The input (at most a few KiB) fits in the pipe: written whole, then end of file.
        var written = 0
        while written < input.count {
            let n = write(inFDs[1], input.baseAddress! + written, input.count - written)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            written += n
        }
        close(inFDs[1])

        let deadline = Deadline(secondsFromNow: deadlineSeconds)
        let out = SecretBytes(capacity: maximumOutput)
        var timedOut = false
        out.withUnsafeMutableBytes { raw, used in
            var poller = pollfd(fd: outFDs[0], events: Int16(POLLIN), revents: 0)
            while used < raw.count {
                let ready = poll(&poller, 1, deadline.remainingMilliseconds)
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { timedOut = true; break }
                let n = read(outFDs[0], raw.baseAddress! + used, raw.count - used)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                used += n
            }
        }
        close(outFDs[0])
        if timedOut { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if timedOut {
            throw .unavailable("the TPM helper did not finish within \(Int(deadlineSeconds)) s and was stopped")
        }
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        guard exited, code == 0 else {
            let text = out.withUnsafeBytes { raw in String(decoding: raw.prefix { $0 != 0x0A }, as: UTF8.self) }
            if exited, let failure = TPMFailure(line: text) { throw failure }
            throw .failed("the TPM helper ended with \(exited ? "status \(code)" : "signal \(status & 0x7f)")")
        }
        return out
    }
}
