// swift-tools-version: 6.0
import PackageDescription

// The hot loops the A/B gate (scripts/ab-bench.py) measures, in a package of their own so the
// same loops build against both trees it compares: the gate copies this directory into the
// baseline's exported tree, where `../..` is that tree's Tempo. They use only API the pinned
// baseline (Benchmarks/baseline) has.
let package = Package(
    name: "TempoHotLoops",
    platforms: [
        .macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2),
    ],
    dependencies: [
        .package(name: "Tempo", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "tempo-hot-loops",
            dependencies: [.product(name: "Tempo", package: "Tempo")]
        )
    ],
    swiftLanguageModes: [.v6]
)
