import Synchronization

/// The call site of a debounce or throttle call: `fileID:line:column`, captured with `#fileID`,
/// `#line` and `#column` default arguments. Hashing and comparing it builds no string.
///
/// A wrapper that forwards its own caller's file ID as a `String` gives `fileText` instead;
/// sites compare by their file ID's UTF-8 bytes, as `#fileID` gives them, so either form of one
/// file ID names the same site (and two spellings equal only as Swift strings name two).
struct CallSite: Hashable, Sendable, CustomStringConvertible {
    let fileID: StaticString
    /// The file ID when it was given as a `String`; `fileID` is then unused.
    let fileText: String?
    /// Line and column, 32 bits each: a smaller key is copied faster (no source file
    /// reaches four billion lines). A wrapper may forward any `UInt`, though: a site with a
    /// wider line or column keeps the full values in `fileText` (see `init(fileText:line:column:)`).
    let line: UInt32
    let column: UInt32

    init(fileID: StaticString, line: UInt, column: UInt) {
        if line <= UInt32.max, column <= UInt32.max {
            self.init(
                fileID, nil, UInt32(truncatingIfNeeded: line), UInt32(truncatingIfNeeded: column))
        } else {
            self.init(fileText: "\(fileID)", line: line, column: column)
        }
    }

    init(fileText: String, line: UInt, column: UInt) {
        // Sites that agree only in the low 32 bits of their line and column stay apart: the
        // full values follow the file ID, after a NUL, which no file ID holds.
        let text =
            line <= UInt32.max && column <= UInt32.max
            ? fileText : "\(fileText)\u{0}\(line):\(column)"
        self.init("", text, UInt32(truncatingIfNeeded: line), UInt32(truncatingIfNeeded: column))
    }

    private init(_ fileID: StaticString, _ fileText: String?, _ line: UInt32, _ column: UInt32) {
        self.fileID = fileID
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
            // By bytes, as the other cases: `==` on strings (canonical equivalence) would make
            // equal two texts whose lengths, and so hashes, differ.
            return a.utf8.elementsEqual(b.utf8)
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

    var description: String {
        guard let fileText else { return "\(fileID):\(line):\(column)" }
        guard let wide = fileText.utf8.firstIndex(of: 0) else {
            return "\(fileText):\(line):\(column)"
        }
        return "\(fileText[..<wide]):\(fileText[fileText.utf8.index(after: wide)...])"
    }
}

/// What groups calls together: an explicit identifier, or else the call site; or one scoped
/// object (``Debouncer``, ``Throttler``), whose calls form a group of their own.
///
/// Make identifier keys with ``name(_:)``. An identifier key carries a mix of its text,
/// computed once when the key is made, before any lock is taken: the tables hash that one
/// integer and the registry picks the key's shard from it, so an identifier of any length is
/// read once per call and never while a lock is held. Equal identifiers (Swift compares
/// strings by canonical equivalence) always get the same mix.
enum GroupKey: Hashable, Sendable, CustomStringConvertible {
    case site(CallSite)
    /// An identifier, with the mix of its text.
    case named(String, mix: Int)
    case instance(UInt64)

    /// The scalars (outside ASCII) whose own string equals an ASCII character's, and that
    /// character: the Greek question mark, the Greek varia and the Kelvin sign. Swift compares
    /// strings by canonical equivalence, and these are the only scalars a string can hold and
    /// still equal an ASCII string; the mix reads them as their ASCII byte.
    static let asciiEquivalents: [UInt32: UInt8] = [0x037E: 0x3B, 0x1FEF: 0x60, 0x212A: 0x4B]

    private static let lastInstance = Atomic<UInt64>(0)

    /// The key of an explicit identifier; its text is mixed here, outside any lock.
    static func name(_ identifier: String) -> GroupKey {
        .named(identifier, mix: mix(of: identifier))
    }

    /// The mix of an identifier's text.
    private static func mix(of identifier: String) -> Int {
        let ascii = identifier.utf8.withContiguousStorageIfAvailable { asciiMix($0) } ?? nil
        return ascii ?? nonASCIIMix(identifier)
    }

    /// A key no other group uses, for a new scoped object.
    static func newInstance() -> GroupKey {
        .instance(lastInstance.add(1, ordering: .relaxed).newValue)
    }

    init(_ identifier: String?, _ fileID: StaticString, _ line: UInt, _ column: UInt) {
        if let identifier {
            // The case itself, not `.name(identifier)`: assigning a key made elsewhere copies
            // it and destroys the original, on every call.
            self = .named(identifier, mix: Self.mix(of: identifier))
        } else {
            self = .site(CallSite(fileID: fileID, line: line, column: column))
        }
    }

