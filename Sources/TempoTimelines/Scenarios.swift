import Synchronization
import Tempo
import TempoTesting

/// What one run of a scenario did: the calls made, the operations that ran, and the state of
/// the group after every tick, all stamped with the manual clock's time in milliseconds.
final class Recording: Sendable {
    struct Event: Sendable {
        var at: Int
        var label: String
    }

    private let events = Mutex<(calls: [Event], runs: [Event], states: [Event])>(([], [], []))

    func call(_ label: String, at: Int) {
        events.withLock { $0.calls.append(Event(at: at, label: label)) }
    }
    func run(_ label: String, at: Int) {
        events.withLock { $0.runs.append(Event(at: at, label: label)) }
    }
    func state(_ label: String, at: Int) {
        events.withLock { $0.states.append(Event(at: at, label: label)) }
    }

    var calls: [Event] { events.withLock { $0.calls } }
    var runs: [Event] { events.withLock { $0.runs } }
    var states: [Event] { events.withLock { $0.states } }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int {
        Int(components.seconds) * 1_000 + Int(components.attoseconds / 1_000_000_000_000_000)
    }
}

/// The tick of the debounce and throttle scenarios, and their window: the marble diagrams of
/// `Tests/TempoTests/Debounce/DebounceMarbleTests.swift` and
/// `Tests/TempoTests/Throttle/ThrottleMarbleTests.swift` use the same (their `tick` and
/// `window` are in `Tests/TempoTests/Support/MarbleSupport.swift`).
let tick = Duration.milliseconds(100)
let window = tick * 3

/// Plays `calls` on a fresh manual clock, one character per tick (`-` is no call), through
/// `call`, then lets the clock run for `tail` more ticks. After every tick it asks `state` what
/// the group is doing, from the registry's snapshot.
func play(
    _ calls: String,
    tail: Int,
    call: @escaping (_ label: String, _ operation: @escaping @Sendable () -> Void) -> Void,
    state: @escaping (TempoSnapshot) -> String
) async -> Recording {
    let clock = ManualClock()
    let registry = TempoRegistry(clock: clock)
    let recording = Recording()
    let pattern = Array(calls)
    await registry.withCurrent {
        for index in 0..<(pattern.count + tail) {
            await clock.advance(to: .init(offset: tick * index))
            let now = registry.now.milliseconds
            if index < pattern.count, pattern[index] != "-" {
                let label = String(pattern[index])
                recording.call(label, at: now)
                call(label) { recording.run(label, at: registry.now.milliseconds) }
            }
            recording.state(state(registry.snapshot()), at: now)
        }
    }
    precondition(registry.liveKeyCount == 0, "the scenario \(calls) left work behind")
    return recording
}

/// What a debounce group is doing: `pending` while a call waits to run, `quiet` while a
/// `.runFirst` or `.leading` quiet window lasts, else nothing.
func debounceState(_ snapshot: TempoSnapshot) -> String {
    for entry in snapshot.entries {
        if case .debounce(let runsAt, let quietUntil) = entry.state {
            if runsAt != nil { return "pending" }
            if let quietUntil, quietUntil > snapshot.now { return "quiet" }
        }
    }
    return ""
}

/// What a throttle group is doing: `pending` while a trailing call waits for the window to
/// close, `open` while the window is open with nothing waiting, else nothing.
func throttleState(_ snapshot: TempoSnapshot) -> String {
    for entry in snapshot.entries {
        if case .throttle(let closesAt, let trailing) = entry.state, closesAt > snapshot.now {
            return trailing ? "pending" : "open"
        }
    }
    return ""
}

/// Turns a recording into a timeline: calls on the top row, the group's state in the middle,
/// runs at the bottom, and a dashed line from each call that ran to its run.
func timeline(
    _ name: String, title: String, subtitle: String, calls pattern: String, tail: Int,
    _ recording: Recording, stateRow: String, stateNames: [String: (Style, String)]
) -> Timeline {
    let tickMS = tick.milliseconds
    let ran = Set(recording.runs.map(\.label))
    let callItems = recording.calls.map {
        Item.mark(at: $0.at, label: $0.label, style: ran.contains($0.label) ? .call : .droppedCall)
    }
    let runItems = recording.runs.map { Item.mark(at: $0.at, label: $0.label, style: .run) }

    // Merge consecutive ticks in the same state into one span.
    var spans: [Item] = []
    var current: (state: String, from: Int)? = nil
    func close(at end: Int) {
        if let open = current, let (style, label) = stateNames[open.state] {
            spans.append(.span(from: open.from, to: end, label: label, style: style))
        }
    }
    // A run ends the span it falls in, so each stretch between runs reads on its own.
    let runTimes = Set(recording.runs.map(\.at))
    for sample in recording.states {
        if sample.label != current?.state || runTimes.contains(sample.at) {
            close(at: sample.at)
            current = (sample.label, sample.at)
        }
    }
    close(at: (recording.states.last?.at ?? 0) + tickMS)

    var links: [Link] = []
    for run in recording.runs {
        if let call = recording.calls.first(where: { $0.label == run.label }) {
            links.append(Link(fromRow: 0, fromTime: call.at, toRow: 2, toTime: run.at))
        }
    }

    // The legend names what the picture shows, and nothing else.
    var legend: [(Style, String)] = [(.call, "call that ran")]
    if recording.calls.contains(where: { !ran.contains($0.label) }) {
        legend.append((.droppedCall, "call that never ran"))
    }
    let states = Set(recording.states.map(\.label))
    for key in stateNames.keys.sorted() where states.contains(key) {
        if let (style, label) = stateNames[key] { legend.append((style, label)) }
    }
    legend.append((.run, "run"))
    return Timeline(
        name: name, title: title, subtitle: subtitle, tick: tickMS, labelEvery: 5,
        end: (pattern.count + tail) * tickMS,
        rows: [
            Row(name: "calls", items: callItems),
            Row(name: stateRow, items: spans),
            Row(name: "runs", items: runItems),
        ],
        links: links, legend: legend)
}

