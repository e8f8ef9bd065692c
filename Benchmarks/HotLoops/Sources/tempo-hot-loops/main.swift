import Synchronization
import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Usage: tempo-hot-loops ROW CALLS
//
// Runs one hot loop of CALLS calls and prints its wall nanoseconds per call ("nan" for a row it
// does not know). The asynchronous rows run on `InlineExecutor`, on this thread: every job of
// the loop's task runs here, one after another, and no thread is started for them, so valgrind
// can count the instructions of those rows as it does for the synchronous ones (it stops with
// an internal error when the concurrency runtime's threads start).

let arguments = Array(CommandLine.arguments.dropFirst())
let row = arguments.first ?? ""
let calls = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000

let perCall: Double
switch row {
case "floor": perCall = floor(calls)
case "debounce": perCall = debounceRow(calls)
case "throttle": perCall = throttleRow(calls)
case "debouncecapturing": perCall = debounceCapturingRow(calls)
case "throttlecapturing": perCall = throttleCapturingRow(calls)
case "ratelimit": perCall = ratePermitRow(calls)
case "ratereject": perCall = ratePermitRefusedRow(calls)
case "rateasync": perCall = InlineExecutor.run { _ in await rateLimitRow(calls) }
case "raterejectasync": perCall = InlineExecutor.run { _ in await rateLimitRefusedRow(calls) }
case "breaker": perCall = InlineExecutor.run { _ in await breakerRow(calls) }
case "breakeropen": perCall = InlineExecutor.run { _ in await breakerOpenRow(calls) }
case "climit": perCall = InlineExecutor.run { await concurrencyRow(calls, busy: false, on: $0) }
case "climitbusy": perCall = InlineExecutor.run { await concurrencyRow(calls, busy: true, on: $0) }
case "climitreject": perCall = InlineExecutor.run { await concurrencyRefusedRow(calls, on: $0) }
default: perCall = .nan
}
print(perCall)
exit(0)
