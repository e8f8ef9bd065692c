import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Memory benchmarks run in a fresh child process each (`tempo-benchmarks --child …`), so
/// earlier benchmarks, and earlier repetitions, leave nothing behind in what they measure.
enum MemoryChild {
    /// Warms up the runtime and the registry's code paths with a few short-lived groups, so
    /// the baseline includes the one-time costs.
    static func warmUp() async {
        for i in 0..<64 {
            debounce(.milliseconds(1), identifier: "warm-\(i)", by: .taskContext) {}
        }
        _ = await waitUntil(timeout: .seconds(10)) { TempoRegistry.shared.liveKeyCount == 0 }
        try? await Task.sleep(for: .milliseconds(20))
    }

    /// `count` identifiers live at once (each debounced with an hour-long window): resident
    /// bytes per identifier.
    static func live(_ count: Int) async -> String {
        await warmUp()
        guard let before = residentBytes() else { return "nan" }
        for i in 0..<count {
            debounce(.seconds(3_600), identifier: "live-\(i)", by: .taskContext) {}
        }
        // Let every group's timer task start and park in its sleep.
        try? await Task.sleep(for: .milliseconds(200))
        guard TempoRegistry.shared.liveKeyCount == count, let after = residentBytes() else {
            return "nan"
        }
        return "\(Double(after - before) / Double(count))"
    }

    /// `count` distinct identifiers, `wave` live at a time (all at once when `wave >= count`),
    /// each debounced with a 10 ms window; once all have gone idle: resident growth, the same
    /// after asking the C allocator to trim, and the peak seen.
    static func idle(_ count: Int, wave: Int) async -> String {
        await warmUp()
        guard let before = residentBytes() else { return "nan nan nan" }
        var peak = before
        var next = 0
        while next < count {
            let end = min(count, next + wave)
            for i in next..<end {
                debounce(.milliseconds(10), identifier: "idle-\(i)", by: .taskContext) {}
            }
            next = end
            peak = max(peak, residentBytes() ?? 0)
            _ = await waitUntil(timeout: .seconds(60)) { TempoRegistry.shared.liveKeyCount == 0 }
        }
        // Let the finished timer tasks be released.
        try? await Task.sleep(for: .milliseconds(200))
        guard TempoRegistry.shared.liveKeyCount == 0, let after = residentBytes() else {
            return "nan nan nan"
        }
        trimAllocator()
        let trimmed = residentBytes() ?? after
        return "\(after - before) \(trimmed - before) \(peak - before)"
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
            let count = buffer.withUnsafeMutableBytes { read(pipeEnds[0], $0.baseAddress, $0.count) }
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
