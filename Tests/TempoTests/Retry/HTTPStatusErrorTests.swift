// `HTTPStatusError`: the status and `Retry-After` header of a failed response, its description,
// and `retry` waiting as long as it asks.

import Tempo
import Testing

@Suite struct HTTPStatusErrorTests {
    /// 08:49:07 UTC on 6 November 1994: 30 s before RFC 9110's example date.
    static let now = Duration.seconds(784_111_747)

    @Test func theHeaderBecomesRetryAfter() {
        let seconds = HTTPStatusError(status: 429, retryAfterHeader: "2")
        #expect(seconds.status == 429)
        #expect(seconds.retryAfter == .seconds(2))
        let date = HTTPStatusError(
            status: 503, retryAfterHeader: "Sun, 06 Nov 1994 08:49:37 GMT", now: Self.now)
        #expect(date.status == 503)
        #expect(date.retryAfter == .seconds(30))
        let obsolete = HTTPStatusError(
            status: 503, retryAfterHeader: "Sun Nov  6 08:49:37 1994", now: Self.now)
        #expect(obsolete.retryAfter == .seconds(30))
        let past = HTTPStatusError(
            status: 503, retryAfterHeader: "Sun, 06 Nov 1994 08:49:00 GMT", now: Self.now)
        #expect(past.retryAfter == .zero)
        #expect(
            HTTPStatusError(status: 503, retryAfterHeader: " 120\t").retryAfter == .seconds(120))
    }

    @Test func noUsableHeaderLeavesRetryAfterNil() {
        #expect(HTTPStatusError(status: 500, retryAfterHeader: nil).retryAfter == nil)
        #expect(HTTPStatusError(status: 503, retryAfterHeader: "").retryAfter == nil)
        #expect(HTTPStatusError(status: 503, retryAfterHeader: "soon").retryAfter == nil)
        #expect(HTTPStatusError(status: 503, retryAfterHeader: "-1").retryAfter == nil)
        #expect(HTTPStatusError(status: 503).retryAfter == nil)
    }

    @Test func aWaitGivenAsADuration() {
        let error = HTTPStatusError(status: 503, retryAfter: .milliseconds(1_500))
        #expect(error.status == 503)
        #expect(error.retryAfter == .milliseconds(1_500))
        #expect((error as any RetryAfterProviding).retryAfter == .milliseconds(1_500))
    }

    @Test func theStatusIsAnyInteger() {
        // AsyncHTTPClient's `status.code` is a `UInt`; URLSession's `statusCode` an `Int`.
        let code: UInt = 429
        #expect(HTTPStatusError(status: code, retryAfterHeader: "1").status == 429)
        #expect(HTTPStatusError(status: Int16(503)).status == 503)
        #expect(HTTPStatusError(status: UInt64.max).status == Int.max)
        #expect(HTTPStatusError(status: Int128.min, retryAfterHeader: nil).status == Int.min)
    }

    @Test func theDescriptionSaysWhatHappened() {
        #expect(
            HTTPStatusError(status: 429, retryAfterHeader: "2").description
                == "HTTP 429; retry after 2 s")
        #expect(HTTPStatusError(status: 500, retryAfterHeader: nil).description == "HTTP 500")
        #expect(
            HTTPStatusError(status: 503, retryAfter: .zero).description
                == "HTTP 503; retry after 0 s")
        #expect(
            HTTPStatusError(status: 503, retryAfter: .milliseconds(1_500)).description
                == "HTTP 503; retry after 1.500 s")
        #expect(
            HTTPStatusError(status: 503, retryAfter: .milliseconds(250)).description
                == "HTTP 503; retry after 250.0 ms")
        #expect(
            HTTPStatusError(status: 429, retryAfterHeader: String(repeating: "9", count: 30))
                .description == "HTTP 429; retry after 9223372036854775807 s")
        // Beyond an `Int64` of seconds, no trap.
        #expect(
            HTTPStatusError(status: 503, retryAfter: .seconds(Int64.max) * 10).description
                == "HTTP 503; retry after 92233720368547758070 s")
        #expect("\(HTTPStatusError(status: 404))" == "HTTP 404")
    }

    @Test func equalWhenTheStatusAndTheWaitAre() {
        let error = HTTPStatusError(status: 429, retryAfterHeader: "2")
        #expect(error == HTTPStatusError(status: 429, retryAfter: .seconds(2)))
        #expect(error != HTTPStatusError(status: 503, retryAfter: .seconds(2)))
        #expect(error != HTTPStatusError(status: 429, retryAfter: .seconds(3)))
        #expect(error != HTTPStatusError(status: 429))
        #expect(Set([error, HTTPStatusError(status: 429, retryAfter: .seconds(2))]).count == 1)
    }

    @Test func retryWaitsAsLongAsTheHeaderAsks() async {
        let result = await RetryBackoffTests().schedule(
            3, backoff: .constant(.milliseconds(100)),
            error: { attempt in
                attempt == 1
                    ? HTTPStatusError(status: 429, retryAfterHeader: "2")
                    : HTTPStatusError(status: 503, retryAfterHeader: nil)
            })
        #expect(result.waits == [.seconds(2), .milliseconds(100)])
    }
}
