// The Tempo demo: real keystrokes and taps, on the real clock, through debounce and throttle.
// Run it with `swift run TempoDemo`. Each scenario prints what happens as it happens, then
// draws it as a timeline: one column per 25 ms, calls on the top row, runs on the bottom row.

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

/// Types `words` one character every 80 ms, with a 700 ms pause between words, sending the
/// text typed so far through `send`.
func type(_ words: [String], send: (String) -> Void) async {
    var text = ""
    for (index, word) in words.enumerated() {
        if index > 0 {
            text += " "
            await sleep(.milliseconds(700))
        }
        for character in word {
            text.append(character)
            send(text)
            await sleep(.milliseconds(80))
        }
    }
}

/// Taps `count` times, 100 ms apart.
func tap(_ count: Int, send: (Int) -> Void) async {
    for index in 1...count {
        send(index)
        if index < count { await sleep(.milliseconds(100)) }
    }
}

print(
    """
    Tempo demo: what debounce and throttle do with real input, on the real clock.
    Each scenario runs live (about 2 seconds each), then is drawn as a timeline,
    one column per 25 ms.

    """)

for option in [DebounceOptions.default, .runFirst] {
    print(
        "▶ debounce(.milliseconds(300), option: .\(option)) — typing \"swift\", a pause, \"async\"")
    print(
        option == .default
            ? "  Only the last keystroke of each burst searches, 300 ms after typing stops."
            : "  The first keystroke of a burst searches at once, the last one 300 ms after it ends."
    )
    let recorder = Recorder()
    await type(["swift", "async"]) { text in
        recorder.record(run: false, "\"\(text)\"")
        debounce(.milliseconds(300), identifier: "search \(option)", option: option) {
            recorder.record(run: true, "search(\"\(text)\")")
        }
    }
    await sleep(.milliseconds(400))
    drawTimeline(recorder, columns: 84)
}

for option in [ThrottleOptions.default, .ensureLast] {
    print("▶ throttle(.milliseconds(400), option: .\(option)) — 12 taps, 100 ms apart")
    print(
        option == .default
            ? "  A tap that finds the window closed runs and opens a 400 ms window; taps inside it are dropped."
            : "  As .default, and the latest dropped tap runs when the window closes, opening the next one."
    )
    let recorder = Recorder()
    await tap(12) { index in
        recorder.record(run: false, "tap \(index)")
        throttle(.milliseconds(400), identifier: "like \(option)", option: option) {
            recorder.record(run: true, "like(tap \(index))")
        }
    }
    await sleep(.milliseconds(500))
    drawTimeline(recorder, columns: 84)
}

print("What is still live in the registry now: \(TempoRegistry.shared.snapshot())")
print("Next: `swift test` runs the tests; Docs/ explains every helper and guarantee.")
