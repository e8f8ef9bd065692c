// swift-tools-version: 6.0
import PackageDescription

// Tempo's benchmarks live in their own package so the library keeps zero dependencies.
// Run: swift run -c release --package-path Benchmarks tempo-benchmarks [--quick] [--json]
let package = Package(
    name: "TempoBenchmarks",
    platforms: [
        .macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2),
    ],
    dependencies: [
        .package(name: "Tempo", path: "..")
    ],
    targets: [
        .executableTarget(
            name: "tempo-benchmarks",
            dependencies: [.product(name: "Tempo", package: "Tempo")]
        )
    ],
    swiftLanguageModes: [.v6]
)
