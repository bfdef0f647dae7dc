/// Where a value sits in a JSON document, for error messages: `origin.remoteRanges[2]`.
///
/// Keys are joined with `.` and array positions (from 0) written as `[i]`; the document itself is the
/// empty path. A key that holds a `.` is written as it is, so two paths may print alike; the text is for
/// people, not for finding the value again.
///
/// `Sendable`: values only.
package struct JSONPath: Sendable, Equatable, CustomStringConvertible {
    /// One step down: into an object's member or an array's element.
    package enum Component: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    package var components: [Component]

    package init(_ components: [Component] = []) {
        self.components = components
    }

    /// True for the document itself.
    package var isEmpty: Bool { components.isEmpty }

    /// This path, one step further down.
    package func appending(_ component: Component) -> JSONPath {
        JSONPath(components + [component])
    }

    package var description: String {
        var out = ""
        for component in components {
            switch component {
            case .key(let key): out += out.isEmpty ? key : ".\(key)"
            case .index(let index): out += "[\(index)]"
            }
        }
        return out
    }
}
