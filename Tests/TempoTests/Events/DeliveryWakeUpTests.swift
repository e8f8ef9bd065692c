import Testing

@testable import Tempo

/// The delivery thread sleeps on its condition while the buffer is empty; an event reported
/// then must wake it, not wait for its idle timeout (``DeliveryQueue/idleTime``, 200 ms).
@Suite struct DeliveryWakeUpTests {
    /// Each of five events is reported while the thread sleeps, and its delivery timed. A thread
    /// nobody wakes delivers each at the end of its idle timeout (about 200 ms later); a woken
    /// one at once. On the real clock, measured once the rest of the run is quiet, and with
    /// room for a busy machine: a delivery counts as prompt under half the idle time, and three
    /// of five must be.
    @Test func realClockAnEventReportedWhileTheThreadSleepsIsDeliveredAtOnce() async throws {
        try await measuredAlone { try await deliverFiveToASleepingThread() }
    }

    private func deliverFiveToASleepingThread() async throws {
        let delivered = Log<String>()
        let queue = DeliveryQueue(host: nil, bufferLimit: 16) { event in
            delivered.append(event.key)
        }
        let wall = ContinuousClock()
        var prompt = 0
        for index in 0..<6 {
            // The first event starts the thread; each later one finds it asleep, if it is yet.
            var asleep = index == 0
            if !asleep {
                asleep = await eventually(within: failFastLimit) { queue.isWaitingForEvents }
            }
            let reported = wall.now
            queue.enqueue(
                TempoEvent(helper: .debounce, key: "\(index)", at: .zero, decision: .callRan))
            try #require(await eventually(within: .seconds(5)) { delivered.count == index + 1 })
            if index > 0, asleep, wall.now - reported < DeliveryQueue.idleTime / 2 { prompt += 1 }
        }
        #expect(delivered.all == (0..<6).map { "\($0)" })
        #expect(prompt >= 3, "\(prompt) of 5 events were delivered at once")
        queue.close()
    }
}
