/// A debounce or throttle decision on one call, as an observer is told of it: the registry's
/// observers, the call's group, and the instant the decision was made at.
///
/// Made where the decision is made, with the instant the decision was made at (the one the
/// group's state machine was given), and handed to the two places every call ends in: the
/// launch of its operation (``Operation/launch(_:reporting:)``), which reports `callRan`, and
/// its discard (``Operation/discard(reporting:)``), which reports `callDropped`. No path that
/// runs or drops a call reaches its end without a stamp argument, so none can leave it
/// unreported. `nil` when nobody observes, which is all a decision pays then (one relaxed
/// load), and for calls no event is about (a `delay`'s or an `execute`'s). A class, so that
/// `nil` is one word.
final class CallStamp: Sendable {
    private let events: EventHub
    private let helper: TempoSnapshot.Kind
    private let key: GroupKey
    private let at: Duration

    init(events: EventHub, helper: TempoSnapshot.Kind, key: GroupKey, at: Duration) {
        self.events = events
        self.helper = helper
        self.key = key
        self.at = at
    }

    /// Reports `decision` for the call, at the decision's instant.
    func report(_ decision: TempoEvent.Decision) {
        events.report(helper, key, decision, at: at)
    }
}

extension TempoRegistry {
    /// The stamp of a decision, made at `now`, on a call of the `helper` group under `key`;
    /// `nil` when nobody observes.
    @inline(__always)
    func stamp(_ helper: TempoSnapshot.Kind, _ key: GroupKey, at now: Duration) -> CallStamp? {
        guard events.isObserved else { return nil }
        return CallStamp(events: events, helper: helper, key: key, at: now)
    }

    /// The stamp of a decision, made at `now`, on the call of the entry of kind `Entry` under
    /// `key`; `nil` when nobody observes, or when the entry is not a debounce or throttle
    /// group (a delay's call reports nothing).
    @inline(__always)
    func stamp<Entry: TableEntry>(_: Entry.Type, _ key: Entry.Key, at now: Duration)
        -> CallStamp?
    {
        guard events.isObserved else { return nil }
        return groupStamp(Entry.self, key, at: now)
    }

    private func groupStamp<Entry: TableEntry>(_: Entry.Type, _ key: Entry.Key, at now: Duration)
        -> CallStamp?
    {
        guard let group = Entry.self as? any GroupEntry.Type, let key = key as? GroupKey else {
            return nil
        }
        return CallStamp(events: events, helper: group.helper, key: key, at: now)
    }
}
