#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import Slots

/// Issue 36, point 5: vaultctl knows how it was installed, from its build and its own path, and names that
/// installer's remedies: the package's `apt`, `dpkg-statoverride` and `pam.d` copies, `make install` with its
/// PREFIX, or, for a vaultctl that is not installed, to install one.
@Suite("Installation")
struct InstallationTests {
    let package = Installation(.package)
    let usrLocal = Installation(.makeInstall(prefix: "/usr/local"))
    let opt = Installation(.makeInstall(prefix: "/opt/vc"))
    let tree = Installation(.notInstalled(folder: "/src/vaultctl/.build/debug"))

    /// The package's build is the package wherever it runs; `make install` is PREFIX/bin/vaultctl beside
    /// PREFIX/libexec/vaultctl, or the gate in PREFIX/libexec/vaultctl; anything else is not installed.
    @Test func theInstallerIsFoundFromTheBuildAndTheExecutablesPath() {
        let folders: Set<String> = ["/usr/local/libexec/vaultctl", "/opt/vc/libexec/vaultctl", "/usr/libexec/vaultctl"]
        func detect(_ path: String?, package: Bool = false) -> Installation.Kind {
            Installation.detect(executable: path, package: package, isFolder: folders.contains).kind
        }
        #expect(detect("/usr/bin/vaultctl", package: true) == .package)
        #expect(detect("/home/u/src/.build/release/vaultctl", package: true) == .package)
        #expect(detect("/usr/local/bin/vaultctl") == .makeInstall(prefix: "/usr/local"))
        #expect(detect("/usr/bin/vaultctl") == .makeInstall(prefix: "/usr"))
        #expect(detect("/opt/vc/bin/vaultctl") == .makeInstall(prefix: "/opt/vc"))
        #expect(detect("/opt/vc/libexec/vaultctl/vaultctl-gate") == .makeInstall(prefix: "/opt/vc"))
        #expect(detect("/usr/libexec/vaultctl/vaultctl-gate") == .makeInstall(prefix: "/usr"))
        // A bin/ with no libexec/vaultctl beside it is a copy, not an install; so is a build tree.
        #expect(detect("/home/u/bin/vaultctl") == .notInstalled(folder: "/home/u/bin"))
        // A make install whose gate folder was removed keeps its documents: still an install (its remedy reinstalls).
        #expect(Installation.detect(executable: "/srv/vc/bin/vaultctl", package: false) { $0 == "/srv/vc/share/doc/vaultctl" }.kind
                == .makeInstall(prefix: "/srv/vc"))
        #expect(detect("/src/vaultctl/.build/debug/vaultctl") == .notInstalled(folder: "/src/vaultctl/.build/debug"))
        #expect(detect("/src/vaultctl/.build/debug/vaultctl-gate") == .notInstalled(folder: "/src/vaultctl/.build/debug"))
        #expect(detect("/opt/vc/bin/vaultctl-tpm") == .notInstalled(folder: "/opt/vc/bin"))
        #expect(detect(nil) == .notInstalled(folder: "?"))
    }

    /// The test runner itself is not installed, and is not the package's build: its folder is the build's.
    @Test func thisProcessIsNotAnInstall() {
        guard case .notInstalled(let folder) = Installation.current.kind else {
            Issue.record("the test binary counts as installed: \(Installation.current.kind)")
            return
        }
        #expect(folder.hasSuffix("/debug") || folder.contains(".build"), "\(folder)")
    }

    /// Putting the gate back: the package is reinstalled with apt; `make install` is run again with the same
    /// PREFIX (none for its default); a build tree is told to install, never given a command as if it were.
    @Test func reinstallingNamesThisInstaller() {
        // The package as vaultctl's are installed today, from its file (apt cannot download it again), and
        // from an apt source.
        #expect(package.reinstall == "install vaultctl again with 'sudo apt install --reinstall ./vaultctl_*.deb' in the folder of its package file (or 'sudo apt install --reinstall vaultctl' where an apt source has it)")
        #expect(usrLocal.reinstall == "install vaultctl again with 'sudo make install' in its source tree")
        #expect(opt.reinstall == "install vaultctl again with 'sudo make install PREFIX=/opt/vc' in its source tree")
        #expect(tree.reinstall.hasPrefix("this vaultctl is not an installed one (it runs from /src/vaultctl/.build/debug)"), "\(tree.reinstall)")
        #expect(tree.reinstall.contains("'sudo make install' in its source tree, or the Debian package"), "\(tree.reinstall)")
        for i in [package, usrLocal, opt] { #expect(!i.reinstall.contains("not an installed one")) }
        #expect(package.installGate.contains("'sudo apt install --reinstall ./vaultctl_*.deb'") && !package.installGate.contains("make"))
        #expect(opt.installGate.contains("'sudo make install PREFIX=/opt/vc'") && !opt.installGate.contains("apt"))
        #expect(tree.installGate.contains("this one is not installed (it runs from /src/vaultctl/.build/debug)"), "\(tree.installGate)")
    }

    /// The gate's mode: the package's statoverride (an upgrade keeps it) for the package's gate; chown and
    /// chmod for any other.
    @Test func theGatesModeComesBackAsItsInstallerSetsIt() {
        #expect(package.gateModeCommand(path: Installation.packageGate)
                == "sudo dpkg-statoverride --update --add root vaultctl 2755 /usr/libexec/vaultctl/vaultctl-gate")
        #expect(usrLocal.gateModeCommand(path: "/usr/local/libexec/vaultctl/vaultctl-gate")
                == "sudo chown root:vaultctl /usr/local/libexec/vaultctl/vaultctl-gate && sudo chmod 2755 /usr/local/libexec/vaultctl/vaultctl-gate")
        // Not the package's path: dpkg would not apply an override there.
        #expect(package.gateModeCommand(path: "/opt/x/libexec/vaultctl/vaultctl-gate").hasPrefix("sudo chown"))
    }

    /// TPM access for the gate: the package vaultctl-tpm (its udev rule) or `make install TPM_RULE=yes`.
    @Test func tpmAccessNamesThePackageOrTheRule() {
        #expect(package.gateTPMAccess.contains("the package vaultctl-tpm") && !package.gateTPMAccess.contains("TPM_RULE"))
        #expect(usrLocal.gateTPMAccess.contains("'sudo make install TPM_RULE=yes'") && !usrLocal.gateTPMAccess.contains("apt"))
        #expect(opt.gateTPMAccess.contains("'sudo make install PREFIX=/opt/vc TPM_RULE=yes'"))
        #expect(tree.gateTPMAccess.contains("TPM_RULE=yes") && tree.gateTPMAccess.contains("vaultctl-tpm"))
        #expect(usrLocal.helperRemedy.contains("'sudo make install'") && tree.helperRemedy.contains("run an installed vaultctl"))
        #expect(package.helperRemedy.contains("'sudo apt install ./vaultctl-tpm_*.deb'") && package.helperRemedy.contains("'sudo apt install vaultctl-tpm'"))
    }

    /// The PAM stack: a copy of the package's example over /etc/pam.d/vaultctl, or `make install PAM_STACK=`.
    /// The package's file names are the ones debian/ ships (the Makefile's PAM_STACK_FILES under DOCDIR).
    @Test func thePAMStackComesFromThisInstallersCopies() throws {
        #expect(package.pamStackCommand("password") == "'sudo cp /usr/share/doc/vaultctl/pam.d/vaultctl /etc/pam.d/vaultctl'")
        #expect(package.pamStackCommand("fingerprint") == "'sudo cp /usr/share/doc/vaultctl/pam.d/vaultctl-fingerprint /etc/pam.d/vaultctl'")
        #expect(usrLocal.pamStackCommand("password") == "'sudo make install PAM_STACK=password' in vaultctl's source tree")
        #expect(opt.pamStackCommand("security-key") == "'sudo make install PREFIX=/opt/vc PAM_STACK=security-key' in vaultctl's source tree")
        #expect(tree.pamStackCommand("password").contains("PAM_STACK=password") && tree.pamStackCommand("password").contains("/usr/share/doc/vaultctl/pam.d/vaultctl "))
        #expect(package.pamStacksPlace == "/usr/share/doc/vaultctl/pam.d/")
        #expect(opt.pamStacksPlace == "/opt/vc/share/doc/vaultctl/pam.d/")
        #expect(opt.gatePlace == "/opt/vc/libexec/vaultctl/vaultctl-gate" && package.gatePlace == Installation.packageGate)
    }

    /// Who puts the completions: this install's installer; the words name no build folder (the scripts that
    /// `make install` copies are generated by a binary in the build tree).
    @Test func completionWordsNameNoBuildFolder() {
        #expect(package.puts("it there") == "the package puts it there")
        #expect(usrLocal.puts("it there") == "make install puts it there")
        #expect(tree.puts("it there") == "make install and the Debian package put it there")
        #expect(!tree.zshFolder.contains("/src") && package.zshFolder.contains("vendor-completions"))
    }

    /// A path in a remedy's command stays one shell word whatever it holds (review of issue 36's point 5).
    @Test func aPathInACommandStaysOneShellWord() {
        #expect(Installation.shellWord("/opt/vc") == "/opt/vc")
        #expect(Installation.shellWord("/opt/my tools") == "\"/opt/my tools\"")
        #expect(Installation.shellWord("/opt/$HOME`x`\\\"q") == "\"/opt/\\$HOME\\`x\\`\\\\\\\"q\"")
        #expect(Installation.shellWord("") == "\"\"")
        let spaced = Installation(.makeInstall(prefix: "/opt/my tools"))
        #expect(spaced.reinstall.contains("'sudo make install PREFIX=\"/opt/my tools\"'"), "\(spaced.reinstall)")
        let command = spaced.gateModeCommand(path: "/opt/my tools/libexec/vaultctl/vaultctl-gate")
        #expect(command == "sudo chown root:vaultctl \"/opt/my tools/libexec/vaultctl/vaultctl-gate\" && sudo chmod 2755 \"/opt/my tools/libexec/vaultctl/vaultctl-gate\"")
        #expect(opt.reinstall.contains("'sudo make install PREFIX=/opt/vc'"))
    }
}
