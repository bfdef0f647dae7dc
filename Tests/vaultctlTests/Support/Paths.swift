#if canImport(Glibc)
import Glibc
#endif

/// Where the things the end-to-end tests run live: the built binary, the repository's scripts, system tools.
enum Paths {
    /// The `vaultctl` binary under test: `$VAULTCTL_BIN` when set, otherwise the `vaultctl` file beside the
    /// running test executable (`swift test` runs `.build/<triple>/debug/vaultctlPackageTests.xctest`, and
    /// the test target depends on the executable target, so the binary is built next to it).
    static let vaultctl: String = {
        if let given = getenv("VAULTCTL_BIN").map({ String(cString: $0) }), !given.isEmpty {
            return given
        }
        return "\(folder(of: executablePath()))/vaultctl"
    }()

    /// The repository root, found from this file's own path (`Tests/vaultctlTests/Support/Paths.swift`).
    static let repositoryRoot: String = {
        var path = #filePath
        for _ in 0..<4 { path = folder(of: path) }
        return path
    }()

    static var secretServiceScript: String { "\(repositoryRoot)/scripts/secret-service.sh" }
    static var pamStackScript: String { "\(repositoryRoot)/scripts/pam-stack.sh" }
    static var swtpmScript: String { "\(repositoryRoot)/scripts/swtpm.sh" }

    /// The PATH every child process gets: system folders only, so the tests do not depend on the caller's.
    static let systemPATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// The absolute path of a system tool (`secret-tool`, `gdbus`, `unshare`, `sh`), or the bare name when
    /// it is not found (the spawn then fails with a clear error).
    static func tool(_ name: String) -> String {
        for dir in systemPATH.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return name
    }

    static func exists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let parent = String(path[..<slash])
        return parent.isEmpty ? "/" : parent
    }

    /// The running executable, from `/proc/self/exe`.
    private static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments.first ?? "." }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
