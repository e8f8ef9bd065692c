/// The colours of a picture, one set for each appearance DocC can show it in.
///
/// DocC picks `name~dark.svg` over `name.svg` when the page is dark, so every timeline is drawn
/// twice. Text keeps a contrast of at least 4.5:1 with what it sits on in both sets.
struct Palette {
    /// The suffix of the file name, before `.svg`: empty, or `~dark`.
    var suffix: String
    var background: String
    var border: String
    /// Titles, row names, labels inside light spans.
    var ink: String
    /// Subtitles, the axis, the legend: still well above 4.5:1 on the background.
    var muted: String
    /// Lines that only guide the eye: the grid, the rows, the links.
    var grid: String
    var rowLine: String
    var link: String
    /// A call that ran, a run, an attempt that succeeded.
    var accent: String
    /// Text on `accent` and on `failure`.
    var onAccent: String
    /// A call that never ran: its outline and its letter.
    var dropped: String
    var windowFill: String
    var windowStroke: String
    var pendingFill: String
    var pendingStroke: String
    /// Text on `pendingFill`.
    var onPending: String
    var waitFill: String
    var waitStroke: String
    var failure: String

    static let light = Palette(
        suffix: "", background: "#ffffff", border: "#d0d7de", ink: "#1f2328",
        muted: "#4d5660", grid: "#eaeef2", rowLine: "#d8dee4", link: "#8c959f",
        accent: "#0969da", onAccent: "#ffffff", dropped: "#6e7781",
        windowFill: "#dbe9fb", windowStroke: "#6ea8f0", pendingFill: "#f2c14e",
        pendingStroke: "#b3861a", onPending: "#1f2328", waitFill: "#eef1f4",
        waitStroke: "#8c959f", failure: "#cf222e")

    static let dark = Palette(
        suffix: "~dark", background: "#161b22", border: "#3d444d", ink: "#e6edf3",
        muted: "#b1bac4", grid: "#262c36", rowLine: "#3d444d", link: "#768390",
        accent: "#4493f8", onAccent: "#0d1117", dropped: "#9198a1",
        windowFill: "#1d3557", windowStroke: "#4493f8", pendingFill: "#d6a53a",
        pendingStroke: "#e3b341", onPending: "#0d1117", waitFill: "#262c36",
        waitStroke: "#768390", failure: "#f85149")
}
