import Tempo

// The cost of `concurrencyLimit` at the caller, against the floor: an admitted call (a slot
// taken and given back around an operation that does nothing) and a call turned away at once
// (the limit reached and the queue full).

/// Admitted calls one after another; with `busy` another call holds a slot meanwhile, so the key
/// stays live (otherwise it goes idle after every call, and its entry stays as its shard's kept
/// idle one). Nanoseconds per call.
func concurrencyLimitAdmitted(calls: Int, busy: Bool) async -> Double {
    let identifier = busy ? "limit-busy" : "limit-idle"
    let holder = busy ? await holdSlot(identifier, limit: 2) : nil
    let start = ContinuousClock.now
    for _ in 0..<calls {
        _ = try? await concurrencyLimit(2, identifier: identifier) {}
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    await holder?.release()
    return ns / Double(calls)
}

/// Calls turned away at once: one call holds the only slot and the queue takes nobody.
/// Nanoseconds per call.
func concurrencyLimitRejected(calls: Int) async -> Double {
    let holder = await holdSlot("limit-full", limit: 1)
    let start = ContinuousClock.now
    var rejected = 0
    for _ in 0..<calls {
        do {
            try await concurrencyLimit(1, queue: 0, identifier: "limit-full") {}
        } catch {
            rejected += 1
        }
    }
    let ns = (ContinuousClock.now - start).nanoseconds
    await holder.release()
    precondition(rejected == calls, "every call must be turned away")
    return ns / Double(calls)
}

/// A call that holds a slot of `identifier` until released.
private struct SlotHolder {
    let task: Task<Void, Never>
    let gate: AsyncStream<Void>.Continuation

    func release() async {
        gate.finish()
        await task.value
    }
}

private func holdSlot(_ identifier: String, limit: Int) async -> SlotHolder {
    let (stream, gate) = AsyncStream<Void>.makeStream()
    let (entered, enteredGate) = AsyncStream<Void>.makeStream()
    let task = Task {
        _ = try? await concurrencyLimit(limit, identifier: identifier) {
            enteredGate.finish()
            for await _ in stream {}
        }
    }
    for await _ in entered {}
    return SlotHolder(task: task, gate: gate)
}

extension Suite {
    /// The rows and the targets of `concurrencyLimit`, as × the floor measured in the same
    /// repetitions: run late in the suite, after sections that leave the process's heap and
    /// caches in another state, a floor measured at the start would not be comparable.
    func concurrencyLimitCosts(into report: inout Report) async {
        var floors: [Double] = []
        var idle: [Double] = []
        var busy: [Double] = []
        var rejected: [Double] = []
        let calls = config.calls
        for repetition in 0..<config.repetitions {
            progress("concurrencyLimit: repetition \(repetition + 1) of \(config.repetitions)")
            floors.append(floorCost(calls: calls))
            idle.append(await concurrencyLimitAdmitted(calls: calls, busy: false))
            busy.append(await concurrencyLimitAdmitted(calls: calls, busy: true))
            rejected.append(await concurrencyLimitRejected(calls: calls))
        }
        let section = "concurrency limit"
        let floor = Stats(floors).median
        func add(_ name: String, _ values: [Double]) -> Double {
            report.addCost(name, values, floor: floor, section: section)
        }
        report.addCost(
            "floor (measured with these rows)", floors, floor: floor, section: section,
            isFloor: true)
        let idleRatio = add("`concurrencyLimit`, admitted, the key otherwise idle", idle)
        let busyRatio = add("`concurrencyLimit`, admitted beside a running call", busy)
        let rejectedRatio = add("`concurrencyLimit`, turned away (queue full)", rejected)
        report.targets.append(
            Target(
                name: "admitted `concurrencyLimit` call within 2× floor",
                measured: format(busyRatio, digits: 2) + "× beside a running call, "
                    + format(idleRatio, digits: 2) + "× on an idle key",
                met: busyRatio <= 2 && idleRatio <= 2,
                note: "an admitted call takes the shard's lock twice (take and give back the "
                    + "slot) and checks the task's cancellation. A key's entry stays while its "
                    + "calls run; the shard keeps the entry of the key that went idle last, so "
                    + "a key used one call at a time does not make and remove it on every call. "
                    + "The front door is inlinable and `nonisolated(nonsending)`: no generic "
                    + "`async` frame and no executor hop of its own."))
        report.targets.append(
            Target(
                name: "rejected `concurrencyLimit` call within 2× floor",
                measured: format(rejectedRatio, digits: 2) + "×",
                met: rejectedRatio <= 2,
                note: "one lock, then a thrown `ConcurrencyLimitError` (boxed as `any Error`)."))
    }
}
