import Tempo

// A reference model of every throttle mode, written from the contract (Guarantees.md,
// Throttle.md, the doc comments of `ThrottleOptions`), not from the engine. `DebounceModel.swift`
// is debounce's; `ModelCheckTests` (in Registry/) runs both against the engine.
//
// Time is whole ticks and the model is stepped one tick at a time: at each tick the clock
// first reaches the instant (calls that are due run), then the actions made at that instant
// happen in order. There are no timers, no catch-up and no generations: each mode is a few
// lines that say what the contract says.

/// One throttle group, in one mode.
struct ThrottleModel {
    let option: ThrottleOptions
    let duration: Int

    /// The window is open before this instant.
    var windowEnd = Int.min
    /// The latest call made while the window was open (`.ensureLast`, `.trailing`).
    var trailing: Int?

    func isLive(at now: Int) -> Bool { now < windowEnd }
    var pendingDue: Int? { trailing == nil ? nil : windowEnd }

    /// The clock reaches `now`: when the window closes, the trailing call runs and opens the
    /// next window.
    mutating func clockReaches(_ now: Int) -> Int? {
        guard now == windowEnd, let op = trailing else { return nil }
        trailing = nil
        windowEnd = now + duration
        return op
    }

    /// A call: returns the operation when it runs at once.
    mutating func call(_ op: Int, at now: Int) -> Int? {
        if now >= windowEnd {  // the window is closed: this call opens one
            windowEnd = now + duration
            if option == .trailing {
                trailing = op
                return nil
            }
            return op
        }
        if option != .default { trailing = op }  // inside the window: keep the latest
        return nil
    }

    mutating func flush(at now: Int) -> Int? {
        guard let op = trailing else { return nil }
        trailing = nil
        windowEnd = now + duration
        return op
    }

    mutating func cancel() {
        trailing = nil
        windowEnd = .min
    }
}
