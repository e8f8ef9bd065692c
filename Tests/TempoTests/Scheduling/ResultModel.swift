// The reference model extended to awaited calls: given the runs the reference model gives a
// schedule (which calls run, and when), what each caller must end with. Written from the
// contract (the doc comments of `debounceResult` and `DiscardedCall`), not from the engine.

/// What one awaiting caller may end with.
enum ExpectedOutcome: Equatable, CustomStringConvertible {
    /// Its own operation's value.
    case value
    /// `DiscardedCall.notRun`: its call never ran.
    case notRun
    /// `DiscardedCall.overtaken`: a newer latest-wins run of its group started while it ran.
    case overtaken
    /// A newer run started at the very instant this one ended (or began): the order of the two
    /// within that instant is not specified, so either outcome is right.
    case valueOrOvertaken

    var description: String {
        switch self {
        case .value: "value"
        case .notRun: "notRun"
        case .overtaken: "overtaken"
        case .valueOrOvertaken: "value|overtaken"
        }
    }

    func admits(_ outcome: Outcome<Int>, op: Int) -> Bool {
        switch (self, outcome) {
        case (.value, .value(let value)), (.valueOrOvertaken, .value(let value)): value == op
        case (.notRun, .notRun), (.overtaken, .overtaken), (.valueOrOvertaken, .overtaken): true
        default: false
        }
    }
}

/// What each call of a group (`ops`, in call order) must end with, given the group's `runs` in
/// the reference model and how long each operation runs (`length`, in ticks).
func expectedOutcomes(
    ops: [Int], runs: [Trace.Run], length: (Int) -> Int, latestWins: Bool
) -> [Int: ExpectedOutcome] {
    var expected: [Int: ExpectedOutcome] = [:]
    for op in ops { expected[op] = .notRun }
    for run in runs {
        guard latestWins else {
            expected[run.op] = .value
            continue
        }
        let end = run.time + length(run.op)
        // Runs of the group that started while this one ran.
        let newer = runs.filter { $0.op != run.op && $0.time >= run.time && $0.time <= end }
        if newer.contains(where: { $0.time > run.time && $0.time < end }) {
            expected[run.op] = .overtaken
        } else if newer.isEmpty {
            expected[run.op] = .value
        } else {
            expected[run.op] = .valueOrOvertaken
        }
    }
    return expected
}
