/// Draws a ``Timeline`` as an SVG document.
///
/// Every picture is `width` pixels wide, whatever its length in time: the axis stretches to
/// fill the frame. That width is chosen for the two places DocC shows a picture: in the
/// 820 px text column it is drawn at its own size, so the text is the size written here
/// (12 px at least); on a phone the column is about 360 px and the picture is scaled to
/// about 0.7, where the text is still 8.5 to 11 px. DocC has no variant of an image per screen
/// width (only per appearance and display scale), so one picture serves both.
///
/// The output depends only on the timeline and the palette: integer coordinates, a fixed
/// element order and no dates or random identifiers, so the same run draws the same bytes
/// every time.
enum SVG {
    static let width = 520
    private static let pad = 16
    private static let right = 18
    private static let rowGap = 50
    private static let radius = 10
    private static let font =
        "font-family=\"-apple-system, BlinkMacSystemFont, 'Helvetica Neue', Helvetica, Arial, sans-serif\""
    private static let mono =
        "font-family=\"ui-monospace, SFMono-Regular, Menlo, Consolas, monospace\""

    static func render(_ timeline: Timeline, _ p: Palette) -> String {
        var out: [String] = []
        // The title and the subtitle wrap to the width.
        let titleLines = wrap(timeline.title, size: 16, width: width - 2 * pad)
        let subtitleLines = wrap(timeline.subtitle, size: 13, width: width - 2 * pad)
        var y = pad + 14
        var header: [String] = []
        for line in titleLines {
            header.append(
                "<text x=\"\(pad)\" y=\"\(y)\" \(font) font-size=\"16\" font-weight=\"600\" "
                    + "fill=\"\(p.ink)\">\(escape(line))</text>")
            y += 21
        }
        y += 1
        for line in subtitleLines {
            header.append(
                "<text x=\"\(pad)\" y=\"\(y)\" \(font) font-size=\"13\" fill=\"\(p.muted)\">"
                    + "\(escape(line))</text>")
            y += 18
        }
        // The rows, with room above each for the labels of short waits.
        let left = pad + timeline.rows.map { textWidth($0.name, size: 13) }.max()! + 14
        let geometry = Geometry(left: left, end: timeline.end)
        let firstRow = y + 26
        let rowY = { (row: Int) in firstRow + row * rowGap }
        let axisY = rowY(timeline.rows.count - 1) + 30

        // The legend, on as few lines as fit, balanced so that no line holds a lone item.
        let items = timeline.legend.map {
            (style: $0.0, text: $0.1, width: 24 + textWidth($0.1, size: 13))
        }
        let legendLines = balance(items.map(\.width), gap: 20, width: width - 2 * pad)
        let legendTop = axisY + 46
        let height = legendTop + (legendLines.count - 1) * 24 + 20

        out.append(
            // The root's id comes first: DocC records a file's first id as the image's SVG id.
            "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"\(timeline.name)\(p.suffix)\" "
                + "width=\"\(width)\" height=\"\(height)\" "
                + "viewBox=\"0 0 \(width) \(height)\" role=\"img\" "
                + "aria-labelledby=\"title desc\">")
        out.append("<title id=\"title\">\(escape(timeline.title))</title>")
        out.append("<desc id=\"desc\">\(escape(description(timeline)))</desc>")
        out.append(
            "<rect x=\"0.5\" y=\"0.5\" width=\"\(width - 1)\" height=\"\(height - 1)\" rx=\"8\" "
                + "fill=\"\(p.background)\" stroke=\"\(p.border)\"/>")
        out.append(contentsOf: header)

        // Grid lines first, so everything else sits on top of them.
        let axisEnd = geometry.x(timeline.end)
        var ms = 0
        var index = 0
        while ms <= timeline.end {
            if index % timeline.labelEvery == 0 {
                let gx = geometry.x(ms)
                out.append(
                    "<line x1=\"\(gx)\" y1=\"\(firstRow - 24)\" x2=\"\(gx)\" y2=\"\(axisY)\" "
                        + "stroke=\"\(p.grid)\"/>")
            }
            ms += timeline.tick
            index += 1
        }
        for (row, entry) in timeline.rows.enumerated() {
            out.append(
                "<text x=\"\(left - 14)\" y=\"\(rowY(row) + 5)\" text-anchor=\"end\" \(font) "
                    + "font-size=\"13\" fill=\"\(p.ink)\">\(escape(entry.name))</text>")
            out.append(
                "<line x1=\"\(left)\" y1=\"\(rowY(row))\" x2=\"\(axisEnd)\" y2=\"\(rowY(row))\" "
                    + "stroke=\"\(p.rowLine)\"/>")
        }
        for link in timeline.links {
            let down = link.toRow > link.fromRow
            let y1 = rowY(link.fromRow) + (down ? radius : -radius)
            let y2 = rowY(link.toRow) + (down ? -radius : radius)
            out.append(
                "<line x1=\"\(geometry.x(link.fromTime))\" y1=\"\(y1)\" "
                    + "x2=\"\(geometry.x(link.toTime))\" y2=\"\(y2)\" stroke=\"\(p.link)\" "
                    + "stroke-width=\"1.5\" stroke-dasharray=\"3 3\"/>")
        }
        for (row, entry) in timeline.rows.enumerated() {
            // Spans under marks, so a mark at the edge of a span stays readable.
            for item in entry.items {
                if case .span(let from, let to, let label, let style) = item {
                    out.append(
                        contentsOf: span(
                            geometry.x(from), max(geometry.x(to), geometry.x(from) + 2), label,
                            style, rowY(row), p))
                }
            }
            for item in entry.items {
                if case .mark(let at, let label, let style) = item {
                    out.append(contentsOf: mark(geometry.x(at), rowY(row), label, style, p))
                }
            }
        }

        out.append(
            "<line x1=\"\(left)\" y1=\"\(axisY)\" x2=\"\(axisEnd)\" y2=\"\(axisY)\" "
                + "stroke=\"\(p.muted)\"/>")
        ms = 0
        index = 0
        while ms <= timeline.end {
            let tx = geometry.x(ms)
            let labelled = index % timeline.labelEvery == 0
            out.append(
                "<line x1=\"\(tx)\" y1=\"\(axisY)\" x2=\"\(tx)\" y2=\"\(axisY + (labelled ? 6 : 3))\" "
                    + "stroke=\"\(p.muted)\"/>")
            if labelled {
                // The last label ends at the frame's edge rather than past it.
                let last = ms + timeline.tick > timeline.end
                let anchor = ms == 0 ? "start" : (last ? "end" : "middle")
                let lx = ms == 0 ? tx - 4 : (anchor == "end" ? tx + 4 : tx)
                out.append(
                    "<text x=\"\(lx)\" y=\"\(axisY + 21)\" text-anchor=\"\(anchor)\" \(font) "
                        + "font-size=\"12\" fill=\"\(p.muted)\">\(timeLabel(ms))</text>")
            }
            ms += timeline.tick
            index += 1
        }

        var first = 0
        for (line, count) in legendLines.enumerated() {
            var lx = pad
            let ly = legendTop + line * 24
            for item in items[first..<(first + count)] {
                out.append(contentsOf: swatch(item.style, lx + 8, ly, p))
                out.append(
                    "<text x=\"\(lx + 22)\" y=\"\(ly + 5)\" \(font) font-size=\"13\" "
                        + "fill=\"\(p.ink)\">\(escape(item.text))</text>")
                lx += item.width + 20
            }
            first += count
        }

        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }

