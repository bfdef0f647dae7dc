#if canImport(Testing)
import Testing

extension ProcessResult {
    /// Expects the run to have failed with `status`, printing nothing on standard output (a failure never
    /// prints part of a value) and, when given, saying `text` on standard error.
    public func expectFailure(_ status: Int32, saying text: String? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(self.status == status, "\(self)", sourceLocation: sourceLocation)
        #expect(stdout.isEmpty, sourceLocation: sourceLocation)
        if let text { #expect(stderr.contains(text), "\(stderr)", sourceLocation: sourceLocation) }
    }
}
#endif
