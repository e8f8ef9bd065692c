import Tempo
import Testing

// Every throttle mode as a marble diagram (see MarbleSupport.swift).

private func throttled(_ calls: String, _ option: ThrottleOptions) async -> String {
    await runs(calls) { _, operation in
        throttle(window, identifier: "m", by: .taskContext, option: option, operation: operation)
    }
}

@Suite struct ThrottleMarbleTests {
    @Test func throttleDefault() async {
        #expect(await throttled("abcdefg", .default) == "a--d--g")
    }

    @Test func throttleEnsureLast() async {
        #expect(await throttled("abc-----d----", .ensureLast) == "a--c----d----")
    }

    @Test func throttleTrailing() async {
        #expect(await throttled("abc--d---e----", .trailing) == "---c--d-----e-")
    }
}
