// Draws the timelines of the documentation from real runs of Tempo on a manual clock.
//
//     swift run TempoTimelines            writes Docs/Tempo.docc/Resources/timeline-*.svg
//                                         (each also as timeline-*~dark.svg)
//     swift run TempoTimelines --check    exits 1 when a committed image differs from what the
//                                         code draws now (or is missing, or is left over)
//     swift run TempoTimelines --output DIR   writes (or checks) DIR instead
//
// The images are deterministic: the same code draws the same bytes on every run and machine.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The catalog's Resources folder, found from this file's path in the package.
func defaultOutput() -> String {
    var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)  // main.swift, TempoTimelines, Sources
    return (parts + ["Docs", "Tempo.docc", "Resources"]).joined(separator: "/")
}

var arguments = CommandLine.arguments.dropFirst()
var check = false
var output = defaultOutput()
while let argument = arguments.popFirst() {
    switch argument {
    case "--check": check = true
    case "--output":
        guard let path = arguments.popFirst() else {
            print("--output needs a directory")
            exit(2)
        }
        output = path
    default:
        print("usage: TempoTimelines [--check] [--output DIR]")
        exit(argument == "--help" || argument == "-h" ? 0 : 2)
    }
}

let timelines = await allTimelines()
// Each timeline twice: for the light appearance, and `~dark` for the dark one.
let drawn = timelines.flatMap { timeline in
    [Palette.light, Palette.dark].map {
        ("\(timeline.name)\($0.suffix).svg", Array(SVG.render(timeline, $0).utf8))
    }
}

if check {
    var problems: [String] = []
    for (name, bytes) in drawn {
        switch Files.read("\(output)/\(name)") {
        case nil: problems.append("missing: \(name)")
        case let committed? where committed != bytes: problems.append("differs: \(name)")
        default: break
        }
    }
    let expected = Set(drawn.map(\.0))
    for name in Files.list(output)
    where name.hasPrefix("timeline-") && name.hasSuffix(".svg") && !expected.contains(name) {
        problems.append("left over (no scenario draws it): \(name)")
    }
    if problems.isEmpty {
        print("TempoTimelines: the \(drawn.count) timelines in \(output) are up to date")
    } else {
        for problem in problems { print("TempoTimelines: \(problem)") }
        print("TempoTimelines: run `swift run TempoTimelines` and commit the images")
        exit(1)
    }
} else {
    Files.makeDirectory(output)
    var changed = 0
    for (name, bytes) in drawn where Files.read("\(output)/\(name)") != bytes {
        guard Files.write(bytes, to: "\(output)/\(name)") else {
            print("TempoTimelines: cannot write \(output)/\(name)")
            exit(1)
        }
        print("wrote \(name)")
        changed += 1
    }
    print("TempoTimelines: \(drawn.count) timelines, \(changed) changed, in \(output)")
}
