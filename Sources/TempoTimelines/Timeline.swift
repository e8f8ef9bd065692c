/// One picture: a few labelled rows over a shared time axis.
///
/// Times are whole milliseconds from the start of the scenario. Everything a timeline holds
/// comes from a run of the library on a manual clock; the renderer only lays it out.
struct Timeline {
    /// The file name, without the `.svg` extension.
    var name: String
    /// The first line of the picture, e.g. `debounce · .default`.
    var title: String
    /// The second line: the settings of the run.
    var subtitle: String
    /// The spacing of the axis' small ticks, in milliseconds.
    var tick: Int
    /// The axis labels are written every `labelEvery` ticks.
    var labelEvery: Int
    /// The end of the axis, in milliseconds.
    var end: Int
    /// The rows, top to bottom.
    var rows: [Row]
    /// Lines from a mark on one row to a mark on another (a call to its run).
    var links: [Link] = []
    /// What the styles mean, shown under the axis.
    var legend: [(Style, String)]
}

/// One row of a timeline.
struct Row {
    var name: String
    var items: [Item]
}

/// Something on a row.
enum Item {
    /// An event at one instant, labelled with a short text (a letter).
    case mark(at: Int, label: String, style: Style)
    /// Something that lasts, from `from` to `to`, with an optional label inside or above it.
    case span(from: Int, to: Int, label: String, style: Style)
}

/// A line from one mark to another, by row index and time.
struct Link {
    var fromRow: Int
    var fromTime: Int
    var toRow: Int
    var toTime: Int
}

/// How an item is drawn.
enum Style {
    /// A call whose operation ran.
    case call
    /// A call whose operation never ran (dropped or replaced).
    case droppedCall
    /// An operation running, at an instant.
    case run
    /// An operation running, over a span of time.
    case work
    /// A window that is open, or a quiet period, with nothing waiting.
    case window
    /// A call waiting to run.
    case pending
    /// A wait between runs or attempts.
    case wait
    /// An attempt that failed.
    case failure
}
