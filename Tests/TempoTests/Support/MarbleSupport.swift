import Tempo
import TempoTesting
import Testing

// The marble diagrams of `DebounceMarbleTests` and `ThrottleMarbleTests`: every mode, run on
// the manual clock. One character is one tick of 100 ms; the window is 3 ticks. A letter on the
// calls line is a call at that tick; a letter on the runs line is that call's operation running
// at that tick. These timelines can go into the docs as they are: they are what the library does.

/// One character of a marble diagram.
let tick = Duration.milliseconds(100)
/// The duration of every marble diagram's debounce and throttle.
let window = tick * 3

/// Makes the calls of `calls` through `call`, one tick per character, and returns the runs as
/// a line of the same kind.
func runs(
    _ calls: String, call: @escaping (String, @escaping @Sendable () -> Void) -> Void
) async -> String {
    let log = Log<(tick: Int, label: Character)>()
    await onManualClock { clock, registry in
        for (index, character) in calls.enumerated() {
            await clock.advance(to: .init(offset: tick * index))
            guard character != "-" else { continue }
            call(String(character)) {
                log.append((Int(registry.now / tick), character))
            }
        }
        await clock.advance(by: tick * 20)
        #expect(registry.liveKeyCount == 0)
    }
    var line = Array(repeating: Character("-"), count: calls.count)
    for run in log.all {
        while line.count <= run.tick { line.append("-") }
        #expect(line[run.tick] == "-", "two runs at tick \(run.tick)")
        line[run.tick] = run.label
    }
    while line.last == "-" && line.count > calls.count { line.removeLast() }
    return String(line)
}