    /// The key of a call whose file ID was forwarded as a `String` (by a wrapper).
    init(_ identifier: String?, _ fileID: String, _ line: UInt, _ column: UInt) {
        if let identifier {
            self = .named(identifier, mix: Self.mix(of: identifier))
        } else {
            self = .site(CallSite(fileText: fileID, line: line, column: column))
        }
    }

    static func == (lhs: GroupKey, rhs: GroupKey) -> Bool {
        switch lhs {
        case .site(let a):
            guard case .site(let b) = rhs else { return false }
            return a == b
        case .named(let a, let mixA):
            guard case .named(let b, let mixB) = rhs else { return false }
            return mixA == mixB && a == b
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
        case .named(_, let mix):
            hasher.combine(1 as UInt8)
            hasher.combine(mix)
        case .instance(let id):
            hasher.combine(2 as UInt8)
            hasher.combine(id)
        }
    }

    /// What the tables hash, without running `Hasher` over the key again (a second full hash
    /// on every lookup; see ArchitectureHotPath.md): the key's own mix, folded
    /// with the table's seed. An identifier's mix is already seeded once per process, so a
    /// second hash would add no protection against chosen collisions; a call site's comes from
    /// source code. Equal keys give equal values: a site's file ID counts by its length, which
    /// both of its forms share. So sites at one line and column in files whose IDs have one
    /// length hash alike: the tables then tell them apart by `==`, a probe per such site
    /// (accepted: sites come from source code, and few files share a length, a line and a
    /// column; GroupKeyAdversarialTests checks 500).
    func _rawHashValue(seed: Int) -> Int {
        let tag: UInt64
        switch self {
        case .site(let site):
            tag = UInt64(
                truncatingIfNeeded: site.fileText?.utf8.count ?? site.fileID.utf8CodeUnitCount)
        case .named: tag = 1
        case .instance: tag = 2
        }
        var x =
            UInt64(truncatingIfNeeded: shardHash) ^ UInt64(truncatingIfNeeded: seed) ^ tag
            &* 0x9E37_79B9_7F4A_7C15
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return Int(truncatingIfNeeded: x ^ (x >> 32))
    }

    /// What picks the key's shard of the registry: a cheap mix of the call site, or an
    /// identifier's mix. Keys that are equal always get the same value, so all the state of one
    /// key lives in one shard.
    var shardHash: Int {
        switch self {
        case .site(let site):
            return Int(
                truncatingIfNeeded: UInt(site.line) &* 0x9E37_79B1 ^ UInt(site.column)
                    &* 0x85EB_CA77)
        case .named(_, let mix):
            return mix
        case .instance(let id):
            return Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> 32)
        }
    }

    /// The mix of ASCII bytes, or `nil` when a byte is not ASCII.
    private static func asciiMix(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var mix = Mix(count: bytes.count)
        for byte in bytes {
            guard byte < 0x80 else { return nil }
            mix.add(byte)
        }
        return mix.value
    }

    /// The mix of an identifier that is not ASCII. One equal to an ASCII string (its scalars
    /// are ASCII or ``asciiEquivalents``) mixes as that string; any other is equal only to
    /// identifiers that are not ASCII either, and takes the string's own hash, which canonical
    /// equivalence keeps equal.
    private static func nonASCIIMix(_ name: String) -> Int {
        var mix = Mix(count: name.unicodeScalars.count)
        for scalar in name.unicodeScalars {
            if scalar.isASCII {
                mix.add(UInt8(scalar.value))
            } else if let byte = asciiEquivalents[scalar.value] {
                mix.add(byte)
            } else {
                return name.hashValue
            }
        }
        return mix.value
    }

    /// FNV-1a over bytes, from a state seeded once per process (so which identifiers collide
    /// cannot be known ahead), folded.
    private struct Mix {
        private static let seed = UInt64.random(in: .min ... .max)
        private var state: UInt64
        init(count: Int) { state = Self.seed ^ UInt64(count) }
        mutating func add(_ byte: UInt8) { state = (state ^ UInt64(byte)) &* 0x100_0000_01b3 }
        var value: Int { Int(truncatingIfNeeded: state ^ (state >> 29)) }
    }

    var description: String {
        switch self {
        case .site(let site): site.description
        case .named(let name, _): name
        case .instance(let id): "instance #\(id)"
        }
    }
}
