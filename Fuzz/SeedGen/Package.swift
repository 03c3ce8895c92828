// swift-tools-version: 6.2
//
// fuzz-seed: writes the seed corpora of the Quire fuzz targets (Fuzz/seeds/).
// A package of its own because the fuzzer build of Fuzz/ links libFuzzer's
// `main` into every executable. Build it normally, without sanitizers:
//
//   swift run --package-path Fuzz/SeedGen fuzz-seed Fuzz/seeds

import PackageDescription

/// The identity SwiftPM gives `.package(path: "../..")`: the name of the
/// repository's directory.
let mainPackage: String = {
    let parts = Context.packageDirectory.split(separator: "/")
    return parts.count >= 3 ? String(parts[parts.count - 3]).lowercased() : "main"
}()

let package = Package(
    name: "QuireFuzzSeeds",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(path: "../..")],
    targets: [
        .executableTarget(
            name: "fuzz-seed",
            dependencies: [.product(name: "Quire", package: mainPackage)],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
