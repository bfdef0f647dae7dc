#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// Issue 36, point 5, end to end: the built binary says what its own install needs. Run from the build tree
/// it says it is not installed and to install (either way), never a command as if it were; the same binary
/// at PREFIX/bin/vaultctl beside PREFIX/libexec/vaultctl (as `make install` puts it, its gate gone) names
/// `make install` with that PREFIX. The package's words come from the package's build (`InstallationTests`).
@Suite("Install remedies", .tags(.needsServices))
struct InstallRemedyTests {
    @Test func theBuildTreesBinarySaysToInstall() throws {
        let sb = try Sandbox(busAddress: "unix:path=/nonexistent/bus")
        let folder = Paths.folder(of: Paths.vaultctl)
        let protect = try sb.vaultctl(["device-key", "protect"])
        #expect(protect.status == 69, "\(protect)")
        #expect(protect.stderr.contains("this vaultctl is not an installed one (it runs from \(folder))"), "\(protect.stderr)")
        #expect(protect.stderr.contains("install it ('sudo make install' in its source tree, or the Debian package) and run the installed vaultctl"), "\(protect.stderr)")
        #expect(!protect.stderr.contains("install vaultctl again"), "\(protect.stderr)")

        try sb.store("x", Array("one".utf8), mode: "device")
        let status = try sb.vaultctl(["device-key", "status"])
        #expect(status.status == 0 && status.stdoutText.contains("To close that, use an installed vaultctl ('sudo make install' in its source tree, or the Debian package), which has the gate beside it: this one is not installed (it runs from \(folder))."), "\(status)")
    }

    @Test func aMakeInstallUnderAPrefixNamesThatPrefix() throws {
        let sb = try Sandbox(busAddress: "unix:path=/nonexistent/bus")
        let prefix = "\(sb.root)/opt"
        for folder in [prefix, "\(prefix)/bin", "\(prefix)/libexec", "\(prefix)/libexec/vaultctl"] { mkdir(folder, 0o755) }
        let binary = "\(prefix)/bin/vaultctl"
        // A hard link keeps the path the kernel reports for the executable; a copy where links cannot go.
        if link(Paths.vaultctl, binary) != 0 {
            try FileManager.default.copyItem(atPath: Paths.vaultctl, toPath: binary)
        }
        let env = try sb.environment(askpass: .correct)
        let protect = ProcessRunner.run(binary, ["device-key", "protect"], environment: env)
        #expect(protect.status == 69, "\(protect)")
        #expect(protect.stderr.contains("install vaultctl again with 'sudo make install PREFIX=\(prefix)' in its source tree"), "\(protect.stderr)")
        #expect(!protect.stderr.contains("not an installed one") && !protect.stderr.contains("apt"), "\(protect.stderr)")

        // Without libexec/vaultctl beside bin/, the same file is a copy, not an install.
        rmdir("\(prefix)/libexec/vaultctl")
        let copy = ProcessRunner.run(binary, ["device-key", "protect"], environment: env)
        #expect(copy.status == 69 && copy.stderr.contains("this vaultctl is not an installed one (it runs from \(prefix)/bin)"), "\(copy)")
    }
}
