// Tempo's Lua scripts: each decides one step of a shared limit atomically in Redis, in one
// round trip. Instants and durations are whole microseconds (exact in Lua's numbers for 285
// years). The first argument is the instant to decide at: empty for the server's own clock
// (`TIME`), so that instances whose clocks disagree share one window; tests pass one in.

extension RedisScript {
    /// Every script: admit, cancel and hold for both kinds of limit, and reset.
    ///
    /// ```swift
    /// let names = RedisScript.all.map(\.name)
    /// ```
    public static let all: [RedisScript] = [
        windowAdmit, windowCancel, bucketAdmit, bucketCancel, hold, reset,
    ]

    init(name: String, source: String) {
        self.name = name
        self.source = source
        sha1 = SHA1.hex(of: Array(source.utf8))
    }

    /// A window limit's admission. KEYS: the starts (a sorted set: one member per permit,
    /// scored by its start), the key's hash (`h`: held until; `s`: the last call's number).
    /// ARGV: now, span (the window and its margin), permits, weight, the longest wait (empty:
    /// no limit). Reply: `{1, wait, now, call}`: admitted, to start `wait` after now (its
    /// permits are reserved at that instant, in the order calls reached Redis);
    /// `{0, retryAfter, now, 0}`: refused, as the wait would be longer than allowed.
    static let windowAdmit = RedisScript(
        name: "tempo-window-admit",
        source: """
            local now = tonumber(ARGV[1])
            if ARGV[1] == '' then
              local t = redis.call('TIME')
              now = tonumber(t[1]) * 1000000 + tonumber(t[2])
            end
            local span = tonumber(ARGV[2])
            local permits = tonumber(ARGV[3])
            local weight = tonumber(ARGV[4])
            redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - span)
            local at = now
            local held = tonumber(redis.call('HGET', KEYS[2], 'h') or now)
            if held > at then at = held end
            local count = redis.call('ZCARD', KEYS[1])
            if count > 0 then
              local last = tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2])
              if last > at then at = last end
              local excess = count + weight - permits
              if excess > 0 then
                local oldest = redis.call('ZRANGE', KEYS[1], excess - 1, excess - 1, 'WITHSCORES')
                local leaves = tonumber(oldest[2]) + span
                if leaves > at then at = leaves end
              end
            end
            if ARGV[5] ~= '' and at - now > tonumber(ARGV[5]) then
              return {0, at - now, now, 0}
            end
            local call = redis.call('HINCRBY', KEYS[2], 's', 1)
            local members = {}
            for i = 1, weight do
              members[#members + 1] = string.format('%d', at)
              members[#members + 1] = string.format('%d.%d', call, i)
              if #members >= 1000 or i == weight then
                redis.call('ZADD', KEYS[1], unpack(members))
                members = {}
              end
            end
            local keep = at + span - now
            if held - now > keep then keep = held - now end
            redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil((at + span - now) / 1000) + 1))
            redis.call('PEXPIRE', KEYS[2], string.format('%d', math.ceil(keep / 1000) + 1))
            return {1, at - now, now, call}
            """)

    /// Gives a window limit's reserved permits back (a waiter cancelled before it started).
    /// KEYS: as ``windowAdmit``. ARGV: now (unused), the call's number, its weight. Reply:
    /// `{removed}`, the permits given back (zero when the key expired or was reset).
    static let windowCancel = RedisScript(
        name: "tempo-window-cancel",
        source: """
            local members = {}
            local removed = 0
            for i = 1, tonumber(ARGV[3]) do
              members[#members + 1] = ARGV[2] .. '.' .. i
              if #members >= 1000 or i == tonumber(ARGV[3]) then
                removed = removed + redis.call('ZREM', KEYS[1], unpack(members))
                members = {}
              end
            end
            return {removed}
            """)

    /// A token bucket's admission (GCRA). KEYS: the key's hash (`f`: the instant the bucket
    /// is full; `l`: the latest admission reserved). ARGV: now, refill (one permit), burst,
    /// weight, the longest wait (empty: no limit). Reply: `{1, wait, now, full, fullBefore,
    /// lastBefore}`: admitted `wait` after now, the bucket full at `full` after it (the
    /// other two undo it, see ``bucketCancel``); `{0, retryAfter, now, 0, 0, 0}`: refused.
    static let bucketAdmit = RedisScript(
        name: "tempo-bucket-admit",
        source: """
            local now = tonumber(ARGV[1])
            if ARGV[1] == '' then
              local t = redis.call('TIME')
              now = tonumber(t[1]) * 1000000 + tonumber(t[2])
            end
            local refill = tonumber(ARGV[2])
            local burst = tonumber(ARGV[3])
            local weight = tonumber(ARGV[4])
            local state = redis.call('HMGET', KEYS[1], 'f', 'l')
            local full = tonumber(state[1] or now)
            local last = tonumber(state[2] or now)
            local debt = full
            if debt < now then debt = now end
            local at = debt - (burst - weight) * refill
            if at < now then at = now end
            if last > at then at = last end
            if ARGV[5] ~= '' and at - now > tonumber(ARGV[5]) then
              return {0, at - now, now, 0, 0, 0}
            end
            local after = debt
            if at > after then after = at end
            after = after + weight * refill
            redis.call('HSET', KEYS[1], 'f', string.format('%d', after), 'l', string.format('%d', at))
            redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil((after - now) / 1000) + 1))
            return {1, at - now, now, after, full, last}
            """)

