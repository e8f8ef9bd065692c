import Tempo

// A reference model of every debounce mode, written from the contract (Guarantees.md,
// Debounce.md, the doc comments of `DebounceOptions`), not from the engine. `ThrottleModel.swift`
// is throttle's; `ModelCheckTests` (in Registry/) runs both against the engine.
//
// Time is whole ticks and the model is stepped one tick at a time: at each tick the clock
// first reaches the instant (calls that are due run), then the actions made at that instant
// happen in order. There are no timers, no catch-up and no generations: each mode is a few
// lines that say what the contract says.

/// One debounce group, in one mode.
struct DebounceModel {
    let option: DebounceOptions
    let duration: Int
    /// As passed: `nil`, zero or negative means no maximum; below `duration` counts as it.
    let maxWait: Int?

    /// The call waiting to run, and when it runs.
    var pending: (op: Int, due: Int)?
    /// `maxWait` counts from the group's latest run, or from the call that found it idle (the
    /// first call of a burst), whichever came later.
    var maxWaitFrom = 0
    /// No new burst starts before this instant.
    var quietUntil = Int.min

    func isLive(at now: Int) -> Bool { pending != nil || now < quietUntil }

    /// The clock reaches `now`: the pending call runs when it is due.
    mutating func clockReaches(_ now: Int) -> Int? {
        guard let pending, pending.due == now else { return nil }
        return runPending(at: now)
    }

    /// A call: returns the operation when it runs at once.
    mutating func call(_ op: Int, at now: Int) -> Int? {
        let idle = pending == nil && now >= quietUntil
        if idle { maxWaitFrom = now }
        switch option {
        case .leading:  // the first call of a burst runs; every call extends the burst
            quietUntil = now + duration
            return idle ? op : nil
        case .runFirst where idle:  // leading edge
            quietUntil = now + duration
            return op
        case .default, .runFirst:  // trailing: the latest call waits for a quiet window
            var due = now + duration
            if let maxWait, maxWait > 0 {
                due = min(due, maxWaitFrom + max(maxWait, duration))
            }
            pending = (op, due)
            return nil
        }
    }

    mutating func flush(at now: Int) -> Int? {
        pending == nil ? nil : runPending(at: now)
    }

    mutating func cancel() {
        pending = nil
        quietUntil = .min
    }

    private mutating func runPending(at now: Int) -> Int {
        let op = pending!.op
        pending = nil
        maxWaitFrom = now
        if option == .runFirst { quietUntil = now + duration }  // a run starts a quiet window
        return op
    }
}
