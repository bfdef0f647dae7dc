// A release build (`make release`, with the static stdlib) builds every target of the package, this one
// too, and has no Testing module: the tags exist only where the tests are built.
#if canImport(Testing)
import Testing

/// What a suite needs beyond the build, so that a fast tier can leave it out on a machine without it:
/// `make test-fast` runs every suite tagged with neither (scripts/tagged-suites.py names the tagged ones; the
/// Swift 6.3 `swift test` cannot select by tag). Put them on a top-level suite's `@Suite(…, .tags(…))`; a
/// single test that needs root in a suite that does not checks `geteuid()` itself.
extension Tag {
    /// Root: a mount or network namespace, `useradd`, `/var/lib/vaultctl`, a file given to another user or
    /// group, `setpriv` to another user or without capabilities.
    @Tag public static var needsRoot: Self
    /// Services the tests start: pam_wrapper's PAM stack, D-Bus with gnome-keyring or KeePassXC, swtpm, sshd,
    /// fprintd, an X or Wayland display.
    @Tag public static var needsServices: Self
}
#endif
