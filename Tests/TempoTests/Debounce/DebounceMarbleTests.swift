import Tempo
import Testing

// Every debounce mode as a marble diagram (see MarbleSupport.swift).

private func debounced(
    _ calls: String, _ option: DebounceOptions, maxWait: Duration? = nil
) async -> String {
    await runs(calls) { _, operation in
        debounce(
            window, identifier: "m", by: .taskContext, option: option, maxWait: maxWait,
            operation: operation)
    }
}

@Suite struct DebounceMarbleTests {
    @Test func debounceDefault() async {
        #expect(await debounced("abc----d-e----", .default) == "-----c------e-")
    }

    @Test func debounceRunFirst() async {
        #expect(await debounced("abc----d-----e", .runFirst) == "a----c----d--e")
    }

    @Test func debounceLeading() async {
        #expect(await debounced("ab-c-d----e-f-", .leading) == "a---------e---")
    }

    @Test func debounceMaxWait() async {
        #expect(await debounced("abcdefgh---", .default, maxWait: tick * 5) == "-----e----h")
    }

    @Test func debounceRunFirstMaxWait() async {
        #expect(await debounced("abcdefghij---", .runFirst, maxWait: tick * 5) == "a----e----j--")
    }

    @Test func debounceMaxWaitEqualToTheDurationIsAuditTime() async {
        #expect(await debounced("abc--d---e----", .default, maxWait: window) == "---c----d---e-")
    }
}
