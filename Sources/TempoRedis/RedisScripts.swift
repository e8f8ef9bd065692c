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

    /// The start of every script that decides at an instant: `now`, ARGV[1] in microseconds,
    /// or the Redis server's clock when it is empty.
    static let decisionInstant = """
        local now = tonumber(ARGV[1])
        if ARGV[1] == '' then
          local t = redis.call('TIME')
          now = tonumber(t[1]) * 1000000 + tonumber(t[2])
        end

        """

    init(name: String, source: String) {
        self.name = name
        self.source = source
        sha1 = SHA1.hex(of: Array(source.utf8))
    }

    /// A window limit's admission. KEYS: the starts (a sorted set: one member per call,
    /// scored by its start, named `total:weight`, where `total` is the weight of every call
    /// the key still holds up to this one, so the weight in any stretch of calls is a
    /// difference of two names), and the key's hash (`h`: held until). ARGV: now, span (the
    /// window and its margin), permits, weight, the longest wait (empty: no limit). Reply:
    /// `{1, wait, now, total}`: admitted, to start `wait` after now (its start reserved at that
    /// instant, in the order calls reached Redis); `{0, retryAfter, now, 0}`: refused, as the
    /// wait would be longer than allowed. A call's work is the same whatever its weight: a
    /// binary search over the calls held, at most one member added. (When the totals near
    /// 2^50 they are counted again from the oldest call held, once in a long while.)
    static let windowAdmit = RedisScript(
        name: "tempo-window-admit",
        source: decisionInstant + """
            local span = tonumber(ARGV[2])
            local permits = tonumber(ARGV[3])
            local weight = tonumber(ARGV[4])
            redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - span)
            local at = now
            local held = tonumber(redis.call('HGET', KEYS[2], 'h') or now)
            if held > at then at = held end
            local count = redis.call('ZCARD', KEYS[1])
            local total = 0
            if count > 0 then
              local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
              total = tonumber(string.match(newest[1], '^(%d+)'))
              if tonumber(newest[2]) > at then at = tonumber(newest[2]) end
              local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
              local o, w = string.match(oldest, '^(%d+):(%d+)$')
              local before = tonumber(o) - tonumber(w)
              if total + weight > 1125899906842624 then
                -- Totals near 2^50: counted again from the oldest call held, so that they stay
                -- exact in Lua's numbers (a busy key's totals only grow).
                local calls = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
                redis.call('DEL', KEYS[1])
                for i = 1, #calls, 2 do
                  local t, cw = string.match(calls[i], '^(%d+):(%d+)$')
                  redis.call('ZADD', KEYS[1], calls[i + 1],
                    string.format('%020d:%d', tonumber(t) - before, tonumber(cw)))
                end
                total = total - before
                before = 0
              end
              local excess = total - before + weight - permits
              if excess > 0 then
                -- The first call whose running total reaches before + excess: when it leaves
                -- the window, enough weight has left.
                -- Every call weighs 1 or more, so it is one of the first `excess`; with calls of
                -- weight 1 (the usual), it is the last of them, found in one look.
                local lo, hi = 0, math.min(count, excess) - 1
                if hi > 0 then
                  local name = redis.call('ZRANGE', KEYS[1], hi - 1, hi - 1)[1]
                  if tonumber(string.match(name, '^(%d+)')) < before + excess then lo = hi end
                end
                while lo < hi do
                  local mid = math.floor((lo + hi) / 2)
                  local name = redis.call('ZRANGE', KEYS[1], mid, mid)[1]
                  if tonumber(string.match(name, '^(%d+)')) >= before + excess then
                    hi = mid
                  else
                    lo = mid + 1
                  end
                end
                local found = redis.call('ZRANGE', KEYS[1], lo, lo, 'WITHSCORES')
                local leaves = tonumber(found[2]) + span
                if leaves > at then at = leaves end
              end
            end
            if ARGV[5] ~= '' and at - now > tonumber(ARGV[5]) then
              return {0, at - now, now, 0}
            end
            total = total + weight
            redis.call('ZADD', KEYS[1], string.format('%d', at),
              string.format('%020d:%d', total, weight))
            redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil((at + span - now) / 1000) + 1))
            return {1, at - now, now, total}
            """)

    /// Gives a window limit's reserved start back (a waiter cancelled before it started, or a
    /// call that was late to start), when nobody reserved after it: the calls after it were
    /// told their starts counting it. KEYS: as ``windowAdmit``. ARGV: now (unused), the call's
    /// total, its weight, its reserved start. The newest call must match all three: a key that
    /// emptied (expired, reset) counts its totals from zero again, so a later call can bear
    /// the same name at another instant. Reply: `{1}` given back; `{0}` not (a later call
    /// reserved after it, or the key expired or was reset).
    static let windowCancel = RedisScript(
        name: "tempo-window-cancel",
        source: """
            local name = string.format('%020d:%d', tonumber(ARGV[2]), tonumber(ARGV[3]))
            local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
            if newest[1] ~= name or tonumber(newest[2]) ~= tonumber(ARGV[4]) then return {0} end
            redis.call('ZREM', KEYS[1], name)
            return {1}
            """)

    /// A token bucket's admission (GCRA). KEYS: the key's hash (`f`: the instant the bucket
    /// is full; `l`: the latest admission reserved). ARGV: now, refill (one permit), burst,
    /// weight, the longest wait (empty: no limit). Reply: `{1, wait, now, full, fullBefore,
    /// lastBefore}`: admitted `wait` after now, the bucket full at `full` after it (the
    /// other two undo it, see ``bucketCancel``); `{0, retryAfter, now, 0, 0, 0}`: refused.
    static let bucketAdmit = RedisScript(
        name: "tempo-bucket-admit",
        source: decisionInstant + """
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
        source: decisionInstant + """
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
