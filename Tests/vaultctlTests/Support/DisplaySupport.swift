#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TestSupport

/// A headless X server (Xvfb) for one test, on a display number it picks itself; stopped on deinit.
final class VirtualX11 {
    let display: String
    private let pid: pid_t

    init() throws {
        let folder = try Fixtures.makeFolder("xvfb")
        let numberFile = "\(folder)/display"
        // Its own bound (timeout) keeps it from outliving a test process that died.
        let start = ProcessRunner.run(Paths.tool("sh"), ["-c", """
            timeout 300 Xvfb -displayfd 1 -nolisten tcp -screen 0 320x240x24 >'\(numberFile)' 2>'\(folder)/log' </dev/null & echo $!
            """], environment: Fixtures.baseEnvironment)
        try #require(start.status == 0, "\(start)")
        pid = pid_t(start.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        var number: String?
        for _ in 0..<400 {  // up to 20 s: the whole suite runs beside it, and a loaded machine starts it slowly
            if let n = FileText.read(numberFile)?.trimmingCharacters(in: .whitespacesAndNewlines), !n.isEmpty {
                number = n
                break
            }
            usleep(50_000)
        }
        display = ":\(try #require(number, "Xvfb did not start: \(FileText.read("\(folder)/log") ?? "")"))"
    }

    deinit {
        if pid > 0 { kill(pid, SIGTERM) }
    }
}

/// A headless Wayland compositor (sway with the wlroots headless backend, which offers the data-control
/// protocol wl-copy uses) for one test. sway refuses to run as root, so it runs as `nobody` with a runtime
/// folder of its own; root reaches its socket anyway.
final class HeadlessWayland {
    let runtimeFolder: String
    let socket: String
    private let pid: pid_t

    init() throws {
        var template = Array("/tmp/vaultctl-wl.XXXXXX".utf8CString)
        let made = try #require(mkdtemp(&template))
        runtimeFolder = String(cString: made)
        try #require(chown(runtimeFolder, 65534, 65534) == 0 && chmod(runtimeFolder, 0o700) == 0)
        try #require(FileText.write("\(runtimeFolder)/config", ""))
        chmod("\(runtimeFolder)/config", 0o644)
        let env = ["PATH": Paths.systemPATH, "XDG_RUNTIME_DIR": runtimeFolder, "HOME": runtimeFolder,
                   "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman"]
        let start = ProcessRunner.run(Paths.tool("sh"), ["-c", """
            cd / && timeout 300 setpriv --reuid=65534 --regid=65534 --clear-groups sway -c '\(runtimeFolder)/config' \
              >/dev/null 2>'\(runtimeFolder)/log' </dev/null & echo $!
            """], environment: env)
        try #require(start.status == 0, "\(start)")
        pid = pid_t(start.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        var found: String?
        for _ in 0..<400 {  // up to 20 s: the whole suite runs beside it, and a loaded machine starts it slowly
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: runtimeFolder)) ?? []
            if let s = entries.first(where: { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }) {
                found = s
                break
            }
            usleep(50_000)
        }
        socket = try #require(found, "sway did not start: \(FileText.read("\(runtimeFolder)/log") ?? "")")
    }

    var environment: [String: String] { ["WAYLAND_DISPLAY": socket, "XDG_RUNTIME_DIR": runtimeFolder] }

    deinit {
        // The folder goes once sway has (`timeout` ends when its child has): it may still write there.
        if pid > 0 && kill(pid, SIGTERM) == 0 { _ = Wait.until(seconds: 5) { !Processes.isRunning(pid) } }
        try? FileManager.default.removeItem(atPath: runtimeFolder)
    }
}