// MARK: - The scenarios

/// A debounce scenario: the same calls as the marble test of that mode.
func debounceTimeline(
    _ name: String, _ option: DebounceOptions, maxWait: Duration? = nil, calls: String, tail: Int,
    title: String, subtitle: String
) async -> Timeline {
    let recording = await play(calls, tail: tail) { _, operation in
        debounce(
            window, identifier: "timeline", by: .taskContext, option: option, maxWait: maxWait,
            operation: operation)
    } state: {
        debounceState($0)
    }
    return timeline(
        name, title: title, subtitle: subtitle, calls: calls, tail: tail, recording,
        stateRow: "group",
        stateNames: [
            "pending": (.pending, "call waiting"),
            "quiet": (.window, "quiet window"),
        ])
}

/// A throttle scenario: the same calls as the marble test of that mode.
func throttleTimeline(
    _ name: String, _ option: ThrottleOptions, calls: String, tail: Int, title: String,
    subtitle: String
) async -> Timeline {
    let recording = await play(calls, tail: tail) { _, operation in
        throttle(
            window, identifier: "timeline", by: .taskContext, option: option,
            operation: operation)
    } state: {
        throttleState($0)
    }
    return timeline(
        name, title: title, subtitle: subtitle, calls: calls, tail: tail, recording,
        stateRow: "window",
        stateNames: [
            "open": (.window, "window open"),
            "pending": (.pending, "call waiting"),
        ])
}

/// Every timeline of the catalog, in a fixed order.
func allTimelines() async -> [Timeline] {
    let every = "100 ms per tick, window 300 ms"
    return [
        await debounceTimeline(
            "timeline-debounce-default", .default, calls: "abc----d-e----", tail: 2,
            title: "debounce · .default (trailing)",
            subtitle: "\(every): the latest call of a burst runs 300 ms after it"),
        await debounceTimeline(
            "timeline-debounce-runfirst", .runFirst, calls: "abc----d-----e", tail: 4,
            title: "debounce · .runFirst (leading and trailing)",
            subtitle:
                "\(every): an idle group runs a call at once; the burst's latest runs at its end"),
        await debounceTimeline(
            "timeline-debounce-leading", .leading, calls: "ab-c-d----e-f-", tail: 2,
            title: "debounce · .leading (first call only)",
            subtitle: "\(every): the first call runs, every call extends the quiet window"),
        await debounceTimeline(
            "timeline-debounce-maxwait", .default, maxWait: tick * 5, calls: "abcdefgh---", tail: 2,
            title: "debounce · .default with maxWait",
            subtitle: "\(every), maxWait 500 ms: a burst that never pauses still runs every 500 ms"),
        await debounceTimeline(
            "timeline-debounce-runfirst-maxwait", .runFirst, maxWait: tick * 5,
            calls: "abcdefghij---", tail: 2,
            title: "debounce · .runFirst with maxWait",
            subtitle: "\(every), maxWait 500 ms: first at once, then at most 500 ms apart"),
        await throttleTimeline(
            "timeline-throttle-default", .default, calls: "abcdefg", tail: 4,
            title: "throttle · .default (leading)",
            subtitle: "\(every): a call that finds the window closed runs and opens it"),
        await throttleTimeline(
            "timeline-throttle-ensurelast", .ensureLast, calls: "abc-----d----", tail: 2,
            title: "throttle · .ensureLast (leading and trailing)",
            subtitle:
                "\(every): as .default, and the latest dropped call runs when the window closes"),
        await throttleTimeline(
            "timeline-throttle-trailing", .trailing, calls: "abc--d---e----", tail: 2,
            title: "throttle · .trailing",
            subtitle: "\(every): the first call opens the window; the latest runs when it closes"),
        await repeatTimeline(.fixedDelay),
        await repeatTimeline(.fixedRate),
        await retryTimeline(),
        await rateLimitTimeline(waiting: true),
        await rateLimitTimeline(waiting: false),
        await windowLimitTimeline(),
        await concurrencyLimitTimeline(),
        await retryBudgetTimeline(),
        await circuitBreakerTimeline(),
        await hedgeTimeline(),
    ]
}
