/// How much work each benchmark does: `--quick` is a small version of everything, for CI.
struct Config: Sendable {
    let quick: Bool
    /// Repetitions of each measurement; the report shows their median, min and max.
    let repetitions: Int
    /// Calls per repetition in the single-caller cost benchmarks.
    let calls: Int
    /// Calls per repetition of the awaited (`Task`-returning) overloads.
    let awaitedCalls: Int
    /// How long each repetition of the concurrency benchmark runs.
    let concurrentLength: Duration
    /// Caller counts of the concurrency benchmark.
    let callerCounts: [Int]
    /// Live identifiers held at once to measure resident bytes per identifier.
    let liveIdentifiers: Int
    /// Distinct identifiers that are used once and then go idle.
    let idleIdentifiers: Int
    /// Distinct identifiers made live all at once and then left to go idle (the stress case).
    let burstIdentifiers: Int
    /// Repetitions of the memory benchmarks (each a fresh process).
    let memoryRepetitions: Int
    /// Samples per repetition of the lateness benchmark, for each of debounce and bare sleep.
    let latenessSamples: Int
    /// The wait used by the lateness benchmark.
    let latenessDelay: Duration
    /// Bursts per repetition of the ordering benchmark.
    let orderingBursts: Int

    static let full = Config(
        quick: false, repetitions: 11, calls: 1_000_000, awaitedCalls: 100_000,
        concurrentLength: .milliseconds(200), callerCounts: [1, 2, 4, 8, 16],
        liveIdentifiers: 100_000, idleIdentifiers: 200_000, burstIdentifiers: 200_000,
        memoryRepetitions: 5, latenessSamples: 400,
        latenessDelay: .milliseconds(2), orderingBursts: 400)

    static let quickRun = Config(
        quick: true, repetitions: 5, calls: 100_000, awaitedCalls: 20_000,
        concurrentLength: .milliseconds(100), callerCounts: [1, 2, 4, 8, 16],
        liveIdentifiers: 20_000, idleIdentifiers: 200_000, burstIdentifiers: 50_000,
        memoryRepetitions: 2, latenessSamples: 200,
        latenessDelay: .milliseconds(2), orderingBursts: 100)
}
