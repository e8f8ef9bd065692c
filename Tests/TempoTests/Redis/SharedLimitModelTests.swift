// The scripts against models: random schedules of calls (weights, instants, waits, refusals),
// cancellations and holds, run through the Lua scripts in a real Redis with the instant passed
// in, and through a model of the same limit; every decision must agree.
//
// - A token bucket's model is Tempo's own in-process state machine (RateLimitState), driven as
//   the engine drives it: its queue admitted at each wake, a refused call left out.
// - A window's model is a brute-force search: the earliest start, at or after the call, the
//   hold and every start reserved before it, at which no window of the span holds more than
//   the permits.
//
// Where the two kinds of limit in one process and in Redis differ by design (a waiter whose
// maximum wait would run out is refused at once; a waiter cancelled while others reserved
// after it does not move them; a hold does not move starts already reserved), the schedules
// stay on the common ground: a call with a maximum wait is refused when its start would come
// later than that, only the latest reservation is cancelled, while it still waits, and a
// hold comes only while no reserved start is still ahead (otherwise it is skipped).

import Testing

@testable import Tempo
@testable import TempoRedis

@Suite(.enabled(if: RedisServer.isEnabled, RedisServer.notFoundComment), .serialized)
struct SharedLimitModelTests {
    /// A base instant in microseconds like the server's own clock (2026), so that the scripts'
    /// numbers are as large as in use.
    static let base: Int64 = 1_780_000_000_000_000

    /// A step of a schedule, at an instant (microseconds after `base`).
    enum Step: CustomStringConvertible {
        case call(at: Int64, weight: Int, maxWait: Int64?)
        case cancelLatest(at: Int64)
        case hold(at: Int64, after: Int64)

        var at: Int64 {
            switch self {
            case .call(let at, _, _), .cancelLatest(let at), .hold(let at, _): at
            }
        }

        var description: String {
            switch self {
            case .call(let at, let weight, let maxWait):
                "call at \(at) weight \(weight) maxWait \(maxWait.map(String.init) ?? "none")"
            case .cancelLatest(let at): "cancel the latest at \(at)"
            case .hold(let at, let after): "hold at \(at) for \(after)"
            }
        }
    }

    /// What a step decided: a call admitted at an instant, or refused with a retry-after; a
    /// cancel that gave permits back or not; a hold.
    enum Decision: Equatable, CustomStringConvertible {
        case admitted(at: Int64)
        case refused(retryAfter: Int64)
        case cancelled(givenBack: Bool)
        case held
        /// A hold while a reserved start was still ahead: not run (see the top).
        case skipped

        var description: String {
            switch self {
            case .admitted(let at): "admitted at \(at)"
            case .refused(let after): "refused, retry after \(after)"
            case .cancelled(let back): back ? "given back" : "not given back"
            case .held: "held"
            case .skipped: "skipped"
            }
        }
    }

    /// A random schedule: instants that often repeat and sometimes jump past a whole window.
    static func schedule(_ random: inout SplitMix64, permits: Int, span: Int64) -> [Step] {
        var steps: [Step] = []
        var now: Int64 = 0
        for _ in 0..<40 {
            switch random.next(upTo: 10) {
            case 0...3: break
            case 4...7: now += Int64(random.next(upTo: Int(span / 4)))
            default: now += Int64(random.next(upTo: Int(span * 2)))
            }
            switch random.next(upTo: 20) {
            case 0...1: steps.append(.cancelLatest(at: now))
            case 2: steps.append(.hold(at: now, after: Int64(random.next(upTo: Int(span)) + 1)))
            default:
                let maxWait: Int64? =
                    switch random.next(upTo: 4) {
                    case 0: 0
                    case 1: Int64(random.next(upTo: Int(span)))
                    default: nil
                    }
                steps.append(
                    .call(at: now, weight: random.next(upTo: permits) + 1, maxWait: maxWait))
            }
        }
        return steps
    }

    // MARK: - The scripts

