@testable import Tempo

// The rule of the idle entry a shard keeps (Sources/Tempo/Registry/KeptIdleEntries.swift),
// checked over every shard of a registry by reading its tables.

extension TempoRegistry {
    /// The concurrency-limit entries the tables hold, how many of them are kept idle, and what
    /// breaks their rule, if anything: in every shard, an idle entry only as the kept one, and
    /// without a timer.
    var limitTablesCheck: (stored: Int, kept: Int, broken: String?) {
        var stored = 0
        var kept = 0
        var broken: String?
        for (index, shard) in shards.enumerated() {
            shard.tables.withLock { tables in
                stored += tables.concurrencyLimits.count
                kept += tables.keptIdleLimitCount
                for (key, slot) in tables.concurrencyLimits where slot.state.isIdle {
                    if key != tables.keptIdleLimit {
                        broken = "shard \(index) holds the idle entry \(key) without keeping it"
                    } else if slot.timer != nil {
                        broken = "shard \(index) keeps the idle entry \(key) with a timer"
                    }
                }
            }
        }
        return (stored, kept, broken)
    }

    /// The breaker entries the tables hold, how many of them are kept idle (left the
    /// registry), and what breaks their rule, if anything: in every shard, a fresh entry only
    /// as the kept one, made new and without a timer.
    var breakerTablesCheck: (stored: Int, kept: Int, broken: String?) {
        var stored = 0
        var kept = 0
        var broken: String?
        for (index, shard) in shards.enumerated() {
            shard.tables.withLock { tables in
                stored += tables.circuitBreakers.count
                kept += tables.keptIdleBreakerCount
                for (key, slot) in tables.circuitBreakers where slot.state.isFresh {
                    if key != tables.keptIdleBreaker {
                        broken = "shard \(index) holds the fresh breaker \(key) without keeping it"
                    } else if slot.timer != nil || slot.state.window.calls != 0 {
                        broken = "shard \(index) keeps the breaker \(key) with a timer or calls"
                    }
                }
            }
        }
        return (stored, kept, broken)
    }
}
