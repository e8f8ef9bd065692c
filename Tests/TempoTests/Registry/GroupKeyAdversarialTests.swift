import TempoTesting
import Testing

@testable import Tempo

/// Keys that must be equal, and keys that must differ, at the edges: forwarded file IDs,
/// line and column values past 32 bits, huge and empty identifiers, and many keys whose hashes
/// collide on purpose.
@Suite struct GroupKeyAdversarialTests {
    private static let seeds = [0, 1, -1, 0x5EED, Int.max, Int.min]

    private func expectEqualKeys(
        _ a: GroupKey, _ b: GroupKey, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(a == b, sourceLocation: sourceLocation)
        #expect(b == a, sourceLocation: sourceLocation)
        for seed in Self.seeds {
            #expect(
                a._rawHashValue(seed: seed) == b._rawHashValue(seed: seed),
                sourceLocation: sourceLocation)
        }
        #expect(a.shardHash == b.shardHash, sourceLocation: sourceLocation)
        #expect([a: 1][b] == 1, sourceLocation: sourceLocation)
    }

    /// Call sites compare by their file ID's bytes, as `#fileID` gives them: two forwarded
    /// spellings that are equal only as Swift strings (canonical equivalence) are two sites.
    /// Comparing them as strings made one site equal to both while they differed from each
    /// other, and equal keys hashed apart (their UTF-8 lengths differ).
    @Test func forwardedFileIDsCompareByTheirBytes() {
        let composed: StaticString = "Caf\u{E9}/File.swift"
        let a = GroupKey(nil, composed, 3, 4)
        let b = GroupKey(nil, "Caf\u{E9}/File.swift" as String, 3, 4)
        let c = GroupKey(nil, "Cafe\u{301}/File.swift" as String, 3, 4)
        expectEqualKeys(a, b)
        #expect(a != c)
        #expect(b != c)
        #expect(Set([a, b, c]).count == 2)
    }

    /// A wrapper may forward any `UInt` line and column: values that agree only in their low
    /// 32 bits are different sites, in both file-ID forms, and each is equal to itself.
    @Test func linesAndColumnsPast32BitsAreNotTruncatedTogether() {
        let file: StaticString = "Module/File.swift"
        let wide = UInt(UInt32.max) + 1
        let narrow = GroupKey(nil, file, 7, 9)
        let wideLine = GroupKey(nil, file, 7 + wide, 9)
        let wideColumn = GroupKey(nil, file, 7, 9 + wide)
        #expect(narrow != wideLine)
        #expect(narrow != wideColumn)
        #expect(wideLine != wideColumn)
        #expect(Set([narrow, wideLine, wideColumn]).count == 3)
        expectEqualKeys(wideLine, GroupKey(nil, "Module/File.swift" as String, 7 + wide, 9))
        expectEqualKeys(GroupKey(nil, file, .max, .max), GroupKey(nil, file, .max, .max))
        #expect(wideLine.description == "Module/File.swift:\(7 + wide):9")
    }

    @Test func wideLinesAreSeparateBurstsEndToEnd() async {
        let runs = Log<UInt>()
        await onManualClock { clock, _ in
            for line in [UInt(1), UInt(1) + UInt(UInt32.max) + 1] {
                debounce(.seconds(1), by: .taskContext, fileID: "Wrapper.swift", line: line) {
                    runs.append(line)
                }
            }
            await clock.advance(by: .seconds(1))
        }
        #expect(runs.all.sorted() == [1, UInt(1) + UInt(UInt32.max) + 1])
    }

    @Test func emptyHugeAndLateDifferingIdentifiers() {
        expectEqualKeys(.name(""), .name(String("")))
        let huge = String(repeating: "a", count: 1 << 20)
        expectEqualKeys(.name(huge), .name(String(huge.utf8.map { Character(.init($0)) })))
        let prefix = String(repeating: "p", count: 64)
        #expect(GroupKey.name(prefix + "a") != GroupKey.name(prefix + "b"))
        #expect(GroupKey.name(huge + "a") != GroupKey.name(huge + "b"))
        #expect(GroupKey.name("") != GroupKey.name("\u{0}"))
    }

    /// A one-scalar `StaticString` has no pointer; a key made of it still compares and hashes.
    @Test func aOneScalarStaticStringFileID() {
        let scalar: StaticString = "a"
        expectEqualKeys(GroupKey(nil, scalar, 1, 1), GroupKey(nil, "a" as String, 1, 1))
        #expect(GroupKey(nil, scalar, 1, 1) != GroupKey(nil, "b" as StaticString, 1, 1))
    }

    /// Sites at one line and column in files whose IDs have one length hash alike in the
    /// tables: the tables still keep them apart and find each one.
    @Test func manySitesWithOneHashStayDistinct() async {
        let files = (0..<500).map { "Module/F\(1000 + $0).swift" }
        let keys = files.map { GroupKey(nil, $0, 10, 5) }
        #expect(Set(keys.map { $0._rawHashValue(seed: 0) }).count == 1)
        let table = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        #expect(table.count == keys.count)
        #expect(keys.enumerated().allSatisfy { table[$1] == $0 })
        let runs = Log<Int>()
        await onManualClock { clock, registry in
            for (index, file) in files.prefix(300).enumerated() {
                debounce(.seconds(1), by: .taskContext, fileID: file, line: 10, column: 5) {
                    runs.append(index)
                }
            }
            #expect(registry.liveKeyCount == 300)
            await clock.advance(by: .seconds(1))
        }
        #expect(runs.all.sorted() == Array(0..<300))
    }
}
