/// What a ``Debouncer`` or a ``Throttler`` does with its pending call when it is
/// deinitialised: cancel it (the default) or run it now.
///
/// The editor of <doc:ShuttingDown>, whose drafts must land, flushes its autosave:
///
/// ```swift
/// @MainActor final class NoteEditor {
///     private let store: DraftStore
///     private let autosave = Debouncer(.seconds(2), onDeinit: .flush)
///
///     init(store: DraftStore) { self.store = store }
///
///     func textChanged(_ text: String) {
///         autosave { [store] in store.save(text) }   // the store, not self: see `flush`
///     }
/// }
/// ```
public enum OnDeinit: Sendable, Hashable {
    /// The pending call never runs, and the group is forgotten. The default: an owner that goes
    /// away is usually a screen that closed, and a search, a prefetch or a redraw it left
    /// pending has no one left to show its result to. It is also what Throttler 3 and earlier
    /// releases of Tempo do.
    ///
    /// ```swift
    /// let search = Debouncer(.milliseconds(300), onDeinit: .cancel)
    /// ```
    case cancel
    /// The pending call runs now, with its latest operation, on its actor, and the group is
    /// then forgotten: for work that must land, such as a save or a sync. The operation runs
    /// after its owner is gone, with what it captured: capture what it writes and where (the
    /// draft, the store), not the owner, which a weak capture finds `nil` by then. A
    /// `.taskContext` operation runs in the deinitialiser itself, on the thread that released
    /// the last reference.
    ///
    /// ```swift
    /// let saver = Debouncer(.seconds(1), onDeinit: .flush)
    /// ```
    case flush
}
