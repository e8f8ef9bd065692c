import Tempo

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Usage: swift run -c release --package-path Benchmarks tempo-benchmarks [--quick] [--json]
//
// Prints a markdown table (or, with --json, a JSON document) to standard output and progress to
// standard error. --quick runs a small version of everything (for CI).

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--child" {
    // A memory benchmark in a fresh process, started by the parent run.
    let rest = Array(arguments.dropFirst())
    let count = rest.count > 1 ? Int(rest[1]) ?? 0 : 0
    switch rest.first {
    case "live":
        print(await MemoryChild.live(count))
    case "idle":
        let wave = rest.count > 2 ? Int(rest[2]) ?? count : count
        print(await MemoryChild.idle(count, wave: wave))
    default:
        print("nan")
    }
    exit(0)
}

let known: Set = ["--quick", "--json", "--help", "-h"]
if let unknown = arguments.first(where: { !known.contains($0) }) {
    progress("unknown argument \(unknown); usage: tempo-benchmarks [--quick] [--json]")
    exit(2)
}
if arguments.contains("--help") || arguments.contains("-h") {
    print("usage: tempo-benchmarks [--quick] [--json]")
    print("  --quick  a small version of every benchmark (under 30 s)")
    print("  --json   print a JSON document instead of the markdown table")
    exit(0)
}

let config = arguments.contains("--quick") ? Config.quickRun : Config.full
let report = await Suite(config: config).run()
print(arguments.contains("--json") ? report.json() : report.markdown())
