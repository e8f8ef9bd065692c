import Tempo

/// A Redis (or Valkey) connection that runs Tempo's scripts: the one thing a
/// ``SharedRateLimiter`` needs from your client.
///
/// Tempo links no Redis client. Conform the client you already use in a few lines: run the
/// script by its SHA1 (`EVALSHA`) with its keys and arguments, and when the server answers
/// `NOSCRIPT` (its script cache is empty: a restart, a `SCRIPT FLUSH`, a new replica), run it
/// by its source (`EVAL`, which caches it again). Return the reply, an array of integers, as
/// `[Int64]`; throw whatever your client throws for an error reply or a broken connection.
///
/// ```swift
/// struct MyRedis: RedisScripting {
///     let connection: SomeRedisConnection
///
///     func evaluate(_ script: RedisScript, keys: [String], arguments: [String])
///         async throws -> [Int64]
///     {
///         do {
///             return try await connection.evalsha(
///                 script.sha1, keys: keys, args: arguments)
///         } catch let error as SomeRedisError
///             where error.message.hasPrefix("NOSCRIPT")
///         {
///             return try await connection.eval(
///                 script.source, keys: keys, args: arguments)
///         }
///     }
/// }
/// ```
public protocol RedisScripting: Sendable {
    /// Runs `script` with `keys` and `arguments` (`EVALSHA`, then `EVAL` on `NOSCRIPT`) and
    /// returns its reply: an array of integers.
    ///
    /// - Parameters:
    ///   - script: One of Tempo's scripts: its SHA1 and its source.
    ///   - keys: The script's keys (`KEYS`), all in one hash slot.
    ///   - arguments: The script's arguments (`ARGV`).
    /// - Returns: The script's reply, an array of integers.
    /// - Throws: Whatever the client throws: an error reply, a closed connection.
    func evaluate(_ script: RedisScript, keys: [String], arguments: [String]) async throws
        -> [Int64]
}

/// One of Tempo's Lua scripts: its name, its source and the SHA1 of the source (what
/// `EVALSHA` and `SCRIPT LOAD` use).
///
/// ```swift
/// for script in RedisScript.all {
///     print(script.name, script.sha1)
/// }
/// ```
public struct RedisScript: Sendable, Hashable, CustomStringConvertible {
    /// A short name, for logs: `tempo-window-admit`, ….
    public let name: String
    /// The Lua source, as `EVAL` and `SCRIPT LOAD` take it.
    public let source: String
    /// The lowercase hexadecimal SHA1 of ``source``, as `EVALSHA` takes it.
    public let sha1: String

    /// The name and SHA1, such as `tempo-window-admit (3f2a…)`.
    public var description: String { "\(name) (\(sha1))" }
}
