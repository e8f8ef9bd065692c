import Synchronization

/// The call site of a debounce or throttle call: `fileID:line:column`, captured with `#fileID`,
/// `#line` and `#column` default arguments. Hashing and comparing it builds no string.
struct CallSite: Hashable, Sendable, CustomStringConvertible {
    let fileID: StaticString
    let line: UInt
    let column: UInt

    static func == (lhs: CallSite, rhs: CallSite) -> Bool {
        guard lhs.line == rhs.line, lhs.column == rhs.column else { return false }
        if lhs.fileID.utf8Start == rhs.fileID.utf8Start { return true }
        return lhs.fileID.withUTF8Buffer { a in
            rhs.fileID.withUTF8Buffer { b in a.elementsEqual(b) }
        }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(line)
        hasher.combine(column)
        hasher.combine(fileID.utf8CodeUnitCount)
    }

    var description: String { "\(fileID):\(line):\(column)" }
}

/// What groups calls together: an explicit identifier, or else the call site; or one scoped
/// object (``Debouncer``, ``Throttler``), whose calls form a group of their own.
enum GroupKey: Hashable, Sendable, CustomStringConvertible {
    case site(CallSite)
    case name(String)
    case instance(UInt64)

    private static let lastInstance = Atomic<UInt64>(0)

    /// A key no other group uses, for a new scoped object.
    static func newInstance() -> GroupKey {
        .instance(lastInstance.add(1, ordering: .relaxed).newValue)
    }

    init(_ identifier: String?, _ fileID: StaticString, _ line: UInt, _ column: UInt) {
        if let identifier {
            self = .name(identifier)
        } else {
            self = .site(CallSite(fileID: fileID, line: line, column: column))
        }
    }

    var description: String {
        switch self {
        case .site(let site): site.description
        case .name(let name): name
        case .instance(let id): "instance #\(id)"
        }
    }
}
