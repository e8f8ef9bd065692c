// An HTTP response that failed, as an error `retry` and a listening rate limit understand: its
// status code and the wait its `Retry-After` header asked for.

/// An HTTP response whose status is an error, with the wait its `Retry-After` header asks for.
///
/// Throw it from the code that makes a request, in one line, whatever the HTTP client: the
/// initializer takes the status code as any integer and parses the header's value with
/// ``RetryAfter/parse(_:now:)``. Since it conforms to ``RetryAfterProviding``, `retry` waits
/// as long as the server asked instead of its backoff (capped by the backoff's maximum), and a
/// rate limit made ``RateLimit/holdingOnRetryAfter(_:)`` holds its key for that long.
///
/// ```swift
/// // URLSession: `response` is an HTTPURLResponse
/// // throw HTTPStatusError(
/// //     status: response.statusCode,
/// //     retryAfterHeader: response.value(forHTTPHeaderField: "Retry-After"))
/// // AsyncHTTPClient: `response` is an HTTPClientResponse
/// // throw HTTPStatusError(
/// //     status: response.status.code,
/// //     retryAfterHeader: response.headers.first(name: "Retry-After"))
/// let error = HTTPStatusError(status: 429, retryAfterHeader: "2")
/// print(error)  // HTTP 429; retry after 2 s
/// ```
public struct HTTPStatusError: Error, Hashable, Sendable, CustomStringConvertible,
    RetryAfterProviding
{
    /// The response's status code, such as 429 or 503.
    ///
    /// ```swift
    /// let error = HTTPStatusError(status: 503)
    /// let overloaded = error.status == 503 || error.status == 429
    /// ```
    public var status: Int

    /// How long the server asked to wait before trying again, or `nil` when the response said
    /// nothing usable (no `Retry-After` header, or one that is not valid).
    ///
    /// ```swift
    /// let error = HTTPStatusError(status: 503, retryAfterHeader: "120")
    /// let wait = error.retryAfter ?? .seconds(1)  // .seconds(120)
    /// ```
    public var retryAfter: Duration?

    /// An error for a response with status `status`, asking to wait `retryAfter`.
    ///
    /// ```swift
    /// throw HTTPStatusError(status: 503, retryAfter: .seconds(30))
    /// ```
    ///
    /// - Parameters:
    ///   - status: The response's status code; one beyond `Int`'s range is clamped to it.
    ///   - retryAfter: How long to wait before trying again; `nil`, the default, to let
    ///     `retry` use its backoff.
    public init(status: some BinaryInteger, retryAfter: Duration? = nil) {
        self.status = Int(clamping: status)
        self.retryAfter = retryAfter
    }

    /// An error for a response with status `status` and a `Retry-After` header whose value is
    /// `retryAfterHeader`.
    ///
    /// ```swift
    /// let later = HTTPStatusError(status: 429, retryAfterHeader: "30")
    /// let none = HTTPStatusError(status: 500, retryAfterHeader: nil)
    /// let dated = HTTPStatusError(
    ///     status: 503, retryAfterHeader: "Sun, 06 Nov 1994 08:49:37 GMT",
    ///     now: .seconds(784_111_747))  // retryAfter: .seconds(30)
    /// ```
    ///
    /// - Parameters:
    ///   - status: The response's status code; one beyond `Int`'s range is clamped to it.
    ///   - retryAfterHeader: The value of the response's `Retry-After` header, or `nil` when
    ///     it has none. A value that ``RetryAfter/parse(_:now:)`` cannot read leaves
    ///     ``retryAfter`` `nil`.
    ///   - now: The current wall-clock time, as the time since 1970-01-01 00:00:00 UTC, from
    ///     which a date in the header is counted. By default the system's real-time clock.
    public init(
        status: some BinaryInteger, retryAfterHeader: String?,
        now: Duration = RetryAfter.systemNow()
    ) {
        self.status = Int(clamping: status)
        retryAfter = retryAfterHeader.flatMap { RetryAfter.parse($0, now: now) }
    }

    /// `HTTP 429; retry after 2 s`, or `HTTP 500` when the response asked for no wait.
    ///
    /// ```swift
    /// let text = HTTPStatusError(status: 503, retryAfter: .milliseconds(1_500)).description
    /// // "HTTP 503; retry after 1.500 s"
    /// ```
    public var description: String {
        guard let retryAfter else { return "HTTP \(status)" }
        let (seconds, fraction) = retryAfter.attoseconds.quotientAndRemainder(
            dividingBy: 1_000_000_000_000_000_000)
        let wait = fraction == 0 ? "\(seconds) s" : formatDuration(retryAfter)
        return "HTTP \(status); retry after \(wait)"
    }
}
