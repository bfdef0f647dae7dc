#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// `make dist`, `make install` and `make uninstall` into a temporary DESTDIR: install only copies (no
/// compiler, no apt-get, nothing written in the source tree), puts each file in its standard place under
/// PREFIX, and uninstall removes exactly those files.
@Suite("make install and uninstall")
struct InstallTests {
    static let installed = [
        "/etc/pam.d/vaultctl",
        "/etc/vaultctl/gate.conf",
        "/etc/vaultctl/policy.json",
        "/usr/bin/git-credential-vaultctl",
        "/usr/bin/vaultctl",
        "/usr/bin/vaultctl-tpm",
        "/usr/share/bash-completion/completions/vaultctl",
        "/usr/share/doc/vaultctl/CHANGELOG.md",
        "/usr/share/doc/vaultctl/README.md",
        "/usr/share/doc/vaultctl/SECURITY.md",
        "/usr/share/doc/vaultctl/docs/gate.md",
        "/usr/share/doc/vaultctl/docs/manual.md",
        "/usr/share/doc/vaultctl/pam.d/vaultctl",
        "/usr/share/doc/vaultctl/pam.d/vaultctl-fingerprint",
        "/usr/share/doc/vaultctl/pam.d/vaultctl-password-and-key",
        "/usr/share/doc/vaultctl/pam.d/vaultctl-security-key",
        "/usr/share/doc/vaultctl/policy.json",
        "/usr/share/fish/vendor_completions.d/vaultctl.fish",
        "/usr/share/man/man1/vaultctl.1",
        "/usr/share/zsh/site-functions/_vaultctl",
        "/usr/libexec/vaultctl/vaultctl-gate",
        "/usr/libexec/vaultctl/vaultctl-tpm",
    ]

    static func make(_ args: [String], sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        var env = Fixtures.baseEnvironment
        env["HOME"] = "/nonexistent"
        return ProcessRunner.run(Paths.tool("make"), ["--no-print-directory", "-C", Paths.repositoryRoot] + args,
                                 environment: env, timeout: .seconds(60), sourceLocation: sourceLocation)
    }

    /// Every file and symlink under `root`, as paths relative to it.
    static func files(under root: String) -> [String] {
        let all = FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []
        return all.filter { rel in
            var st = stat()
            return lstat("\(root)/\(rel)", &st) == 0 && (st.st_mode & S_IFMT) != S_IFDIR
        }.map { "/\($0)" }.sorted()
    }

    @Test func installCopiesEachFileToItsPlaceAndUninstallRemovesExactlyThose() throws {
        let work = try Fixtures.makeFolder("install")
        let dist = "\(work)/dist", root = "\(work)/root"
        let made = Self.make(["dist", "BIN=\(Paths.vaultctl)", "DIST=\(dist)"])
        try #require(made.status == 0, "\(made)")
        // Something that was there before and is not vaultctl's stays through install and uninstall.
        mkdir("\(root)", 0o755); mkdir("\(root)/etc", 0o755); mkdir("\(root)/etc/pam.d", 0o755)
        try #require(FileText.write("\(root)/etc/pam.d/other", "@include common-auth\n"))

        let marker = "\(work)/before-install"
        try #require(FileText.write(marker, ""))
        sleep(1)  // mtimes below compare at one-second precision on some filesystems
        let install = Self.make(["install", "DIST=\(dist)", "DESTDIR=\(root)", "PREFIX=/usr"])
        try #require(install.status == 0, "\(install)")
        #expect(Self.files(under: root) == (Self.installed + ["/etc/pam.d/other"]).sorted())
        // Into DESTDIR the gate is copied, and its system steps are said, not done.
        for step in ["groupadd --system vaultctl", "chown root:vaultctl /usr/libexec/vaultctl/vaultctl-gate && chmod 2755",
                     "install -d -m 0770 -o root -g vaultctl /var/lib/vaultctl"] {
            #expect(install.stdoutText.contains(step), "\(install)")
        }
        #expect(FileText.read("\(root)/etc/vaultctl/policy.json") == FileText.read("\(Paths.repositoryRoot)/policy/default.json"))
        let newer = ProcessRunner.run(Paths.tool("find"), [Paths.repositoryRoot, "-newer", marker, "-not", "-path", "*/.git/*"],
                                      environment: Fixtures.baseEnvironment)
        #expect(newer.stdoutText.isEmpty, "install wrote in the source tree: \(newer.stdoutText)")

        let binary = "\(root)/usr/bin/vaultctl"
        let version = ProcessRunner.run(binary, ["--version"], environment: Fixtures.baseEnvironment)
        #expect(version.status == 0 && version.stdoutText.hasPrefix("vaultctl "), "\(version)")
        var st = stat()
        #expect(stat(binary, &st) == 0 && st.st_mode & 0o777 == 0o755)
        var target = [CChar](repeating: 0, count: 256)
        let n = readlink("\(root)/usr/bin/git-credential-vaultctl", &target, target.count - 1)
        #expect(n > 0 && String(cString: target) == "vaultctl", "the git helper is a relative link to the binary")
        #expect(FileText.read("\(root)/etc/pam.d/vaultctl") == FileText.read("\(Paths.repositoryRoot)/policy/pam.d/vaultctl"))
        // The documents messages point to, and the policy template, which checks as valid where it lands.
        #expect(FileText.read("\(root)/usr/share/doc/vaultctl/README.md") == FileText.read("\(Paths.repositoryRoot)/README.md"))
        let template = ProcessRunner.run(binary, ["policy", "check", "\(root)/usr/share/doc/vaultctl/policy.json"],
                                         environment: Fixtures.baseEnvironment.merging(["HOME": work]) { $1 })
        #expect(template.status == 0, "\(template)")
        // The installed manual page and completions are the ones the binary generates.
        let man = ProcessRunner.run(Paths.tool("man"), ["-l", "\(root)/usr/share/man/man1/vaultctl.1"],
                                    environment: Fixtures.baseEnvironment.merging(["MANPAGER": "cat", "HOME": work]) { $1 })
        #expect(man.status == 0 && man.stdoutText.contains("vaultctl store SLOT"), "\(man)")
        let bash = ProcessRunner.run(Paths.tool("bash"), ["--norc", "-c",
            ". \(root)/usr/share/bash-completion/completions/vaultctl && complete -p vaultctl"], environment: Fixtures.baseEnvironment)
        #expect(bash.stdoutText == "complete -F _vaultctl vaultctl\n", "\(bash)")
        for (file, args) in [("/usr/share/zsh/site-functions/_vaultctl", ["completion", "zsh"]),
                             ("/usr/share/fish/vendor_completions.d/vaultctl.fish", ["completion", "fish"])] {
            let generated = ProcessRunner.run(Paths.vaultctl, args, environment: Fixtures.baseEnvironment)
            #expect(FileBytes.read("\(root)\(file)") == generated.stdout, "\(file)")
        }

        let uninstall = Self.make(["uninstall", "DESTDIR=\(root)", "PREFIX=/usr"])
        try #require(uninstall.status == 0, "\(uninstall)")
        #expect(Self.files(under: root) == ["/etc/pam.d/other"], "uninstall removed exactly what install put there")
    }

