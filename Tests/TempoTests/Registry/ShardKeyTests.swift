import TempoTesting
import Testing

@_spi(Benchmarks) @testable import Tempo

/// Equal identifiers are one group, whichever shard count the registry has: Swift compares
/// strings by canonical equivalence, so an identifier spelled with another scalar sequence is
/// the same identifier and must find the same shard.
@Suite struct ShardKeyTests {
    /// Identifiers equal as Swift strings, with different scalars. The first three pairs are
    /// non-ASCII spellings of ASCII text (the only scalars canonically equivalent to ASCII: the
    /// Kelvin sign, the Greek question mark and the Greek varia); the last is a composed and a
    /// decomposed accent.
    static let equalPairs: [(String, String)] = [
        ("K", "\u{212A}"),
        ("a;b", "a\u{037E}b"),
        ("x`", "x\u{1FEF}"),
        ("caf\u{E9}", "cafe\u{301}"),
        // Equal, but one is 64 UTF-8 bytes and the other 192: a rule that treats long
        // identifiers differently must not split them.
        (String(repeating: "K", count: 64), String(repeating: "\u{212A}", count: 64)),
    ]

    @Test func canonicallyEquivalentIdentifiersAreOneKeyAndOneShard() {
        for (a, b) in Self.equalPairs {
            #expect(a == b)
            #expect(GroupKey.name(a) == GroupKey.name(b))
            #expect(GroupKey.name(a).shardHash == GroupKey.name(b).shardHash, "\(a) vs \(b)")
            var hashers = (Hasher(), Hasher())
            GroupKey.name(a).hash(into: &hashers.0)
            GroupKey.name(b).hash(into: &hashers.1)
            #expect(hashers.0.finalize() == hashers.1.finalize(), "\(a) vs \(b)")
        }
    }

    /// The tables hash a key with its own `_rawHashValue(seed:)`, not `Hasher`: equal keys
    /// (identifiers spelled two ways, a call site given as a `StaticString` or forwarded as a
    /// `String`) must hash equal under every seed a table may pick, and a table must find one
    /// with the other.
    @Test func equalKeysHashEqualInTheTables() {
        let site: StaticString = "Module/File.swift"
        var pairs = Self.equalPairs.map { (GroupKey.name($0.0), GroupKey.name($0.1)) }
        pairs.append(
            (GroupKey(nil, site, 12, 7), GroupKey(nil, "Module/File.swift" as String, 12, 7)))
        let instance = GroupKey.newInstance()
        pairs.append((instance, instance))
        for (a, b) in pairs {
            #expect(a == b)
            for seed in [0, 1, -1, 0x5EED, Int.max, Int.min] {
                #expect(a._rawHashValue(seed: seed) == b._rawHashValue(seed: seed), "\(a)")
            }
            let table = [a: 1]
            #expect(table[b] == 1, "\(a)")
        }
        // Keys that differ only in what the mix does not read still differ in the tables.
        let near = [
            GroupKey(nil, site, 12, 7), GroupKey(nil, site, 12, 8), GroupKey(nil, site, 13, 7),
            GroupKey(nil, "Module/Other.swift" as StaticString, 12, 7), GroupKey.name("12"),
        ]
        #expect(Set(near).count == near.count)
    }

    /// The scalars the key's ASCII mapping knows are exactly those whose own string equals an
    /// ASCII string: checked over every scalar, so a Unicode update that adds one fails here.
    @Test func theOnlyScalarsEqualToASCIIAreTheMappedOnes() async {
        var found: [UInt32: UInt8] = [:]
        var asciiByString: [String: UInt8] = [:]
        for byte in UInt8(0)..<0x80 { asciiByString[String(UnicodeScalar(byte))] = byte }
        for value in UInt32(0x80)...0x10FFFF {
            // A second of work with no suspension: every 16,384 scalars (about 15 ms), give the
            // thread of the task pool back to the rest of a parallel run.
            if value % 0x4000 == 0 { await Task.yield() }
            guard let scalar = Unicode.Scalar(value) else { continue }
            // Only scalars whose string is one ASCII character can be equal to one.
            if let byte = asciiByString[String(Character(scalar))] { found[value] = byte }
        }
        #expect(found == GroupKey.asciiEquivalents)
    }

    /// End to end, with 64 shards: a burst spelled two ways is one burst, and only its last
    /// call runs.
    @Test func aBurstSpelledTwoWaysIsOneBurst() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock, shardCount: 64)
        let runs = Lock<[String]>([])
        for (a, b) in Self.equalPairs {
            registry.withCurrent {
                debounce(.seconds(1), identifier: a, by: .taskContext) {
                    runs.withLock { $0.append("first \(a)") }
                }
                debounce(.seconds(1), identifier: b, by: .taskContext) {
                    runs.withLock { $0.append("last \(a)") }
                }
            }
        }
        #expect(registry.liveKeyCount == Self.equalPairs.count)
        await registry.withCurrent { await clock.advance(by: .seconds(1)) }
        #expect(runs.withLock { $0.sorted() } == Self.equalPairs.map { "last \($0.0)" }.sorted())
        #expect(registry.liveKeyCount == 0)
    }
}
