import GateProtocol
import VaultRules

#if canImport(Glibc)
import Glibc
#endif

/// The program that reaches this session's clipboard, chosen as `pass` chooses it: wl-copy when the
/// session is Wayland (`WAYLAND_DISPLAY`), else xclip or xsel on X11 (`DISPLAY`).
///
/// The secret only ever goes to the tool's standard input; its arguments name the selection, never a value.
public struct ClipboardTool: Sendable {
    public enum Kind: String, Sendable {
        case wlCopy = "wl-copy"
        case xclip
        case xsel
    }

    public let kind: Kind
    /// Absolute paths of the programs, found in PATH.
    let copyProgram: String
    let pasteProgram: String
    /// Where it goes, for the message: `Wayland display wayland-0` or `X11 display :0`.
    public let session: String

    var copyArguments: [String] {
        switch kind {
        case .wlCopy: return [copyProgram]
        case .xclip: return [copyProgram, "-selection", "clipboard", "-in"]
        case .xsel: return [copyProgram, "--clipboard", "--input"]
        }
    }

    var pasteArguments: [String] {
        switch kind {
        case .wlCopy: return [pasteProgram, "--no-newline"]
        case .xclip: return [copyProgram, "-selection", "clipboard", "-out"]
        case .xsel: return [copyProgram, "--clipboard", "--output"]
        }
    }

    /// The clearing command, and whether it wants an empty standard input (xclip sets an empty selection).
    var clearArguments: [String] {
        switch kind {
        case .wlCopy: return [copyProgram, "--clear"]
        case .xclip: return [copyProgram, "-selection", "clipboard", "-in"]
        case .xsel: return [copyProgram, "--clipboard", "--clear"]
        }
    }

    /// Why no clipboard can be reached: a sentence naming what to install or set.
    public struct Unavailable: Error, Sendable {
        public let reason: String
    }

    /// The tool for the session the environment describes.
    public static func forSession() throws(Unavailable) -> ClipboardTool {
        let wayland = environment("WAYLAND_DISPLAY")
        let display = environment("DISPLAY")
        if let wayland, let copy = find("wl-copy"), let paste = find("wl-paste") {
            return ClipboardTool(kind: .wlCopy, copyProgram: copy, pasteProgram: paste, session: "Wayland display \(wayland)")
        }
        if let display {
            for kind in [Kind.xclip, .xsel] {
                if let path = find(kind.rawValue) {
                    return ClipboardTool(kind: kind, copyProgram: path, pasteProgram: path, session: "X11 display \(display)")
                }
            }
        }
        if wayland != nil {
            throw Unavailable(reason: "no clipboard tool for this Wayland session: install wl-clipboard (wl-copy and wl-paste)")
        }
        if display != nil {
            throw Unavailable(reason: "no clipboard tool for this X11 session: install xclip or xsel")
        }
        throw Unavailable(reason: "no graphical session to hold a clipboard (WAYLAND_DISPLAY and DISPLAY are unset); read it without --clip")
    }

    static func environment(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    /// `name` in PATH (executable), as the shell would find it.
    static func find(_ name: String) -> String? {
        let path = environment("PATH") ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") where dir.hasPrefix("/") {
            let candidate = "\(dir)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