    /// `PAM_STACK=NAME` puts that stack in place; a later install without it keeps the stack root chose;
    /// uninstall removes a shipped stack and keeps one root wrote; a name that is not a stack installs nothing.
    @Test func thePAMStackIsTheOneAskedForAndAChosenOneStays() throws {
        let work = try Fixtures.makeFolder("pamstack")
        let dist = "\(work)/dist", root = "\(work)/root"
        try #require(Self.make(["dist", "BIN=\(Paths.vaultctl)", "DIST=\(dist)"]).status == 0)
        let stacks = "\(Paths.repositoryRoot)/policy/pam.d"
        let installed = "\(root)/etc/pam.d/vaultctl"

        let bogus = Self.make(["install", "DIST=\(dist)", "DESTDIR=\(root)", "PREFIX=/usr", "PAM_STACK=face"])
        #expect(bogus.status != 0 && bogus.stderr.contains("PAM_STACK=face is not a stack vaultctl ships"), "\(bogus)")
        #expect(!Paths.exists(root), "nothing installed for a stack that does not exist")

        let finger = Self.make(["install", "DIST=\(dist)", "DESTDIR=\(root)", "PREFIX=/usr", "PAM_STACK=fingerprint"])
        try #require(finger.status == 0, "\(finger)")
        #expect(FileText.read(installed) == FileText.read("\(stacks)/vaultctl-fingerprint"))
        #expect(finger.stdoutText.contains("/etc/pam.d/vaultctl is the fingerprint stack"), "\(finger)")
        let again = Self.make(["install", "DIST=\(dist)", "DESTDIR=\(root)", "PREFIX=/usr"])
        #expect(again.status == 0 && again.stdoutText.contains("kept /etc/pam.d/vaultctl"), "\(again)")
        #expect(FileText.read(installed) == FileText.read("\(stacks)/vaultctl-fingerprint"), "a later install keeps the chosen stack")
        let key = Self.make(["install", "DIST=\(dist)", "DESTDIR=\(root)", "PREFIX=/usr", "PAM_STACK=security-key"])
        #expect(key.status == 0 && key.stdoutText.contains("pamu2fcfg -u USER >> /etc/vaultctl/u2f_mappings"), "\(key)")
        let keyStack = (FileText.read(installed) ?? "").split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
        #expect(keyStack.contains("pam_u2f.so authfile=/etc/vaultctl/u2f_mappings") && !keyStack.contains("nouserok"), "\(keyStack)")

        let uninstall = Self.make(["uninstall", "DESTDIR=\(root)", "PREFIX=/usr"])
        #expect(uninstall.status == 0 && !Paths.exists(installed), "a shipped stack goes with uninstall: \(uninstall)")
        // One root wrote (or changed) stays, through install and uninstall.
        try #require(FileText.write(installed, "auth required pam_unix.so\n"))
        #expect(Self.make(["install", "DIST=\(dist)", "DESTDIR=\(root)", "PREFIX=/usr"]).status == 0)
        #expect(FileText.read(installed) == "auth required pam_unix.so\n")
        let kept = Self.make(["uninstall", "DESTDIR=\(root)", "PREFIX=/usr"])
        #expect(kept.status == 0 && kept.stdoutText.contains("kept /etc/pam.d/vaultctl") && FileText.read(installed) == "auth required pam_unix.so\n", "\(kept)")
    }