    /// Runs `steps` through the scripts of a window (`bucket` nil) or a bucket, on a fresh key.
    static func throughScripts(
        _ steps: [Step], client: RESPClient, key: String, window: (permits: Int, span: Int64)?,
        bucket: (refill: Int64, burst: Int)?
    ) async throws -> [Decision] {
        let keys = window != nil ? ["{\(key)}:w", "{\(key)}:h"] : ["{\(key)}:b"]
        var decisions: [Decision] = []
        // The latest reservation still waiting: its undo arguments and instant.
        var latest: (undo: [String], at: Int64)?
        var lastStart = Int64.min
        for step in steps {
            let now = String(base + step.at)
            switch step {
            case .call(_, let weight, let maxWait):
                let wait = maxWait.map(String.init) ?? ""
                let reply: [Int64]
                if let window {
                    reply = try await client.evaluate(
                        .windowAdmit, keys: keys,
                        arguments: [
                            now, String(window.span), String(window.permits), String(weight), wait,
                        ])
                } else if let bucket {
                    reply = try await client.evaluate(
                        .bucketAdmit, keys: keys,
                        arguments: [
                            now, String(bucket.refill), String(bucket.burst), String(weight), wait,
                        ])
                } else {
                    reply = []
                }
                if reply[0] == 1 {
                    let at = step.at + reply[1]
                    lastStart = max(lastStart, at)
                    decisions.append(.admitted(at: at))
                    latest =
                        window != nil
                        ? (["", String(reply[3]), String(weight), String(reply[2] + reply[1])], at)
                        : (["", String(reply[3]), String(reply[4]), String(reply[5])], at)
                } else {
                    decisions.append(.refused(retryAfter: reply[1]))
                }
            case .cancelLatest:
                guard let reservation = latest, reservation.at > step.at else {
                    decisions.append(.cancelled(givenBack: false))
                    continue
                }
                let reply = try await client.evaluate(
                    window != nil ? .windowCancel : .bucketCancel, keys: keys,
                    arguments: reservation.undo)
                decisions.append(.cancelled(givenBack: reply[0] > 0))
                latest = nil
            case .hold(_, let after):
                guard lastStart <= step.at else {
                    decisions.append(.skipped)
                    continue
                }
                if let bucket {
                    _ = try await client.evaluate(
                        .hold, keys: keys,
                        arguments: [
                            now, String(after), String(bucket.refill), String(bucket.burst),
                        ])
                } else {
                    _ = try await client.evaluate(
                        .hold, keys: [keys[1]], arguments: [now, String(after), "", ""])
                }
                decisions.append(.held)
            }
        }
        return decisions
    }

    // MARK: - The models

    /// The window's brute-force model.
    static func windowModel(_ steps: [Step], permits: Int, span: Int64) -> [Decision] {
        var starts: [(at: Int64, weight: Int)] = []
        var heldUntil: Int64 = .min
        var decisions: [Decision] = []
        var latest: (index: Int, at: Int64)?
        var lastStart = Int64.min
        for step in steps {
            switch step {
            case .call(let now, let weight, let maxWait):
                let earliest = max(now, heldUntil, starts.map(\.at).max() ?? .min)
                // In a window ending at t (starts at or before t, after t - span).
                func fits(_ t: Int64) -> Bool {
                    starts.filter { $0.at > t - span && $0.at <= t }.reduce(0) { $0 + $1.weight }
                        + weight <= permits
                }
                let candidates = ([earliest] + starts.map { $0.at + span }).filter {
                    $0 >= earliest
                }.sorted()
                let at = candidates.first(where: fits)!
                if let maxWait, at - now > maxWait {
                    decisions.append(.refused(retryAfter: at - now))
                } else {
                    starts.append((at, weight))
                    latest = (starts.count - 1, at)
                    lastStart = max(lastStart, at)
                    decisions.append(.admitted(at: at))
                }
            case .cancelLatest(let now):
                guard let reservation = latest, reservation.at > now else {
                    decisions.append(.cancelled(givenBack: false))
                    continue
                }
                starts.remove(at: reservation.index)
                latest = nil
                decisions.append(.cancelled(givenBack: true))
            case .hold(let now, let after):
                guard lastStart <= now else {
                    decisions.append(.skipped)
                    continue
                }
                heldUntil = max(heldUntil, now + after)
                decisions.append(.held)
            }
        }
        return decisions
    }

