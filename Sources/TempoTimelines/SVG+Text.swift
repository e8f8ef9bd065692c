// The text of a picture: how wide it is taken to be, how it wraps, how the legend is cut
// into lines, the time labels, the picture in words for screen readers, and escaping.

extension SVG {
    /// A rough width for laying out text: wide enough for the fonts above.
    static func textWidth(_ text: String, size: Int) -> Int {
        text.count * size * 55 / 100
    }

    /// `text` broken into lines at spaces, each at most `width` wide.
    static func wrap(_ text: String, size: Int, width: Int) -> [String] {
        // A number keeps its unit on its line: `300 ms`, not `300` and `ms` on the next.
        var words: [String] = []
        for word in text.split(separator: " ").map(String.init) {
            if let last = words.last, last.allSatisfy({ $0.isNumber || $0 == "." }),
                word.hasPrefix("ms") || word.hasPrefix("s")
            {
                words[words.count - 1] += "\u{00A0}" + word
            } else {
                words.append(word)
            }
        }
        var lines: [String] = []
        var line = ""
        for word in words {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if !line.isEmpty && textWidth(candidate, size: size) > width {
                lines.append(line)
                line = String(word)
            } else {
                line = candidate
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// How many legend items go on each line: as few lines as the widths need, and of those
    /// splits the one whose longest line is shortest, so the items spread evenly.
    static func balance(_ widths: [Int], gap: Int, width: Int) -> [Int] {
        func lineWidth(_ range: Range<Int>) -> Int {
            widths[range].reduce(0, +) + gap * (range.count - 1)
        }
        for lines in 1...max(widths.count, 1) {
            // Every way to cut the items into `lines` consecutive groups (there are few items).
            var best: (longest: Int, counts: [Int])? = nil
            func split(_ start: Int, _ left: Int, _ counts: [Int], _ longest: Int) {
                if left == 1 {
                    let last = lineWidth(start..<widths.count)
                    let total = max(longest, last)
                    if last <= width, total < best?.longest ?? Int.max {
                        best = (total, counts + [widths.count - start])
                    }
                    return
                }
                guard start + left <= widths.count else { return }
                for end in (start + 1)...(widths.count - left + 1) {
                    let w = lineWidth(start..<end)
                    if w > width { break }
                    split(end, left - 1, counts + [end - start], max(longest, w))
                }
            }
            split(0, lines, [], 0)
            if let best { return best.counts }
        }
        return widths.map { _ in 1 }
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
    static func description(_ timeline: Timeline) -> String {
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

    static func escape(_ text: String) -> String {
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
