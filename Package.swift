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
        .executable(name: "TempoDemo", targets: ["TempoDemo"]),
    ],
    targets: [
        .target(name: "Tempo"),
        .target(name: "TempoTesting", dependencies: ["Tempo"]),
        .executableTarget(name: "TempoDemo", dependencies: ["Tempo"]),
        .executableTarget(name: "TempoTimelines", dependencies: ["Tempo", "TempoTesting"]),
        .testTarget(name: "TempoTests", dependencies: ["Tempo", "TempoTesting"]),
    ],
    swiftLanguageModes: [.v6]
)
