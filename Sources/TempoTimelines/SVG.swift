/// Draws a ``Timeline`` as an SVG document.
///
/// The output depends only on the timeline: integer coordinates, a fixed element order and no
/// dates or random identifiers, so the same run draws the same bytes every time.
enum SVG {
    private static let left = 88
    private static let right = 28
    private static let firstRow = 84
    private static let rowGap = 46
    private static let radius = 11
    private static let font =
        "font-family=\"-apple-system, BlinkMacSystemFont, 'Helvetica Neue', Helvetica, Arial, sans-serif\""
    private static let mono =
        "font-family=\"ui-monospace, SFMono-Regular, Menlo, Consolas, monospace\""

    private static let ink = "#1f2328"
    private static let muted = "#656d76"
    private static let faint = "#9aa4ae"
    private static let accent = "#0969da"
    private static let windowFill = "#dbe9fb"
    private static let pendingFill = "#f2c14e"
    private static let waitFill = "#eef1f4"
    private static let failureFill = "#cf3a3a"

    static func render(_ timeline: Timeline) -> String {
        let width = max(
            x(timeline.end, timeline) + right, textWidth(timeline.subtitle, size: 12) + 40,
            textWidth(timeline.title, size: 15) + 40)
        let axisY = firstRow + (timeline.rows.count - 1) * rowGap + 34
        // The legend wraps onto as many lines as the width needs.
        var legendItems: [(style: Style, text: String, x: Int, y: Int)] = []
        var legendX = left
        var legendY = axisY + 40
        for (style, text) in timeline.legend {
            let itemWidth = 22 + textWidth(text, size: 12)
            if legendX > left && legendX + itemWidth > width - right {
                legendX = left
                legendY += 24
            }
            legendItems.append((style, text, legendX, legendY))
            legendX += itemWidth + 22
        }
        let height = legendY + 22
        var out: [String] = []
        out.append(
            // The root's id comes first: DocC records a file's first id as the image's SVG id.
            "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"\(timeline.name)\" "
                + "width=\"\(width)\" height=\"\(height)\" "
                + "viewBox=\"0 0 \(width) \(height)\" role=\"img\" "
                + "aria-labelledby=\"title desc\">")
        out.append("<title id=\"title\">\(escape(timeline.title))</title>")
        out.append("<desc id=\"desc\">\(escape(description(timeline)))</desc>")
        out.append(
            "<rect x=\"0.5\" y=\"0.5\" width=\"\(width - 1)\" height=\"\(height - 1)\" rx=\"8\" "
                + "fill=\"#ffffff\" stroke=\"#d0d7de\"/>")
        out.append(
            "<text x=\"16\" y=\"26\" \(font) font-size=\"15\" font-weight=\"600\" "
                + "fill=\"\(ink)\">\(escape(timeline.title))</text>")
        out.append(
            "<text x=\"16\" y=\"46\" \(font) font-size=\"12\" fill=\"\(muted)\">"
                + "\(escape(timeline.subtitle))</text>")

        // Grid lines first, so everything else sits on top of them.
        var ms = 0
        var index = 0
        while ms <= timeline.end {
            if index % timeline.labelEvery == 0 {
                let gx = x(ms, timeline)
                out.append(
                    "<line x1=\"\(gx)\" y1=\"\(firstRow - 22)\" x2=\"\(gx)\" y2=\"\(axisY)\" "
                        + "stroke=\"#eaeef2\"/>")
            }
            ms += timeline.tick
            index += 1
        }

        for (row, entry) in timeline.rows.enumerated() {
            let y = rowY(row)
            out.append(
                "<text x=\"\(left - 14)\" y=\"\(y + 4)\" text-anchor=\"end\" \(font) "
                    + "font-size=\"12\" fill=\"\(muted)\">\(escape(entry.name))</text>")
            out.append(
                "<line x1=\"\(left)\" y1=\"\(y)\" x2=\"\(x(timeline.end, timeline))\" y2=\"\(y)\" "
                    + "stroke=\"#d8dee4\"/>")
        }

        for link in timeline.links {
            let x1 = x(link.fromTime, timeline)
            let x2 = x(link.toTime, timeline)
            let down = link.toRow > link.fromRow
            let y1 = rowY(link.fromRow) + (down ? radius : -radius)
            let y2 = rowY(link.toRow) + (down ? -radius : radius)
            out.append(
                "<line x1=\"\(x1)\" y1=\"\(y1)\" x2=\"\(x2)\" y2=\"\(y2)\" stroke=\"\(faint)\" "
                    + "stroke-width=\"1.5\" stroke-dasharray=\"3 3\"/>")
        }

        for (row, entry) in timeline.rows.enumerated() {
            let y = rowY(row)
            // Spans under marks, so a mark at the edge of a span stays readable.
            for item in entry.items {
                if case .span(let from, let to, let label, let style) = item {
                    out.append(contentsOf: span(from, to, label, style, y, timeline))
                }
            }
            for item in entry.items {
                if case .mark(let at, let label, let style) = item {
                    out.append(contentsOf: mark(x(at, timeline), y, label, style))
                }
            }
        }

        out.append(
            "<line x1=\"\(left)\" y1=\"\(axisY)\" x2=\"\(x(timeline.end, timeline))\" "
                + "y2=\"\(axisY)\" stroke=\"\(muted)\"/>")
        ms = 0
        index = 0
        while ms <= timeline.end {
            let tx = x(ms, timeline)
            let labelled = index % timeline.labelEvery == 0
            out.append(
                "<line x1=\"\(tx)\" y1=\"\(axisY)\" x2=\"\(tx)\" y2=\"\(axisY + (labelled ? 6 : 3))\" "
                    + "stroke=\"\(muted)\"/>")
            if labelled {
                out.append(
                    "<text x=\"\(tx)\" y=\"\(axisY + 20)\" text-anchor=\"middle\" \(font) "
                        + "font-size=\"11\" fill=\"\(muted)\">\(timeLabel(ms))</text>")
            }
            ms += timeline.tick
            index += 1
        }

        for item in legendItems {
            out.append(contentsOf: swatch(item.style, item.x + 8, item.y))
            out.append(
                "<text x=\"\(item.x + 22)\" y=\"\(item.y + 4)\" \(font) font-size=\"12\" "
                    + "fill=\"\(muted)\">\(escape(item.text))</text>")
        }

        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    // MARK: - Pieces

    private static func mark(_ cx: Int, _ cy: Int, _ label: String, _ style: Style) -> [String] {
        let (fill, stroke, text, dash): (String, String, String, String) =
            switch style {
            case .call: ("#ffffff", accent, accent, "")
            case .droppedCall: ("#ffffff", faint, faint, " stroke-dasharray=\"3 2\"")
            case .run: (accent, accent, "#ffffff", "")
            case .failure: (failureFill, failureFill, "#ffffff", "")
            case .window, .pending, .wait, .work: (windowFill, accent, ink, "")
            }
        return [
            "<circle cx=\"\(cx)\" cy=\"\(cy)\" r=\"\(radius)\" fill=\"\(fill)\" stroke=\"\(stroke)\" "
                + "stroke-width=\"1.5\"\(dash)/>",
            "<text x=\"\(cx)\" y=\"\(cy + 4)\" text-anchor=\"middle\" \(mono) font-size=\"12\" "
                + "font-weight=\"600\" fill=\"\(text)\">\(escape(label))</text>",
        ]
    }

    private static func span(
        _ from: Int, _ to: Int, _ label: String, _ style: Style, _ y: Int, _ timeline: Timeline
    ) -> [String] {
        let x1 = x(from, timeline)
        let x2 = max(x(to, timeline), x1 + 2)
        let (fill, stroke, text): (String, String, String) =
            switch style {
            case .window: (windowFill, "#9ec5f4", ink)
            case .pending: (pendingFill, "#c9961f", ink)
            case .wait: (waitFill, "#c4ccd4", muted)
            case .run, .call, .work: (accent, accent, "#ffffff")
            case .failure: (failureFill, failureFill, "#ffffff")
            case .droppedCall: ("#ffffff", faint, faint)
            }
        let dash = style == .wait ? " stroke-dasharray=\"4 3\"" : ""
        var parts = [
            "<rect x=\"\(x1)\" y=\"\(y - 9)\" width=\"\(x2 - x1)\" height=\"18\" rx=\"4\" "
                + "fill=\"\(fill)\" stroke=\"\(stroke)\"\(dash)/>"
        ]
        // A label that does not fit is left out: the legend names the colour.
        if !label.isEmpty && textWidth(label, size: 11) + 10 <= x2 - x1 {
            parts.append(
                "<text x=\"\((x1 + x2) / 2)\" y=\"\(y + 4)\" text-anchor=\"middle\" \(font) "
                    + "font-size=\"11\" fill=\"\(text)\">\(escape(label))</text>")
        }
        return parts
    }

    private static func swatch(_ style: Style, _ cx: Int, _ cy: Int) -> [String] {
        switch style {
        case .call, .droppedCall, .run:
            let (fill, stroke, dash) =
                switch style {
                case .call: ("#ffffff", accent, "")
                case .droppedCall: ("#ffffff", faint, " stroke-dasharray=\"3 2\"")
                default: (accent, accent, "")
                }
            return [
                "<circle cx=\"\(cx)\" cy=\"\(cy)\" r=\"6\" fill=\"\(fill)\" stroke=\"\(stroke)\" "
                    + "stroke-width=\"1.5\"\(dash)/>"
            ]
        case .window, .pending, .wait, .failure, .work:
            let (fill, stroke) =
                switch style {
                case .window: (windowFill, "#9ec5f4")
                case .pending: (pendingFill, "#c9961f")
                case .wait: (waitFill, "#c4ccd4")
                case .work: (accent, accent)
                default: (failureFill, failureFill)
                }
            return [
                "<rect x=\"\(cx - 8)\" y=\"\(cy - 6)\" width=\"16\" height=\"12\" rx=\"3\" "
                    + "fill=\"\(fill)\" stroke=\"\(stroke)\"/>"
            ]
        }
    }

    // MARK: - Geometry and text

    private static func x(_ ms: Int, _ timeline: Timeline) -> Int {
        left + ms * timeline.pixelsPerTick / timeline.tick
    }

    private static func rowY(_ row: Int) -> Int { firstRow + row * rowGap }

    /// A rough width for laying out text: wide enough for the fonts above.
    private static func textWidth(_ text: String, size: Int) -> Int {
        text.count * size * 62 / 100
    }

    /// `0`, `500 ms`, `1 s`, `1.5 s`, `12 s`.
    static func timeLabel(_ ms: Int) -> String {
        if ms == 0 { return "0" }
        if ms < 1_000 { return "\(ms) ms" }
        let tenths = (ms % 1_000) / 100
        let rest = ms % 100
        if tenths == 0 && rest == 0 { return "\(ms / 1_000) s" }
        if rest == 0 { return "\(ms / 1_000).\(tenths) s" }
        return "\(ms) ms"
    }

    /// The picture in words, for screen readers: every item of every row.
    private static func description(_ timeline: Timeline) -> String {
        var sentences = [timeline.subtitle + "."]
        for row in timeline.rows {
            let items = row.items.map { item -> String in
                switch item {
                case .mark(let at, let label, let style):
                    let what = style == .droppedCall ? " (never ran)" : ""
                    return "\(label) at \(timeLabel(at))\(what)"
                case .span(let from, let to, let label, _):
                    let text = label.isEmpty ? "" : "\(label) "
                    return "\(text)from \(timeLabel(from)) to \(timeLabel(to))"
                }
            }
            sentences.append(
                "\(row.name): " + (items.isEmpty ? "nothing" : items.joined(separator: ", ")) + ".")
        }
        return sentences.joined(separator: " ")
    }

    private static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            default: result.append(character)
            }
        }
        return result
    }
}
