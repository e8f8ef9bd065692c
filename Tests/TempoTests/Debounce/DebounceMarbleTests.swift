import Tempo
import TempoTesting
import Testing

// Every mode as a marble diagram, run on the manual clock. One character is one tick of
// 100 ms; the window is 3 ticks. A letter on the calls line is a call at that tick; a letter
// on the runs line is that call's operation running at that tick. These timelines can go into
// the docs as they are: they are what the library does.

private let tick = Duration.milliseconds(100)
private let window = tick * 3

/// Makes the calls of `calls` through `call`, one tick per character, and returns the runs as
/// a line of the same kind.
private func runs(
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

private func debounced(
    _ calls: String, _ option: DebounceOptions, maxWait: Duration? = nil
) async -> String {
    await runs(calls) { _, operation in
        debounce(
            window, identifier: "m", by: .taskContext, option: option, maxWait: maxWait,
            operation: operation)
    }
}

private func throttled(_ calls: String, _ option: ThrottleOptions) async -> String {
    await runs(calls) { _, operation in
        throttle(window, identifier: "m", by: .taskContext, option: option, operation: operation)
    }
}

@Suite struct MarbleTests {
    @Test func debounceDefault() async {
        #expect(await debounced("abc----d-e----", .default) == "-----c------e-")
    }

    @Test func debounceRunFirst() async {
        #expect(await debounced("abc----d-----e", .runFirst) == "a----c----d--e")
    }

    @Test func debounceLeading() async {
        #expect(await debounced("ab-c-d----e-f-", .leading) == "a---------e---")
    }

    @Test func debounceMaxWait() async {
        #expect(await debounced("abcdefgh---", .default, maxWait: tick * 5) == "-----e----h")
    }

    @Test func debounceRunFirstMaxWait() async {
        #expect(await debounced("abcdefghij---", .runFirst, maxWait: tick * 5) == "a----e----j--")
    }

    @Test func debounceMaxWaitEqualToTheDurationIsAuditTime() async {
        #expect(await debounced("abc--d---e----", .default, maxWait: window) == "---c----d---e-")
    }

    @Test func throttleDefault() async {
        #expect(await throttled("abcdefg", .default) == "a--d--g")
    }

    @Test func throttleEnsureLast() async {
        #expect(await throttled("abc-----d----", .ensureLast) == "a--c----d----")
    }

    @Test func throttleTrailing() async {
        #expect(await throttled("abc--d---e----", .trailing) == "---c--d-----e-")
    }
}
