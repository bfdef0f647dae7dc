#if canImport(Glibc)
import Glibc
#endif

/// How this vaultctl (or vaultctl-gate) was installed, and that installer's remedies: the Debian package,
/// `make install` under a PREFIX, or neither (a build tree, a copy), so that advice names the command that
/// works on this install (`apt install --reinstall`, `dpkg-statoverride`, a copy from the package's
/// `pam.d/` examples) rather than one that belongs to another.
///
/// Found from compile-time facts and the running executable's own path (`/proc/self/exe`) only, never from
/// the environment or the caller: vaultctl-gate is set-group-ID and asks this too.
/// - The package: this is the package's build (debian/rules compiles it with `-D VAULTCTL_DEBIAN_PACKAGE`).
/// - `make install`: the executable is `PREFIX/bin/vaultctl` beside a folder `PREFIX/libexec/vaultctl`
///   (where `make install` puts the gate) or `PREFIX/share/doc/vaultctl` (its documents, left when the gate's
///   folder is gone), or it is `PREFIX/libexec/vaultctl/vaultctl-gate` itself.
/// - Anything else is not installed: a build tree (`.build/debug`) or a copy; its remedy is to install.
///
/// `Sendable`: a value of strings.
public struct Installation: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The Debian package (`vaultctl`, and `vaultctl-tpm` for the TPM).
        case package
        /// `make install` with this PREFIX (`/usr/local` by default).
        case makeInstall(prefix: String)
        /// Not an installed vaultctl: it runs from `folder` (a build tree or a copy).
        case notInstalled(folder: String)
    }

    public let kind: Kind

    public init(_ kind: Kind) { self.kind = kind }

    /// This process's installation.
    public static let current = detect(executable: ownExecutable(), package: packageBuild)

    /// Whether this is the Debian package's build (debian/rules: `-D VAULTCTL_DEBIAN_PACKAGE`).
    public static var packageBuild: Bool {
        #if VAULTCTL_DEBIAN_PACKAGE
        true
        #else
        false
        #endif
    }

    /// The installation of the executable at `executable` (nil: unknown), by the rules above.
    /// `isFolder`: whether a path is a folder (a test sets it).
    public static func detect(executable: String?, package: Bool,
                              isFolder: (String) -> Bool = Installation.isFolder) -> Installation {
        if package { return Installation(.package) }
        guard let executable, let slash = executable.lastIndex(of: "/") else { return Installation(.notInstalled(folder: "?")) }
        let folder = String(executable[..<slash])
        let name = executable[executable.index(after: slash)...]
        func prefix(dropping tail: String) -> String? {
            guard folder.hasSuffix(tail) else { return nil }
            let p = String(folder.dropLast(tail.count))
            return p.isEmpty ? "/" : p
        }
        // Its gate's folder, or its documents (a make install whose gate folder was removed since is still one).
        if name == "vaultctl", let p = prefix(dropping: "/bin"),
           isFolder("\(p == "/" ? "" : p)/libexec/vaultctl") || isFolder("\(p == "/" ? "" : p)/share/doc/vaultctl") {
            return Installation(.makeInstall(prefix: p))
        }
        if name == "vaultctl-gate", let p = prefix(dropping: "/libexec/vaultctl") {
            return Installation(.makeInstall(prefix: p))
        }
        return Installation(.notInstalled(folder: folder.isEmpty ? "/" : folder))
    }

    /// The running executable's path, through `/proc/self/exe` (the kernel's word, not argv[0]); nil when it
    /// cannot be read.
    static func ownExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static func isFolder(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    // MARK: Where things are

    /// Where the package puts the gate, its TPM helper and its documents.
    public static let packageGate = "/usr/libexec/vaultctl/vaultctl-gate"
    public static let packageHelper = "/usr/libexec/vaultctl/vaultctl-tpm"
    public static let packageDocs = "/usr/share/doc/vaultctl"

    /// This install's gate: a path, or for a vaultctl that is not installed, where installs put it.
    public var gatePlace: String {
        switch kind {
        case .package: return Self.packageGate
        case .makeInstall(let prefix): return "\(Self.under(prefix))/libexec/vaultctl/vaultctl-gate"
        case .notInstalled: return "PREFIX/libexec/vaultctl/vaultctl-gate beside an installed PREFIX/bin/vaultctl (\(Self.packageGate) from the package)"
        }
    }

    /// This install's copies of the PAM stacks vaultctl ships (`pam.d/vaultctl`, `pam.d/vaultctl-NAME`).
    public var pamStacksPlace: String {
        switch kind {
        case .package: return "\(Self.packageDocs)/pam.d/"
        case .makeInstall(let prefix): return "\(Self.under(prefix))/share/doc/vaultctl/pam.d/"
        case .notInstalled: return "PREFIX/share/doc/vaultctl/pam.d/ (\(Self.packageDocs)/pam.d/ from the package)"
        }
    }

    // MARK: Remedies

    /// How apt installs the package `name` (again, with `reinstall`), as words with the commands quoted: from
    /// an apt source that has it, or from the package file, which is how vaultctl's packages are installed
    /// today (`make deb`, then `apt install ./…deb`), where apt cannot download it again.
    static func apt(_ name: String, reinstall: Bool = false) -> String {
        let again = reinstall ? "--reinstall " : ""
        return "'sudo apt install \(again)./\(name)_*.deb' in the folder of its package file (or 'sudo apt install \(again)\(name)' where an apt source has it)"
    }

    /// How to put vaultctl's gate back (its file, its group, its store), as a clause:
    /// "install vaultctl again with 'sudo apt install --reinstall vaultctl'".
    public var reinstall: String {
        switch kind {
        case .package: return "install vaultctl again with \(Self.apt("vaultctl", reinstall: true))"
        case .makeInstall: return "install vaultctl again with 'sudo make install\(prefixArgument)' in its source tree"
        case .notInstalled(let folder): return "\(notInstalledWords(folder)): install it ('sudo make install' in its source tree, or the Debian package) and run the installed vaultctl"
        }
    }

    /// How to get a gate in front of the device slot when none is beside this vaultctl, as a clause
    /// (after "To close that, ").
    public var installGate: String {
        switch kind {
        case .package: return "put the package's gate back by installing vaultctl again with \(Self.apt("vaultctl", reinstall: true))"
        case .makeInstall: return "install the gate with 'sudo make install\(prefixArgument)' in vaultctl's source tree"
        case .notInstalled(let folder):
            return "use an installed vaultctl ('sudo make install' in its source tree, or the Debian package), which has the gate beside it: this one is not installed (it runs from \(folder))"
        }
    }

    /// "this vaultctl is not an installed one (it runs from FOLDER)".
    func notInstalledWords(_ folder: String) -> String {
        "this vaultctl is not an installed one (it runs from \(folder)), and only an installed one has the gate beside it"
    }

    /// The command that gives the gate at `path` its owner, group and mode: the package's statoverride for
    /// the package's gate (a plain chmod would last until the next upgrade), else what `make install` does.
    public func gateModeCommand(path: String, group: String = "vaultctl") -> String {
        kind == .package && path == Self.packageGate
            ? "sudo dpkg-statoverride --update --add root \(group) 2755 \(path)"
            : "sudo chown root:\(group) \(Self.shellWord(path)) && sudo chmod 2755 \(Self.shellWord(path))"
    }

    /// What lets vaultctl-gate use the kernel's TPM (`/dev/tpmrm0`), as a clause: the package vaultctl-tpm's
    /// udev rule, or `make install TPM_RULE=yes`.
    public var gateTPMAccess: String {
        switch kind {
        case .package:
            return "the package vaultctl-tpm brings the helper and the udev rule that let it use /dev/tpmrm0"
        case .makeInstall:
            return "'sudo make install\(prefixArgument) TPM_RULE=yes' in vaultctl's source tree lets it use /dev/tpmrm0"
        case .notInstalled:
            return "'sudo make install TPM_RULE=yes', or the package vaultctl-tpm, lets an installed gate use /dev/tpmrm0"
        }
    }

    /// In the package without vaultctl-tpm installed (its helper is not there), the sentence that names that
    /// package; nil elsewhere. `helper`: where the package puts it (a test sets another).
    public func tpmPackageAdvice(helper: String = Installation.packageHelper) -> String? {
        guard kind == .package, access(helper, F_OK) != 0 else { return nil }
        return "The TPM is used through the package vaultctl-tpm, which is not installed (\(helper) is missing): install it with \(Self.apt("vaultctl-tpm"))."
    }

    /// What puts a missing TPM helper back, as a sentence without its full stop.
    public var helperRemedy: String {
        switch kind {
        case .package:
            return "It is in the package vaultctl-tpm: install it with \(Self.apt("vaultctl-tpm")), with --reinstall when it is installed"
        case .makeInstall:
            return "Install it there again with 'sudo make install\(prefixArgument)' in vaultctl's source tree, which copies both"
        case .notInstalled:
            return "Put it beside this vaultctl (a build makes both), or run an installed vaultctl"
        }
    }

    /// The command that puts the PAM stack `stack` (`password`, `fingerprint`, `security-key`,
    /// `password-and-key`) in `/etc/pam.d/vaultctl`: a copy of the package's example, or `make install
    /// PAM_STACK=`. For a vaultctl that is not installed, both, as words.
    public func pamStackCommand(_ stack: String) -> String {
        let file = stack == "password" ? "vaultctl" : "vaultctl-\(stack)"
        let copy = "sudo cp \(Self.packageDocs)/pam.d/\(file) /etc/pam.d/vaultctl"
        switch kind {
        case .package: return "'\(copy)'"
        case .makeInstall: return "'sudo make install\(prefixArgument) PAM_STACK=\(stack)' in vaultctl's source tree"
        case .notInstalled: return "'sudo make install PAM_STACK=\(stack)' in vaultctl's source tree (with the Debian package: '\(copy)')"
        }
    }

    /// "`installer` puts `what`": who puts vaultctl's files (the completions) in the system's folders, this
    /// install's installer ("make install puts …", "the package puts …"; both when not installed).
    public func puts(_ what: String) -> String {
        switch kind {
        case .package: return "the package puts \(what)"
        case .makeInstall: return "make install puts \(what)"
        case .notInstalled: return "make install and the Debian package put \(what)"
        }
    }

    /// Where the zsh completion function goes, as words for the script's comment.
    public var zshFolder: String {
        switch kind {
        case .package: return "the package puts it in /usr/share/zsh/vendor-completions"
        case .makeInstall: return "make install uses site-functions"
        case .notInstalled: return "make install uses site-functions, the Debian package vendor-completions"
        }
    }

    /// ` PREFIX=…` when `make install` used another PREFIX than its default, `/usr/local`; else "".
    var prefixArgument: String {
        guard case .makeInstall(let prefix) = kind, prefix != "/usr/local" else { return "" }
        return " PREFIX=\(Self.shellWord(prefix))"
    }

    /// `word` as one word of a command a person copies into a shell: as it is when it holds only characters
    /// no shell treats specially, else in double quotes with `\`, `"`, `$` and `` ` `` escaped (a message's
    /// commands are shown in single quotes already), so a pasted path with a space or a `$` stays one word.
    static func shellWord(_ word: String) -> String {
        let plain = word.unicodeScalars.allSatisfy { s in
            ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || "/._-+:,@%=".unicodeScalars.contains(s)
        }
        if plain && !word.isEmpty { return word }
        var out = "\""
        for c in word {
            if "\\\"$`".contains(c) { out.append("\\") }
            out.append(c)
        }
        return out + "\""
    }

    static func under(_ prefix: String) -> String { prefix == "/" ? "" : prefix }
}
