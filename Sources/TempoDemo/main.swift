// The Tempo demo: real keystrokes and taps, on the real clock, through debounce and throttle,
// then retry, timeout, repeat and time around a simulated flaky service (WrappingWork.swift).
// Run it with `swift run TempoDemo` (about 10 s). Each debounce and throttle scenario prints
// what happens as it happens, then draws it as a timeline: one column per 25 ms, calls on the
// top row, runs on the bottom row.

import Synchronization
import Tempo

/// What happened in one scenario, in the order it happened.
final class Recorder: Sendable {
    struct Event: Sendable {
        let at: Duration
        let isRun: Bool
        let label: String
    }
    private let start = ContinuousClock.now
    private let events = Mutex<[Event]>([])

    func record(run: Bool, _ label: String) {
        let at = ContinuousClock.now - start
        events.withLock { $0.append(Event(at: at, isRun: run, label: label)) }
        let time = "\(at.milliseconds) ms".leftPadded(to: 8)
        print(run ? "  \(time)          ran   \(label)" : "  \(time)  call  \(label)")
    }

    var all: [Event] { events.withLock { $0 } }
}

extension Duration {
    var milliseconds: Int64 {
        components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}

/// Draws the recorded events on two rows; each run is marked with `▲` and listed below.
func drawTimeline(_ recorder: Recorder, columns: Int) {
    let step: Int64 = 25
    var calls = Array(repeating: Character("·"), count: columns)
    var runs = Array(repeating: Character(" "), count: columns)
    var ranLabels: [String] = []
    for event in recorder.all {
        let column = min(columns - 1, Int(event.at.milliseconds / step))
        if event.isRun {
            runs[column] = "▲"
            ranLabels.append("\(event.label) at \(event.at.milliseconds) ms")
        } else {
            calls[column] = event.label.hasPrefix("tap") ? "|" : event.label.dropLast().last ?? "|"
        }
    }
    var axis = ""
    for column in stride(from: 0, to: columns, by: 20) {
        let mark = "\(Int64(column) * step) ms"
        axis += mark + String(repeating: " ", count: max(1, 20 - mark.count))
    }
    print("")
    while axis.last == " " { axis.removeLast() }
    print("  time  " + axis)
    print("  calls " + String(calls))
    print("  runs  " + String(runs))
    print("  ran:  " + (ranLabels.isEmpty ? "nothing" : ranLabels.joined(separator: ", ")))
    print("")
}

/// Types `words` one character every 60 ms, with a 500 ms pause between words, sending the
/// text typed so far through `send`.
@MainActor func type(
    _ words: [String], every interval: Duration = .milliseconds(60), send: (String) -> Void
)
    async
{
    var text = ""
    for (index, word) in words.enumerated() {
        if index > 0 {
            text += " "
            await sleep(.milliseconds(500))
        }
        for character in word {
            text.append(character)
            send(text)
            await sleep(interval)
        }
    }
}

/// Taps at the given instants (milliseconds from now), sending the tap's number.
@MainActor func tap(at instants: [Int], send: (Int) -> Void) async {
    let start = ContinuousClock.now
    for (index, instant) in instants.enumerated() {
        try? await Task.sleep(until: start + .milliseconds(instant))
        send(index + 1)
    }
}

/// Ten taps, 80 ms apart.
let steadyTaps = Array(stride(from: 0, to: 800, by: 80))

/// Runs one scenario: prints its title and what to look for, lets `input` drive it live, waits
/// for the last run, and draws the timeline.
@MainActor func scenario(
    _ title: String, _ explanation: String, tail: Duration, input: (Recorder) async -> Void
)
    async
{
    print("▶ \(title)")
    print("  \(explanation)")
    let recorder = Recorder()
    await input(recorder)
    await sleep(tail)
    drawTimeline(recorder, columns: 72)
}

print(
    """
    Tempo demo: what debounce and throttle do with real input, on the real clock, then retry,
    timeout, repeat and time around a simulated flaky service.
    Each scenario runs live (one or two seconds each), printing what happens as it happens;
    the debounce and throttle ones then draw it as a timeline, one column per 25 ms.

    """)

for option in [DebounceOptions.default, .runFirst] {
    await scenario(
        "debounce(.milliseconds(250), option: .\(option)) — typing \"swift\", a pause, \"async\"",
        option == .default
            ? "Only the last keystroke of each burst searches, 250 ms after typing stops."
            : "The first keystroke of a burst searches at once, the last one 250 ms after it ends.",
        tail: .milliseconds(300)
    ) { recorder in
        await type(["swift", "async"]) { text in
            recorder.record(run: false, "\"\(text)\"")
            debounce(.milliseconds(250), identifier: "search \(option)", option: option) {
                recorder.record(run: true, "search(\"\(text)\")")
            }
        }
    }
}

for option in [ThrottleOptions.default, .ensureLast, .trailing] {
    let explanations: [ThrottleOptions: String] = [
        .default:
            "A tap that finds the window closed runs and opens a 300 ms window; taps inside it are dropped.",
        .ensureLast:
            "As .default, and the latest dropped tap runs when the window closes, opening the next one.",
        .trailing: "The first tap opens the window; only the latest tap runs, when it closes.",
    ]
    await scenario(
        "throttle(.milliseconds(300), option: .\(option)) — 10 taps, 80 ms apart",
        explanations[option]!, tail: .milliseconds(400)
    ) { recorder in
        await tap(at: steadyTaps) { index in
            recorder.record(run: false, "tap \(index)")
            throttle(.milliseconds(300), identifier: "like \(option)", option: option) {
                recorder.record(run: true, "like(tap \(index))")
            }
        }
    }
}

await scenario(
    "debounce(.seconds(1), option: .leading) — a double-tapped Submit button, then one more tap",
    "The first tap submits at once; taps within a second of the last one are dropped.",
    tail: .milliseconds(100)
) { recorder in
    await tap(at: [0, 90, 180, 270, 1_400]) { index in
        recorder.record(run: false, "tap \(index)")
        debounce(.seconds(1), identifier: "submit", option: .leading) {
            recorder.record(run: true, "submit(tap \(index))")
        }
    }
}

await scenario(
    "debounce(.milliseconds(250), maxWait: .milliseconds(600)) — typing without a pause",
    "A burst that never pauses still saves its latest text at most 600 ms after the burst began.",
    tail: .milliseconds(300)
) { recorder in
    await type(["nonstop"], every: .milliseconds(140)) { text in
        recorder.record(run: false, "\"\(text)\"")
        debounce(.milliseconds(250), identifier: "autosave", maxWait: .milliseconds(600)) {
            recorder.record(run: true, "save(\"\(text)\")")
        }
    }
}

await wrappingWork()
await searching()

print("▶ Control and scoped objects")
let saves = Recorder()
debounce(.seconds(5), identifier: "save") { saves.record(run: true, "save (flushed)") }
let remaining = pendingDebounce(identifier: "save")?.remaining ?? .zero
print(
    "  a save is pending, due in \(remaining.milliseconds) ms; the window is closing, so: flushDebounce"
)
flushDebounce(identifier: "save")
await sleep(.milliseconds(50))
final class Editor {
    let autosave = Debouncer(.seconds(5))
    func edited() { autosave { print("  never printed: the editor went away first") } }
}
let before = TempoRegistry.shared.liveKeyCount
var editor: Editor? = Editor()
editor?.edited()
print(
    "  an Editor's Debouncer has a pending call: live keys \(before) → \(TempoRegistry.shared.liveKeyCount)"
)
editor = nil
print(
    "  the Editor is released: live keys back to \(TempoRegistry.shared.liveKeyCount), nothing will run"
)
print("")

print("What is still live in the registry now: \(TempoRegistry.shared.snapshot())")
print("Next: `swift test` runs the tests; Docs/ explains every helper and guarantee.")