    /// Milliseconds to pixels: the axis runs from `left` to the right edge of the frame.
    private struct Geometry {
        var left: Int
        var end: Int
        func x(_ ms: Int) -> Int { left + ms * (SVG.width - SVG.right - left) / max(end, 1) }
    }

    // MARK: - Pieces

    private static func mark(
        _ cx: Int, _ cy: Int, _ label: String, _ style: Style, _ p: Palette
    ) -> [String] {
        let (fill, stroke, text, dash): (String, String, String, String) =
            switch style {
            case .call: (p.background, p.accent, p.accent, "")
            case .droppedCall: (p.background, p.dropped, p.dropped, " stroke-dasharray=\"3 2\"")
            case .run: (p.accent, p.accent, p.onAccent, "")
            case .failure: (p.failure, p.failure, p.onAccent, "")
            case .window, .pending, .wait, .work: (p.windowFill, p.accent, p.ink, "")
            }
        return [
            "<circle cx=\"\(cx)\" cy=\"\(cy)\" r=\"\(radius)\" fill=\"\(fill)\" stroke=\"\(stroke)\" "
                + "stroke-width=\"1.5\"\(dash)/>",
            "<text x=\"\(cx)\" y=\"\(cy + 4)\" text-anchor=\"middle\" \(mono) font-size=\"13\" "
                + "font-weight=\"600\" fill=\"\(text)\">\(escape(label))</text>",
        ]
    }

