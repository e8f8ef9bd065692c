import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Memory benchmarks run in a fresh child process each (`tempo-benchmarks --child …`), so
/// earlier benchmarks, and earlier repetitions, leave nothing behind in what they measure.
enum MemoryChild {
    /// Warms up the runtime and the registry's code paths with `count` short-lived groups made
    /// at once, so the baseline includes the one-time costs (the cooperative pool's threads,
    /// the timer driver and its runner, allocator arenas, table capacity for that many live
    /// groups).
    static func warmUp(_ count: Int = 64) async {
        for i in 0..<count {
            debounce(.milliseconds(2), identifier: "warm-\(i)", by: .taskContext) {}
        }
        _ = await waitUntil(timeout: .seconds(60)) { TempoRegistry.shared.liveKeyCount == 0 }
        try? await Task.sleep(for: .milliseconds(50))
    }

    /// `count` identifiers live at once (each debounced with an hour-long window): resident
    /// bytes per identifier.
    static func live(_ count: Int) async -> String {
        await warmUp()
        guard let before = residentBytes() else { return "nan" }
        for i in 0..<count {
            debounce(.seconds(3_600), identifier: "live-\(i)", by: .taskContext) {}
        }
        // Let the timer driver's one runner task start and park in its sleep until the earliest
        // deadline (the groups' timers are heap entries, not tasks).
        try? await Task.sleep(for: .milliseconds(200))
        guard TempoRegistry.shared.liveKeyCount == count, let after = residentBytes() else {
            return "nan"
        }
        return "\(Double(after - before) / Double(count))"
    }

    /// `keys` window-limited identifiers, each holding a full window of `permits` starts at
    /// distinct instants (a window of an hour: none leaves): resident bytes per key, and the
    /// same divided by `permits` (per start held).
    static func window(permits: Int, keys: Int) async -> String {
        await warmUp()
        let limit = RateLimit.window(permits, per: .seconds(3_600), margin: .zero)
        // The same calls on a key that is then reset, so that the baseline includes the
        // arrays' growth path and the allocator's first arenas.
        for _ in 0..<permits { try? takeRatePermit(limit, identifier: "window-warm") }
        resetRateLimit(identifier: "window-warm")
        guard let before = residentBytes() else { return "nan nan" }
        let clock = ContinuousClock()
        for key in 0..<keys {
            let identifier = "window-\(key)"
            for _ in 0..<permits {
                // Starts at one instant are kept as one run: wait for the clock to move, so
                // that every start is held on its own (the most a key holds).
                let last = clock.now
                while clock.now == last {}
                try? takeRatePermit(limit, identifier: identifier)
            }
        }
        guard TempoRegistry.shared.liveKeyCount == keys, let after = residentBytes() else {
            return "nan nan"
        }
        let perKey = Double(after - before) / Double(keys)
        return "\(perKey) \(perKey / Double(permits))"
    }

    /// `count` distinct identifiers, `wave` made live at a time, each debounced with `window`;
    /// the baseline is taken after one warm-up wave. Once all have gone idle: resident growth,
    /// the same after asking the C allocator to trim, the peak growth, the most groups seen
    /// live at once, and the growth after `cancelAll()` (which would free any storage the
    /// registry's tables still held, since `removeAll()` does not keep capacity) and another
    /// trim. The tables give their storage back as keys go idle, so the last figure is a check:
    /// it should match the trimmed one.
    static func idle(_ count: Int, wave: Int, window: Duration) async -> String {
        let failed = "nan nan nan nan nan"
        await warmUp(min(wave, 1_000))
        guard let before = residentBytes() else { return failed }
        var peak = before
        var mostLive = 0
        var next = 0
        while next < count {
            let end = min(count, next + wave)
            for i in next..<end {
                debounce(window, identifier: "idle-\(i)", by: .taskContext) {}
            }
            next = end
            mostLive = max(mostLive, TempoRegistry.shared.liveKeyCount)
            peak = max(peak, residentBytes() ?? 0)
            _ = await waitUntil(timeout: .seconds(60)) { TempoRegistry.shared.liveKeyCount == 0 }
        }
        // Let the last operations' tasks finish and be released, and the runner end.
        try? await Task.sleep(for: .milliseconds(100))
        guard TempoRegistry.shared.liveKeyCount == 0, let after = residentBytes() else {
            return failed
        }
        trimAllocator()
        let trimmed = residentBytes() ?? after
        TempoRegistry.shared.cancelAll()
        trimAllocator()
        let emptied = residentBytes() ?? trimmed
        return
            "\(after - before) \(trimmed - before) \(peak - before) \(mostLive) \(emptied - before)"
    }
}

/// Runs this executable again with `arguments` and returns what it printed, or `nil` where
/// that is not supported.
func runChild(_ arguments: [String]) -> String? {
    #if os(Linux)
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        let path = "/proc/self/exe"
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, nil, argv, environ)
        close(pipeEnds[1])
        guard status == 0 else {
            close(pipeEnds[0])
            return nil
        }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                read(pipeEnds[0], $0.baseAddress, $0.count)
            }
            if count <= 0 { break }
            output += buffer[..<count]
        }
        close(pipeEnds[0])
        var exitStatus: Int32 = 0
        waitpid(pid, &exitStatus, 0)
        return String(decoding: output, as: UTF8.self)
    #else
        _ = arguments
        return nil
    #endif
}
