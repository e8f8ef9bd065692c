import Synchronization

/// The call site of a debounce or throttle call: `fileID:line:column`, captured with `#fileID`,
/// `#line` and `#column` default arguments. Hashing and comparing it builds no string.
///
/// A wrapper that forwards its own caller's file ID as a `String` gives `fileText` instead;
/// sites compare by their text, so either form of one file ID names the same site.
struct CallSite: Hashable, Sendable, CustomStringConvertible {
    let fileID: StaticString
    /// The file ID when it was given as a `String`; `fileID` is then unused.
    let fileText: String?
    let line: UInt
    let column: UInt

    init(fileID: StaticString, line: UInt, column: UInt) {
        self.fileID = fileID
        self.fileText = nil
        self.line = line
        self.column = column
    }

    init(fileText: String, line: UInt, column: UInt) {
        self.fileID = ""
        self.fileText = fileText
        self.line = line
        self.column = column
    }

    static func == (lhs: CallSite, rhs: CallSite) -> Bool {
        guard lhs.line == rhs.line, lhs.column == rhs.column else { return false }
        switch (lhs.fileText, rhs.fileText) {
        case (nil, nil):
            if lhs.fileID.utf8Start == rhs.fileID.utf8Start { return true }
            return lhs.fileID.withUTF8Buffer { a in
                rhs.fileID.withUTF8Buffer { b in a.elementsEqual(b) }
            }
        case (let a?, let b?):
            return a == b
        case (let text?, nil):
            return rhs.fileID.withUTF8Buffer { text.utf8.elementsEqual($0) }
        case (nil, let text?):
            return lhs.fileID.withUTF8Buffer { text.utf8.elementsEqual($0) }
        }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(line)
        hasher.combine(column)
        hasher.combine(fileText?.utf8.count ?? fileID.utf8CodeUnitCount)
    }

    var description: String { "\(fileText ?? "\(fileID)"):\(line):\(column)" }
}

/// What groups calls together: an explicit identifier, or else the call site; or one scoped
/// object (``Debouncer``, ``Throttler``), whose calls form a group of their own.
///
/// Make identifier keys with ``name(_:)``. An identifier longer than ``hashedInPlace`` bytes
/// carries its hash, computed once when the key is made, before any lock is taken: the tables
/// then hash one integer, whatever its length, so a long identifier never holds the registry's
/// lock while it is hashed. Shorter ones are hashed by the tables as they are, which costs less
/// than hashing them twice.
enum GroupKey: Hashable, Sendable, CustomStringConvertible {
    case site(CallSite)
    /// An identifier, with its hash when it is long.
    case named(String, hash: Int?)
    case instance(UInt64)

    /// The longest identifier, in UTF-8 bytes, hashed by the tables themselves.
    static let hashedInPlace = 64

    private static let lastInstance = Atomic<UInt64>(0)

    /// The key of an explicit identifier; a long one is hashed here, outside any lock.
    static func name(_ identifier: String) -> GroupKey {
        guard identifier.utf8.count > hashedInPlace else { return .named(identifier, hash: nil) }
        var hasher = Hasher()
        hasher.combine(identifier)
        return .named(identifier, hash: hasher.finalize())
    }

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

    /// The key of a call whose file ID was forwarded as a `String` (by a wrapper).
    init(_ identifier: String?, _ fileID: String, _ line: UInt, _ column: UInt) {
        if let identifier {
            self = .name(identifier)
        } else {
            self = .site(CallSite(fileText: fileID, line: line, column: column))
        }
    }

    static func == (lhs: GroupKey, rhs: GroupKey) -> Bool {
        switch lhs {
        case .site(let a):
            guard case .site(let b) = rhs else { return false }
            return a == b
        case .named(let a, let hashA):
            guard case .named(let b, let hashB) = rhs else { return false }
            return hashA == hashB && a == b
        case .instance(let a):
            guard case .instance(let b) = rhs else { return false }
            return a == b
        }
    }

    func hash(into hasher: inout Hasher) {
        switch self {
        case .site(let site):
            hasher.combine(0 as UInt8)
            site.hash(into: &hasher)
        case .named(let name, let hash):
            hasher.combine(1 as UInt8)
            if let hash { hasher.combine(hash) } else { hasher.combine(name) }
        case .instance(let id):
            hasher.combine(2 as UInt8)
            hasher.combine(id)
        }
    }

    /// What picks the key's shard of the registry: a cheap mix of the call site, of a long
    /// identifier's hash, or of a short ASCII identifier's bytes. Not the tables' hash: hashing
    /// the key fully here and again in the table cost a second hash per call.
    var shardHash: Int {
        switch self {
        case .site(let site):
            return Int(truncatingIfNeeded: site.line &* 0x9E37_79B1 ^ site.column &* 0x85EB_CA77)
        case .named(let name, let hash):
            if let hash { return hash }
            // Only ASCII text is equal exactly when its bytes are: other identifiers can be
            // equal as Swift strings (canonically equivalent) with other bytes, so they take
            // the string's own hash.
            var copy = name
            let ascii = copy.withUTF8 { bytes -> Int? in
                var mix: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
                for byte in bytes {
                    guard byte < 0x80 else { return nil }
                    mix = (mix ^ UInt64(byte)) &* 0x100_0000_01b3
                }
                return Int(truncatingIfNeeded: mix ^ (mix >> 29))
            }
            return ascii ?? name.hashValue
        case .instance(let id):
            return Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> 32)
        }
    }

    var description: String {
        switch self {
        case .site(let site): site.description
        case .named(let name, _): name
        case .instance(let id): "instance #\(id)"
        }
    }
}
