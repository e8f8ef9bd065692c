// The regression gate. A `--quick` run fails when a cost row's ratio to the floor measured in
// the same run is above the row's committed ceiling (`ceilings`, in Ceilings.swift). Only such
// ratios are gated: absolute nanoseconds move with the machine and its load, while a row and
// the floor measured beside it move together. Every gated row needs a ceiling, and every
// ceiling a row, so the table cannot fall behind the suite unnoticed.

/// Where the ceilings are committed, for the gate's messages.
let ceilingsFile = "Benchmarks/Sources/tempo-benchmarks/Ceilings.swift"

/// The most a cost row may cost in a `--quick` run, as × the floor measured in the same run.
struct Ceiling: Sendable {
    /// The report section of the row.
    var section: String
    /// The row's name (its `gateName` where its name holds a figure of the run).
    var row: String
    /// The highest ratio to the floor that passes.
    var ratio: Double

    init(_ section: String, _ row: String, _ ratio: Double) {
        self.section = section
        self.row = row
        self.ratio = ratio
    }
}

/// A gated row of a run: its ratio to the floor.
struct GateFigure: Sendable {
    var section: String
    var row: String
    var ratio: Double
}

/// One thing the gate found wrong, with the line it prints.
struct GateProblem: Sendable {
    enum Kind: Sendable, Equatable {
        /// The row's ratio is above its ceiling, or is not a number.
        case overCeiling
        /// A gated row that no ceiling names.
        case noCeiling
        /// A ceiling that names no row of a run of every section.
        case staleCeiling
        /// Two ceilings name the same row.
        case duplicateCeiling
        /// Two gated rows of the run have the same name.
        case duplicateRow
        /// A ceiling that is not a positive number.
        case invalidCeiling
    }

    var kind: Kind
    var section: String
    var row: String
    var message: String
}

/// What the gate finds wrong with `figures` against `ceilings`; empty when the run passes.
/// `allRowsRan` says the run measured every section, so that a ceiling naming no row of it is
/// stale (a run of some sections leaves other ceilings unused).
func checkGate(_ figures: [GateFigure], against ceilings: [Ceiling], allRowsRan: Bool)
    -> [GateProblem]
{
    func label(_ section: String, _ row: String) -> String { "\"\(section)\" › \"\(row)\"" }
    func times(_ value: Double, digits: Int) -> String { format(value, digits: digits) + "×" }
    var problems: [GateProblem] = []
    var table: [String: [String: Double]] = [:]
    for ceiling in ceilings {
        let name = label(ceiling.section, ceiling.row)
        if table[ceiling.section]?[ceiling.row] != nil {
            problems.append(
                GateProblem(
                    kind: .duplicateCeiling, section: ceiling.section, row: ceiling.row,
                    message: "two ceilings name \(name) in \(ceilingsFile): keep one"))
            continue
        }
        guard ceiling.ratio.isFinite, ceiling.ratio > 0 else {
            problems.append(
                GateProblem(
                    kind: .invalidCeiling, section: ceiling.section, row: ceiling.row,
                    message: "the ceiling of \(name) in \(ceilingsFile) is \(ceiling.ratio), "
                        + "not a positive ratio"))
            continue
        }
        table[ceiling.section, default: [:]][ceiling.row] = ceiling.ratio
    }
    var seen: [String: Set<String>] = [:]
    for figure in figures {
        let name = label(figure.section, figure.row)
        guard seen[figure.section, default: []].insert(figure.row).inserted else {
            problems.append(
                GateProblem(
                    kind: .duplicateRow, section: figure.section, row: figure.row,
                    message: "two gated rows are named \(name): give one a `gateName`"))
            continue
        }
        guard let ceiling = table[figure.section]?[figure.row] else {
            problems.append(
                GateProblem(
                    kind: .noCeiling, section: figure.section, row: figure.row,
                    message: "\(name) measured \(times(figure.ratio, digits: 3)) floor and has "
                        + "no ceiling: add one to \(ceilingsFile)"))
            continue
        }
        // Written so that a ratio that is not a number fails too.
        if !(figure.ratio <= ceiling) {
            problems.append(
                GateProblem(
                    kind: .overCeiling, section: figure.section, row: figure.row,
                    message: "\(name) measured \(times(figure.ratio, digits: 3)) floor, above its "
                        + "ceiling of \(times(ceiling, digits: 2)) floor (\(ceilingsFile))"))
        }
    }
    if allRowsRan {
        for ceiling in ceilings where !seen[ceiling.section, default: []].contains(ceiling.row) {
            problems.append(
                GateProblem(
                    kind: .staleCeiling, section: ceiling.section, row: ceiling.row,
                    message: "the ceiling of \(label(ceiling.section, ceiling.row)) in "
                        + "\(ceilingsFile) names no row of this run: remove it, or rename it "
                        + "with its row"))
        }
    }
    return problems
}

