/// Carries a value that is not `Sendable` (a `Sandbox`) to the threads of `Parallel.run`. Safe here because
/// those threads only read it: its paths and environment never change, and its name counter is locked.
public struct Shared<T>: @unchecked Sendable {
    public let value: T
    public init(_ value: T) { self.value = value }
}