    private static func span(
        _ x1: Int, _ x2: Int, _ label: String, _ style: Style, _ y: Int, _ p: Palette
    ) -> [String] {
        let (fill, stroke, text): (String, String, String) =
            switch style {
            case .window: (p.windowFill, p.windowStroke, p.ink)
            case .pending: (p.pendingFill, p.pendingStroke, p.onPending)
            case .wait: (p.waitFill, p.waitStroke, p.ink)
            case .run, .call, .work: (p.accent, p.accent, p.onAccent)
            case .failure: (p.failure, p.failure, p.onAccent)
            case .droppedCall: (p.background, p.dropped, p.dropped)
            }
        let dash = style == .wait ? " stroke-dasharray=\"4 3\"" : ""
        var parts = [
            "<rect x=\"\(x1)\" y=\"\(y - 9)\" width=\"\(x2 - x1)\" height=\"18\" rx=\"4\" "
                + "fill=\"\(fill)\" stroke=\"\(stroke)\"\(dash)/>"
        ]
        guard !label.isEmpty else { return parts }
        if textWidth(label, size: 12) + 8 <= x2 - x1 {
            parts.append(
                "<text x=\"\((x1 + x2) / 2)\" y=\"\(y + 4)\" text-anchor=\"middle\" \(font) "
                    + "font-size=\"12\" fill=\"\(text)\">\(escape(label))</text>")
        } else if style == .wait {
            // A wait too short for its length: the length goes above it, where rows leave room.
            parts.append(
                "<text x=\"\((x1 + x2) / 2)\" y=\"\(y - 14)\" text-anchor=\"middle\" \(font) "
                    + "font-size=\"12\" fill=\"\(p.muted)\">\(escape(label))</text>")
        }
        // Any other label that does not fit is left out: the legend names the colour.
        return parts
    }

    private static func swatch(_ style: Style, _ cx: Int, _ cy: Int, _ p: Palette) -> [String] {
        switch style {
        case .call, .droppedCall, .run:
            let (fill, stroke, dash) =
                switch style {
                case .call: (p.background, p.accent, "")
                case .droppedCall: (p.background, p.dropped, " stroke-dasharray=\"3 2\"")
                default: (p.accent, p.accent, "")
                }
            return [
                "<circle cx=\"\(cx)\" cy=\"\(cy)\" r=\"7\" fill=\"\(fill)\" stroke=\"\(stroke)\" "
                    + "stroke-width=\"1.5\"\(dash)/>"
            ]
        case .window, .pending, .wait, .failure, .work:
            let (fill, stroke) =
                switch style {
                case .window: (p.windowFill, p.windowStroke)
                case .pending: (p.pendingFill, p.pendingStroke)
                case .wait: (p.waitFill, p.waitStroke)
                case .work: (p.accent, p.accent)
                default: (p.failure, p.failure)
                }
            return [
                "<rect x=\"\(cx - 8)\" y=\"\(cy - 7)\" width=\"16\" height=\"14\" rx=\"3\" "
                    + "fill=\"\(fill)\" stroke=\"\(stroke)\"/>"
            ]
        }
    }
}