extension Report {
    /// The rows the gate checks: every cost per call with a ratio to a floor measured in the
    /// same run, the floors' own rows left out.
    var gateFigures: [GateFigure] {
        rows.compactMap { row in
            guard row.unit == .nanosecondsPerCall, !row.isFloor, let ratio = row.ratioToFloor
            else { return nil }
            return GateFigure(section: row.section, row: row.gateName ?? row.name, ratio: ratio)
        }
    }
}

/// Exercises `checkGate` and `Report.gateFigures` on made-up figures, and checks the committed
/// table for duplicates and ratios that are not positive numbers. Returns what failed; empty
/// when everything passed.
func gateSelfTest() -> [String] {
    var failures: [String] = []
    func expect(_ what: String, _ problems: [GateProblem], _ kinds: [GateProblem.Kind]) {
        let found = problems.map(\.kind)
        if found != kinds {
            func list(_ kinds: [GateProblem.Kind]) -> String {
                "[" + kinds.map { "\($0)" }.joined(separator: ", ") + "]"
            }
            failures.append("\(what): expected \(list(kinds)), found \(list(found))")
        }
    }
    let table = [Ceiling("s", "a", 2.0), Ceiling("s", "b", 1.5)]
    func figures(_ pairs: [(String, Double)], section: String = "s") -> [GateFigure] {
        pairs.map { GateFigure(section: section, row: $0.0, ratio: $0.1) }
    }

    expect(
        "rows under and at their ceilings",
        checkGate(figures([("a", 1.99), ("b", 1.5)]), against: table, allRowsRan: true), [])
    let over = checkGate(figures([("a", 2.01), ("b", 1.0)]), against: table, allRowsRan: true)
    expect("a row over its ceiling", over, [.overCeiling])
    if let message = over.first?.message,
        !(message.contains("\"a\"") && message.contains("2.010×")
            && message.contains("ceiling of 2.00×"))
    {
        failures.append("the message of a row over its ceiling lacks its figures: \(message)")
    }
    expect(
        "a ratio that is not a number",
        checkGate(figures([("a", .nan), ("b", .infinity)]), against: table, allRowsRan: true),
        [.overCeiling, .overCeiling])
    expect(
        "a row with no ceiling",
        checkGate(
            figures([("a", 1), ("b", 1), ("c", 1)]), against: table, allRowsRan: true),
        [.noCeiling])
    expect(
        "a row of the same name in another section",
        checkGate(
            figures([("a", 1), ("b", 1)]) + figures([("a", 1)], section: "t"), against: table,
            allRowsRan: true), [.noCeiling])
    expect(
        "a ceiling whose row is gone, every section run",
        checkGate(figures([("a", 1)]), against: table, allRowsRan: true), [.staleCeiling])
    expect(
        "a ceiling whose row is gone, some sections run",
        checkGate(figures([("a", 1)]), against: table, allRowsRan: false), [])
    expect(
        "two ceilings for one row",
        checkGate(
            figures([("a", 1), ("b", 1)]), against: table + [Ceiling("s", "a", 3)],
            allRowsRan: true), [.duplicateCeiling])
    expect(
        "ceilings that are not positive",
        checkGate(
            figures([("a", 1), ("b", 1)]),
            against: [Ceiling("s", "a", 0), Ceiling("s", "b", .nan)], allRowsRan: false),
        [.invalidCeiling, .invalidCeiling, .noCeiling, .noCeiling])
    expect(
        "two rows of one name",
        checkGate(figures([("a", 1), ("a", 1), ("b", 1)]), against: table, allRowsRan: true),
        [.duplicateRow])

    // Which rows of a report are gated.
    let stats = Stats([1])
    var report = Report(quick: true, repetitions: 1, cores: 2, loadAverage: nil)
    report.rows = [
        Row(
            section: "s", name: "floor", unit: .nanosecondsPerCall, stats: stats,
            ratioToFloor: 1, isFloor: true),
        Row(
            section: "s", name: "a (1.2× something)", unit: .nanosecondsPerCall, stats: stats,
            ratioToFloor: 1.2, gateName: "a"),
        Row(section: "s", name: "b", unit: .nanosecondsPerCall, stats: stats, ratioToFloor: 1.4),
        Row(section: "s", name: "absolute", unit: .nanosecondsPerCall, stats: stats),
        Row(section: "s", name: "throughput", unit: .callsPerSecond, stats: stats, ratioToFloor: 2),
    ]
    let gated = report.gateFigures.map { "\($0.row) \($0.ratio)" }
    if gated != ["a 1.2", "b 1.4"] {
        failures.append("the gated rows of a report: expected [a 1.2, b 1.4], found \(gated)")
    }

    // The committed table itself: one ceiling per row, each a positive ratio.
    for problem in checkGate([], against: ceilings, allRowsRan: false) {
        failures.append(problem.message)
    }
    return failures
}
