import Foundation
import TempoTesting
import Testing

@testable import Tempo

// Which registry is current: the innermost `withCurrent` scope's, inherited by the tasks started
// in it for as long as they run, the firing registry's inside a timer's operation, else
// `shared`. The free functions skip the task-local lookup while no binding is alive anywhere,
// so these cases pin that a live binding is never missed.

@Suite struct CurrentRegistryTests {
    @Test func aTaskStartedInAScopeKeepsItsRegistryAfterTheScopeEnds() async {
        let registry = TempoRegistry(clock: ManualClock())
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = registry.withCurrent {
            Task {
                for await _ in gate {}
                return TempoRegistry.current === registry
            }
        }
        // The scope has ended; the task still runs with the binding it inherited.
        open.finish()
        #expect(await task.value)
    }

    @Test func nestedScopesAndTheirEnds() async {
        let outer = TempoRegistry(clock: ManualClock())
        let inner = TempoRegistry(clock: ManualClock())
        outer.withCurrent {
            #expect(TempoRegistry.current === outer)
            inner.withCurrent { #expect(TempoRegistry.current === inner) }
            #expect(TempoRegistry.current === outer)
            TempoRegistry.shared.withCurrent {
                #expect(TempoRegistry.current === TempoRegistry.shared)
            }
            #expect(TempoRegistry.current === outer)
        }
    }

    @Test func aDetachedTaskInsideAScopeSeesShared() async {
        let registry = TempoRegistry(clock: ManualClock())
        let seen = await registry.withCurrent {
            await Task.detached { TempoRegistry.current === TempoRegistry.shared }.value
        }
        #expect(seen)
    }

    @Test func aTimersOperationSeesTheRegistryThatFiredIt() async {
        let clock = ManualClock()
        let registry = TempoRegistry(clock: clock)
        let seen = Log<Bool>()
        registry.withCurrent {
            debounce(.seconds(1), identifier: "a", by: .taskContext) {
                seen.append(TempoRegistry.current === registry)
            }
        }
        // Outside the scope now: the timer binds its registry for the operation it starts.
        await clock.advance(by: .seconds(1))
        #expect(await eventually { seen.all == [true] })
    }

    @Test func aScopeOnAPlainThreadIsSeenThere() async {
        let registry = TempoRegistry(clock: ManualClock())
        let seen = Log<Bool>()
        let thread = Thread {
            registry.withCurrent { seen.append(TempoRegistry.current === registry) }
            seen.append(TempoRegistry.current === TempoRegistry.shared)
        }
        thread.start()
        #expect(await eventually { seen.all == [true, true] })
    }

    @Test func theBindingCountFollowsTheScopes() async {
        // Other suites open scopes meanwhile: only a lower bound can be checked here.
        let registry = TempoRegistry(clock: ManualClock())
        registry.withCurrent { #expect(TempoRegistry.Binding.anyLive) }
        // A scope of `shared` needs no lookup: it is what `current` is without one.
        TempoRegistry.shared.withCurrent { #expect(TempoRegistry.current === TempoRegistry.shared) }
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = registry.withCurrent { Task { for await _ in gate {} } }
        #expect(TempoRegistry.Binding.anyLive)
        open.finish()
        await task.value
    }
}
