/// The unit a row's figures are in; it decides how they are printed.
enum Unit: String, Sendable {
    case nanosecondsPerCall = "ns/call"
    case callsPerSecond = "calls/s"
    case bytesPerIdentifier = "bytes/identifier"
    case bytesPerStart = "bytes/start"
    case bytes = "bytes"
    case microseconds = "µs"
    case count = "count"
    /// CPU time over wall time: how many cores the process used.
    case cores = "cores"
}

/// One line of the report.
struct Row: Sendable {
    var section: String
    var name: String
    var unit: Unit
    var stats: Stats
    /// The median cost per call divided by the floor's median, for cost rows.
    var ratioToFloor: Double?
    /// The name the regression gate knows the row by, where `name` holds a figure of the run.
    var gateName: String? = nil
    /// Whether the row is a floor itself (its ratio is 1 by definition), not a cost.
    var isFloor = false
}

/// A target from the issue, checked against the rows.
struct Target: Sendable {
    var name: String
    var measured: String
    var met: Bool
    /// What limits the number, printed when the target is missed.
    var note: String
}

/// Everything a run measured.
struct Report: Sendable {
    var quick: Bool
    var repetitions: Int
    var cores: Int
    /// The system's 1-minute load average when the run started (`nil` where unknown): other
    /// work on the machine shows up in every figure.
    var loadAverage: Double?
    var rows: [Row] = []
    var targets: [Target] = []
    var notes: [String] = []
    var wallSeconds: Double = 0

    func markdown() -> String {
        var lines: [String] = []
        let mode = quick ? "quick (--quick)" : "full"
        let load = loadAverage.map { ", load average \(format($0, digits: 2)) at the start" } ?? ""
        lines.append(
            "Tempo benchmarks: \(mode) run, \(repetitions) repetitions per row "
                + "(memory rows: fresh processes), \(cores) cores\(load)")
        lines.append("")
        // One table per section, so that each fits the documentation's text column: the
        // `× floor` column only where a section has ratios, next to the median it divides.
        var sections: [String] = []
        for row in rows where !sections.contains(row.section) { sections.append(row.section) }
        for section in sections {
            let sectionRows = rows.filter { $0.section == section }
            let ratios = sectionRows.contains { $0.ratioToFloor != nil }
            lines.append("**\(section)**")
            lines.append("")
            lines.append(
                ratios
                    ? "| measurement | median | × floor | min | max | unit |"
                    : "| measurement | median | min | max | unit |")
            lines.append(
                ratios
                    ? "| --- | ---: | ---: | ---: | ---: | --- |"
                    : "| --- | ---: | ---: | ---: | --- |")
            for row in sectionRows {
                let ratio =
                    ratios
                    ? (row.ratioToFloor.map { format($0, digits: 2) + "×" } ?? "") + " | " : ""
                lines.append(
                    "| \(row.name) | \(show(row.stats.median, row.unit)) | \(ratio)"
                        + "\(show(row.stats.min, row.unit)) | \(show(row.stats.max, row.unit)) | "
                        + "\(row.unit.rawValue) |")
            }
            lines.append("")
        }
        lines.append("| target | measured | status |")
        lines.append("| --- | --- | --- |")
        for target in targets {
            lines.append(
                "| \(target.name) | \(target.measured) | \(target.met ? "met" : "**MISSED**") |")
        }
        let missed = targets.filter { !$0.met }
        lines.append("")
        if missed.isEmpty {
            lines.append("All targets met.")
        } else {
            lines.append("Missed targets and what limits them:")
            for target in missed { lines.append("- \(target.name): \(target.note)") }
        }
        for note in notes { lines.append("- \(note)") }
        lines.append("")
        lines.append("Wall time: \(format(wallSeconds, digits: 1)) s")
        return lines.joined(separator: "\n")
    }

    func json() -> String {
        var out = "{\n"
        out += "  \"mode\": \(quote(quick ? "quick" : "full")),\n"
        out += "  \"repetitions\": \(repetitions),\n"
        out += "  \"cores\": \(cores),\n"
        out += "  \"loadAverage\": \(loadAverage.map(number) ?? "null"),\n"
        out += "  \"wallSeconds\": \(number(wallSeconds)),\n"
        out += "  \"rows\": [\n"
        out += rows.map { row in
            var fields = [
                "\"section\": \(quote(row.section))", "\"name\": \(quote(row.name))",
                "\"unit\": \(quote(row.unit.rawValue))", "\"median\": \(number(row.stats.median))",
                "\"min\": \(number(row.stats.min))", "\"max\": \(number(row.stats.max))",
            ]
            if let ratio = row.ratioToFloor { fields.append("\"ratioToFloor\": \(number(ratio))") }
            return "    {" + fields.joined(separator: ", ") + "}"
        }.joined(separator: ",\n")
        out += "\n  ],\n"
        out += "  \"targets\": [\n"
        out += targets.map { target in
            "    {\"name\": \(quote(target.name)), \"measured\": \(quote(target.measured)), "
                + "\"met\": \(target.met), \"note\": \(quote(target.met ? "" : target.note))}"
        }.joined(separator: ",\n")
        out += "\n  ],\n"
        out += "  \"notes\": [" + notes.map(quote).joined(separator: ", ") + "]\n"
        out += "}"
        return out
    }
}

/// A figure in its unit, for the table.
func show(_ value: Double, _ unit: Unit) -> String {
    switch unit {
    case .nanosecondsPerCall, .microseconds:
        return format(value, digits: value < 100 ? 1 : 0)
    case .callsPerSecond:
        return format(value / 1e6, digits: 2) + " M"
    case .bytesPerIdentifier, .bytesPerStart, .bytes, .count:
        return grouped(Int(value.rounded()))
    case .cores:
        return format(value, digits: 2)
    }
}

/// `value` with `digits` decimals, without Foundation.
func format(_ value: Double, digits: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((abs(value) * scale).rounded())
    let sign = value < 0 && scaled != 0 ? "-" : ""
    let whole = scaled / Int(scale)
    guard digits > 0 else { return sign + grouped(whole) }
    var fraction = String(scaled % Int(scale))
    while fraction.count < digits { fraction = "0" + fraction }
    return sign + grouped(whole) + "." + fraction
}

/// An integer with thousands separators: `1,234,567`.
func grouped(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var out = ""
    for (offset, character) in digits.enumerated() {
        if offset > 0, (digits.count - offset) % 3 == 0 { out.append(",") }
        out.append(character)
    }
    return (value < 0 ? "-" : "") + out
}

private func quote(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

private func number(_ value: Double) -> String {
    value.isFinite ? "\(value)" : "null"
}

extension Report {
    /// Appends a "cost per call" row of `values` (nanoseconds per call) with its ratio to
    /// `floor`, and returns the row's median as × the floor. `gateName` names the row for the
    /// regression gate where `name` holds a figure of the run; `isFloor` marks the floor's own
    /// row, which the gate leaves out.
    @discardableResult
    mutating func addCost(
        _ name: String, _ values: [Double], floor: Double, section: String = "cost per call",
        gateName: String? = nil, isFloor: Bool = false
    ) -> Double {
        let stats = Stats(values)
        rows.append(
            Row(
                section: section, name: name, unit: .nanosecondsPerCall, stats: stats,
                ratioToFloor: stats.median / floor, gateName: gateName, isFloor: isFloor))
        return stats.median / floor
    }
}
