import Testing

@testable import Tempo

// The timer driver's runner runs at the priority of the tasks that armed its timers (see
// GuaranteesRegistry.md, "Timers keep up with their callers"), whatever kind of task armed them.

@Suite struct TimerPriorityTests {
    /// The priority a timer armed by `arm` fires at, on a real-clock driver.
    private func firingPriority(
        _ arm: @escaping @Sendable (@escaping @Sendable () -> Void) async -> Void
    ) async -> TaskPriority? {
        let origin = ContinuousClock.now
        let driver = TimerDriver(
            now: { origin.duration(to: .now) },
            sleep: { try await Task.sleep(until: origin.advanced(by: $0)) })
        let seen = Log<TaskPriority>()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Task {
                await arm {
                    _ = driver.schedule(at: .milliseconds(1)) { _ in
                        seen.append(Task.currentPriority)
                        done.resume()
                        return nil
                    }
                }
            }
        }
        return seen.all.first
    }

    @Test func aTimerArmedByAHighPriorityTaskGroupChildFiresAtHighPriority() async {
        let priority = await firingPriority { arm in
            await withTaskGroup(of: Void.self) { group in
                group.addTask(priority: .high) { arm() }
            }
        }
        #expect(priority.map { $0 >= .high } == true, "fired at \(String(describing: priority))")
    }

    @Test func aTimerArmedByAHighPriorityTaskFiresAtHighPriority() async {
        let priority = await firingPriority { arm in
            await Task(priority: .high) { arm() }.value
        }
        #expect(priority.map { $0 >= .high } == true, "fired at \(String(describing: priority))")
    }
}
