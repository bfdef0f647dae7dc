extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps `body`'s typed error: the standard one rethrows `any Error`, so each
    /// caller would otherwise carry its error out in a `Result`.
    public func withTypedUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytes { raw in Result { () throws(E) -> R in try body(raw) } }.get()
    }
}
