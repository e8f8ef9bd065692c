// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "Tempo",
    platforms: [
        .macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2),
    ],
    products: [
        .library(name: "Tempo", targets: ["Tempo"]),
        .library(name: "TempoTesting", targets: ["TempoTesting"]),
        // Limits a fleet shares, kept in Redis through the user's own client: a library of its
        // own, so that an app that does not use it builds none of it.
        .library(name: "TempoRedis", targets: ["TempoRedis"]),
    ],
    targets: [
        .target(name: "Tempo"),
        .target(name: "TempoTesting", dependencies: ["Tempo"]),
        .target(name: "TempoRedis", dependencies: ["Tempo"]),
        // Executable targets, not products: `swift run TempoDemo` and
        // `swift run TempoTimelines --check` work here, and a package that depends on Tempo
        // sees only the two libraries.
        .executableTarget(name: "TempoDemo", dependencies: ["Tempo"]),
        .executableTarget(name: "TempoTimelines", dependencies: ["Tempo", "TempoTesting"]),
        .testTarget(name: "TempoTests", dependencies: ["Tempo", "TempoTesting", "TempoRedis"]),
    ],
    swiftLanguageModes: [.v6]
)