    /// The bucket's model: Tempo's in-process state machine, in microseconds.
    static func bucketModel(_ steps: [Step], refill: Int64, burst: Int) -> [Decision] {
        func instant(_ micros: Int64) -> Duration { .microseconds(micros) }
        func micros(_ duration: Duration) -> Int64 {
            Int64(duration.attoseconds / 1_000_000_000_000)
        }
        let refillDuration = instant(refill)
        var state = RateLimitState<Int>(now: .zero, refill: refillDuration, burst: burst)
        var decisions: [Decision] = []
        // The queued calls' decision indices, by their waiter number.
        var latest: (id: UInt64, waiter: Int, at: Int64)?
        var lastStart = Int64.min
        var clock: Int64 = 0
        func advance(to now: Int64) {
            // Admits the queue's head at each of its wakes up to `now`, as the key's timer does.
            while !state.queue.isEmpty {
                let wake = micros(state.wake(at: instant(clock)))
                guard wake <= now else { break }
                clock = max(clock, wake)
                for admitted in state.settle(at: instant(clock)).admitted {
                    decisions[admitted] = .admitted(at: clock)
                }
            }
            clock = now
        }
        for step in steps {
            advance(to: step.at)
            let now = instant(step.at)
            switch step {
            case .call(_, let weight, let maxWait):
                let ask = RateLimitState<Int>.Ask(
                    weight: weight, burst: burst, refill: refillDuration)
                switch state.call(at: now, ask: ask, refill: refillDuration, burst: burst) {
                case .admitted:
                    decisions.append(.admitted(at: step.at))
                    lastStart = max(lastStart, step.at)
                    latest = nil
                case .limited(let after):
                    let wait = micros(after)
                    if let maxWait, wait > maxWait {
                        decisions.append(.refused(retryAfter: wait))
                    } else {
                        let index = decisions.count
                        decisions.append(.refused(retryAfter: -1))  // replaced when admitted
                        let id = state.enqueue(index, ask: ask, deadline: nil)
                        latest = (id, index, step.at + wait)
                        lastStart = max(lastStart, step.at + wait)
                        advance(to: step.at)
                    }
                }
            case .cancelLatest:
                guard let reservation = latest, reservation.at > step.at,
                    let (waiter, settled) = state.withdraw(reservation.id, at: now)
                else {
                    decisions.append(.cancelled(givenBack: false))
                    continue
                }
                // As in Redis, the call's decision stays the start it was given.
                decisions[waiter] = .admitted(at: reservation.at)
                for admitted in settled.admitted { decisions[admitted] = .admitted(at: step.at) }
                decisions.append(.cancelled(givenBack: true))
                latest = nil
            case .hold(_, let after):
                guard lastStart <= step.at else {
                    decisions.append(.skipped)
                    continue
                }
                state.hold(until: instant(step.at + after), at: now)
                decisions.append(.held)
            }
        }
        advance(to: .max / 4)
        return decisions
    }

    // MARK: - The checks

    /// Schedules per kind of limit.
    static let seeds: Range<UInt64> = 0..<150

    @Test func theWindowScriptDecidesWhatTheModelDecides() async throws {
        let server = try RedisServer()
        try await server.start()
        let client = server.client()
        var compared = 0
        for seed in Self.seeds {
            var random = SplitMix64(seed: seed &+ 0x9E37_79B9_7F4A_7C15)
            let permits = random.next(upTo: 5) + 1
            // Windows of minutes: a key's expiry (its newest start's window, on the real clock)
            // outlasts the run of a schedule however loaded the machine.
            let span: Int64 = 100_000_000 + Int64(random.next(upTo: 3)) * 25_000_000
            let steps = Self.schedule(&random, permits: permits, span: span)
            let scripts = try await Self.throughScripts(
                steps, client: client, key: "model-window-\(seed)", window: (permits, span),
                bucket: nil)
            let model = Self.windowModel(steps, permits: permits, span: span)
            compared += steps.count
            guard let index = steps.indices.first(where: { scripts[$0] != model[$0] }) else {
                continue
            }
            Issue.record(
                "seed \(seed), \(permits) in \(span) µs, step \(index) (\(steps[index])): scripts \(scripts[index]), model \(model[index])"
            )
            break
        }
        await server.stop()
        #expect(compared == Self.seeds.count * 40)
    }

    @Test func theBucketScriptDecidesWhatTempoDecidesInOneProcess() async throws {
        let server = try RedisServer()
        try await server.start()
        let client = server.client()
        var compared = 0
        for seed in Self.seeds {
            var random = SplitMix64(seed: seed &+ 0x9E37_79B9_7F4A_7C15)
            let burst = random.next(upTo: 4) + 1
            // Refills of minutes, for the same reason as the window's.
            let refill: Int64 = 100_000_000 + Int64(random.next(upTo: 4)) * 50_000_000
            let steps = Self.schedule(&random, permits: burst, span: refill * Int64(burst))
            let scripts = try await Self.throughScripts(
                steps, client: client, key: "model-bucket-\(seed)", window: nil,
                bucket: (refill, burst))
            let model = Self.bucketModel(steps, refill: refill, burst: burst)
            compared += steps.count
            guard let index = steps.indices.first(where: { scripts[$0] != model[$0] }) else {
                continue
            }
            Issue.record(
                "seed \(seed), burst \(burst), refill \(refill) µs, step \(index) (\(steps[index])): scripts \(scripts[index]), model \(model[index])"
            )
            break
        }
        await server.stop()
        #expect(compared == Self.seeds.count * 40)
    }
}

extension SplitMix64 {
    /// A number from 0 to `bound - 1`.
    mutating func next(upTo bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }
}
