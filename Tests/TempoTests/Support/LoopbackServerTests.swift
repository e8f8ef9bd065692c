// The loopback fixture servers of the real-network tests stop when a test stops them.

import Foundation
import Testing

@Suite(.enabled(if: LoopbackServer.isEnabled("http_server.py")))
struct LoopbackServerTests {
    /// A server started from a task (the fixture's process inherits the signal mask of a
    /// task-pool thread, which blocks SIGTERM) exits once stopped: one left running kept the
    /// thread waiting for its exit spinning a core until the end of the run, and a run of the
    /// suite stops a dozen servers.
    @Test func aStoppedServerExits() async throws {
        let server = try await LoopbackServer.start("http_server.py")
        #expect(server.process.isRunning)
        server.stop()
        #expect(await eventually(within: .seconds(10)) { !server.process.isRunning })
    }
}