    /// Gives a token bucket's reserved permits back, when nobody reserved after them.
    /// KEYS: as ``bucketAdmit``. ARGV: now (unused), the bucket's `full` after the call, and
    /// before it, and the latest admission before it. Reply: `{1}` given back, `{0}` not (a
    /// later call reserved after it, or the key expired or was reset).
    static let bucketCancel = RedisScript(
        name: "tempo-bucket-cancel",
        source: """
            local full = redis.call('HGET', KEYS[1], 'f')
            if not full or tonumber(full) ~= tonumber(ARGV[2]) then return {0} end
            redis.call('HSET', KEYS[1], 'f', ARGV[3], 'l', ARGV[4])
            return {1}
            """)

    /// Holds a key until a service's retry-after, for every instance. KEYS: the key's hash,
    /// then (for a window) the starts. ARGV: now, the retry-after, and for a token bucket
    /// its refill and burst (empty for a window). A window's hash keeps `h`, the instant no
    /// start comes before; a bucket's `f` moves to that instant plus the rest of a bucket (one
    /// permit free then), as in one process. Reply: `{until, now}`.
    static let hold = RedisScript(
        name: "tempo-hold",
        source: """
            local now = tonumber(ARGV[1])
            if ARGV[1] == '' then
              local t = redis.call('TIME')
              now = tonumber(t[1]) * 1000000 + tonumber(t[2])
            end
            local untilAt = now + tonumber(ARGV[2])
            if ARGV[3] == '' then
              local held = tonumber(redis.call('HGET', KEYS[1], 'h') or 0)
              if untilAt > held then
                redis.call('HSET', KEYS[1], 'h', string.format('%d', untilAt))
                local keep = math.ceil((untilAt - now) / 1000) + 1
                if redis.call('PTTL', KEYS[1]) < keep then
                  redis.call('PEXPIRE', KEYS[1], string.format('%d', keep))
                end
              end
              return {untilAt, now}
            end
            local refill = tonumber(ARGV[3])
            local full = untilAt + (tonumber(ARGV[4]) - 1) * refill
            local current = tonumber(redis.call('HGET', KEYS[1], 'f') or 0)
            if full > current then
              redis.call('HSET', KEYS[1], 'f', string.format('%d', full))
              redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil((full - now) / 1000) + 1))
            end
            return {untilAt, now}
            """)

    /// Forgets a key: its starts or bucket, its hold. KEYS: every key of the limit. Reply:
    /// `{deleted}`.
    static let reset = RedisScript(
        name: "tempo-reset",
        source: """
            return {redis.call('DEL', unpack(KEYS))}
            """)
}

/// SHA1 (FIPS 180-4), for the scripts' `EVALSHA` names: Tempo links no crypto library.
enum SHA1 {
    static func hex(of message: [UInt8]) -> String {
        var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
        var data = message
        let bits = UInt64(message.count) &* 8
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            data.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
        var w = [UInt32](repeating: 0, count: 80)
        for chunk in stride(from: 0, to: data.count, by: 64) {
            for i in 0..<16 {
                let b = chunk + 4 * i
                w[i] =
                    UInt32(data[b]) << 24 | UInt32(data[b + 1]) << 16 | UInt32(data[b + 2]) << 8
                    | UInt32(data[b + 3])
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = x << 1 | x >> 31
            }
            var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
            for i in 0..<80 {
                let (f, k): (UInt32, UInt32)
                switch i {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let t = (a << 5 | a >> 27) &+ f &+ e &+ k &+ w[i]
                (e, d, c, b, a) = (d, c, b << 30 | b >> 2, a, t)
            }
            h[0] &+= a
            h[1] &+= b
            h[2] &+= c
            h[3] &+= d
            h[4] &+= e
        }
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for word in h {
            for shift in stride(from: 28, through: 0, by: -4) {
                text.append(digits[Int(word >> UInt32(shift) & 0xF)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
