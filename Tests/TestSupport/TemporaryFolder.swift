import Foundation

/// A private (0700) folder of its own for one test, removed with everything in it when released. The one
/// temporary-folder type of every test target (the shared test-support target, `TestSupport`).
public final class TemporaryFolder {
    public let path: String

    public init() {
        var template = Array("\(NSTemporaryDirectory().trimmingSuffix("/"))/vaulttests.XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            fatalError("mkdtemp failed: errno \(errno)")
        }
        path = String(cString: made)
    }

    /// A path inside the folder (nothing is created).
    public func appending(_ component: String) -> String { "\(path)/\(component)" }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