    /// PREFIX moves everything but the PAM service (which PAM reads only from /etc/pam.d) and the gate's
    /// root policy (which the gate reads only from /etc/vaultctl).
    @Test func prefixIsHonoured() throws {
        let work = try Fixtures.makeFolder("prefix")
        let made = Self.make(["dist", "BIN=\(Paths.vaultctl)", "DIST=\(work)/dist"])
        try #require(made.status == 0, "\(made)")
        let install = Self.make(["install", "DIST=\(work)/dist", "DESTDIR=\(work)/root", "PREFIX=/opt/vc"])
        try #require(install.status == 0, "\(install)")
        // fish's completion goes where fish always looks (it looks under a PREFIX only when XDG_DATA_DIRS says so).
        #expect(Self.files(under: "\(work)/root") == Self.installed.map {
            $0.hasSuffix("vaultctl.fish") ? "/etc/fish/completions/vaultctl.fish" : $0.hasPrefix("/usr/") ? "/opt/vc" + $0.dropFirst(4) : $0
        }.sorted())
        let uninstall = Self.make(["uninstall", "DESTDIR=\(work)/root", "PREFIX=/opt/vc"])
        #expect(uninstall.status == 0 && Self.files(under: "\(work)/root").isEmpty, "\(uninstall)")
    }

    /// The default PREFIX (/usr/local): fish, started as a login shell with no XDG_DATA_DIRS (after `su -`,
    /// ssh, a console), finds the completion where it was installed, and completes vaultctl's commands.
    @Test func fishFindsTheCompletionOfAUsrLocalInstallInALoginShell() throws {
        let work = try Fixtures.makeFolder("fish")
        try #require(Self.make(["dist", "BIN=\(Paths.vaultctl)", "DIST=\(work)/dist"]).status == 0)
        let install = Self.make(["install", "DIST=\(work)/dist", "DESTDIR=\(work)/root"])
        try #require(install.status == 0, "\(install)")
        let installed = Self.files(under: "\(work)/root").filter { $0.hasSuffix("vaultctl.fish") }
        #expect(installed == ["/etc/fish/completions/vaultctl.fish"], "\(installed)")
        // fish loads a command's completion only when the command is on PATH: the installed vaultctl is, first,
        // as /usr/local/bin is in a user's login shell (not whatever vaultctl this machine may have).
        let bin = "\(work)/root/usr/local/bin"
        try #require(access("\(bin)/vaultctl", X_OK) == 0, "make install put vaultctl elsewhere: \(install)")
        var env = Fixtures.baseEnvironment
        env["PATH"] = "\(bin):\(Paths.systemPATH)"
        env["XDG_DATA_DIRS"] = nil
        env["HOME"] = work
        let path = ProcessRunner.run(Paths.tool("fish"), ["--login", "-c", "printf '%s\\n' $fish_complete_path"], environment: env)
        #expect(path.status == 0 && path.stdoutText.split(separator: "\n").contains("/etc/fish/completions"), "\(path)")
        // The file there completes (fish reads it as it would from that folder, and only from there: no other
        // vaultctl.fish can stand in for it), with the command's description (a file name would have none).
        let completes = ProcessRunner.run(Paths.tool("fish"), ["--no-config", "-c",
            "set fish_complete_path \(work)/root/etc/fish/completions; complete -C 'vaultctl sta'"], environment: env)
        #expect(completes.stdoutText.split(separator: "\n").contains { $0.hasPrefix("status\t") }, "\(completes)")
    }

    /// Without `make` first, install says so and copies nothing; it never builds (so `sudo make install`
    /// cannot leave a root-owned .build) and never installs packages.
    @Test func installWithoutABuildSaysRunMakeFirst() throws {
        let work = try Fixtures.makeFolder("nodist")
        let install = Self.make(["install", "DIST=\(work)/missing", "DESTDIR=\(work)/root"])
        #expect(install.status != 0)
        #expect(install.stderr.contains("run 'make' first as yourself, then 'sudo make install'"), "\(install)")
        #expect(!Paths.exists("\(work)/root"))
        let plan = Self.make(["-n", "install", "DIST=\(work)/dist", "DESTDIR=\(work)/root"])
        #expect(plan.status == 0, "\(plan)")
        for word in ["swift", "apt-get", "dpkg", "SUDO"] {
            #expect(!plan.stdoutText.contains(word), "make install runs \(word): \(plan.stdoutText)")
        }
    }
}
