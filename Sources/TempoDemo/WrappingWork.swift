// The second half of the demo: retry, timeout, repeat and time around a simulated service (no
// network: its calls sleep, and fail when told to). Every figure printed is measured, not
// assumed: attempt counts come from the service, elapsed times from `time` and `measure`.

import Tempo

/// A stand-in for a remote service: each call takes `latency`, and the first `failures` calls
/// of `fetch` throw.
actor FlakyService {
    enum Failure: Error, CustomStringConvertible {
        case unavailable(call: Int)
        var description: String {
            switch self {
            case .unavailable(let call): "503 Service Unavailable on call \(call)"
            }
        }
    }

    let failures: Int
    let latency: Duration
    private(set) var calls = 0
    private(set) var cancelledReports = 0

    init(failures: Int, latency: Duration) {
        self.failures = failures
        self.latency = latency
    }

    func fetch() async throws -> String {
        calls += 1
        let call = calls
        try await Task.sleep(for: latency)
        if call <= failures { throw Failure.unavailable(call: call) }
        return "42 new messages"
    }

    /// A report that takes `duration`; counts the calls that were cancelled while waiting.
    func report(taking duration: Duration) async throws -> String {
        do {
            try await Task.sleep(for: duration)
        } catch {
            cancelledReports += 1
            throw error
        }
        return "report ready"
    }
}

/// Prints `text` after the milliseconds since `start`, as the other scenarios do.
func say(_ text: String, since start: ContinuousClock.Instant) {
    let time = "\((ContinuousClock.now - start).milliseconds) ms".leftPadded(to: 8)
    print("  \(time)  \(text)")
}

@MainActor func wrappingWork() async {
    await retrying()
    await timingOut()
    await repeating()
}

@MainActor func retrying() async {
    print(
        "▶ retry(3, backoff: .constant(.milliseconds(100))) — a service that fails twice, then answers"
    )
    print("  Each call takes 40 ms; `time` around the retry reports how long it all took.")
    let service = FlakyService(failures: 2, latency: .milliseconds(40))
    let start = ContinuousClock.now
    do {
        let answer = try await time("fetch with retry", report: { say($0, since: start) }) {
            try await retry(
                3, backoff: .constant(.milliseconds(100)),
                onRetry: { attempt, error, wait in
                    let next = "next in \(wait.milliseconds) ms"
                    say("attempt \(attempt) failed: \(error); \(next)", since: start)
                }
            ) {
                try await service.fetch()
            }
        }
        say("got \"\(answer)\" on attempt \(await service.calls)", since: start)
    } catch {
        say("unexpected: \(error)", since: start)
    }
    print("")

    print("▶ retry(2, every: .milliseconds(100)) — a service that fails twice, two attempts")
    print("  retry gives up after its last attempt and throws that attempt's error.")
    let stubborn = FlakyService(failures: 2, latency: .milliseconds(40))
    let again = ContinuousClock.now
    do {
        let answer = try await time("fetch with retry", report: { say($0, since: again) }) {
            try await retry(2, every: .milliseconds(100)) { try await stubborn.fetch() }
        }
        say("unexpected answer: \(answer)", since: again)
    } catch {
        say("threw \(error) after \(await stubborn.calls) attempts", since: again)
    }
    print("")
}

@MainActor func timingOut() async {
    print("▶ timeout(.milliseconds(300)) — a report that takes 2 s, then one that takes 100 ms")
    print("  The slow one is cancelled at the limit; the caller gets TimeoutError.timedOut.")
    let service = FlakyService(failures: 0, latency: .zero)
    let start = ContinuousClock.now
    for length in [Duration.seconds(2), .milliseconds(100)] {
        let (outcome, elapsed) = await measure {
            do {
                let report = try await timeout(.milliseconds(300)) {
                    try await service.report(taking: length)
                }
                return "returned \"\(report)\""
            } catch TimeoutError.timedOut(let limit) {
                return "threw TimeoutError.timedOut(\(limit))"
            } catch {
                return "threw \(error)"
            }
        }
        say(
            "a \(length.milliseconds) ms report \(outcome), measured \(elapsed.milliseconds) ms",
            since: start)
    }
    say("reports cancelled while running: \(await service.cancelledReports)", since: start)
    print("")
}

@MainActor func repeating() async {
    print(
        "▶ `repeat`(every: .milliseconds(150), mode: .fixedRate) — a 50 ms poll, cancelled at 700 ms"
    )
    print("  Fixed rate: iterations start on the 150 ms grid, however long each one takes.")
    let polls = Recorder()
    let start = ContinuousClock.now
    let poll = `repeat`(every: .milliseconds(150), mode: .fixedRate) {
        polls.record(run: true, "poll \(polls.all.count + 1)")
        try await Task.sleep(for: .milliseconds(50))
    }
    try? await Task.sleep(until: start + .milliseconds(700))
    poll.cancel()
    await poll.value
    let times = polls.all.map { "\($0.at.milliseconds)" }.joined(separator: ", ")
    say("cancelled: \(polls.all.count) polls ran, starting at \(times) ms", since: start)
    print("")
}
