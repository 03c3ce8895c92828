// swift-tools-version: 6.2
//
// libFuzzer targets for Quire. A separate package so that the fuzzer flags
// never reach the main build. Build and run (see README.md):
//
//   swift build -c debug --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address
//   SWIFT_BACKTRACE=enable=no .build/debug/fuzz-header -max_total_time=60 corpus-fuzz-header seeds/fuzz-header
//
// The main package only exports the `Quire` library product; depending on it
// builds and links QuireFormat, QuireKeys, QuireCrypto and QuireSystem too,
// and the fuzz targets import those modules directly.
//
// The seed generator lives in its own package, SeedGen/: the fuzzer build
// links libFuzzer's `main` into every executable, so a program with its own
// `main` cannot be a target here.

import PackageDescription

/// The identity SwiftPM gives `.package(path: "..")`: the name of the
/// directory holding this one (`main` in /work/main, `quire` in a checkout
/// called quire, ...).
let mainPackage: String = {
    let parts = Context.packageDirectory.split(separator: "/")
    return parts.count >= 2 ? String(parts[parts.count - 2]).lowercased() : "main"
}()

let quire: [Target.Dependency] = [.product(name: "Quire", package: mainPackage)]

let settings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "QuireFuzz",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(path: "..")],
    targets: [
        // Declares LLVMFuzzerMutate (libFuzzer's built-in mutator) for the
        // custom mutators.
        .target(name: "CFuzzerHooks"),
        // The scratch file, the custom mutator and checksum repair, a sink
        // for touched values.
        .target(name: "FuzzSupport", dependencies: ["CFuzzerHooks"] + quire, swiftSettings: settings),

        .executableTarget(name: "fuzz-header", dependencies: ["FuzzSupport"] + quire, swiftSettings: settings),
        .executableTarget(name: "fuzz-frames", dependencies: ["FuzzSupport"] + quire, swiftSettings: settings),
        .executableTarget(name: "fuzz-vault", dependencies: ["FuzzSupport"] + quire, swiftSettings: settings),
        .executableTarget(name: "fuzz-cbor", dependencies: ["FuzzSupport"] + quire, swiftSettings: settings),
        .executableTarget(name: "fuzz-merge", dependencies: ["FuzzSupport"] + quire, swiftSettings: settings),
        .executableTarget(name: "fuzz-keyring", dependencies: ["FuzzSupport"] + quire, swiftSettings: settings),
        .executableTarget(name: "fuzz-commit", dependencies: ["FuzzSupport"] + quire, swiftSettings: settings),
        .executableTarget(name: "fuzz-memory", dependencies: ["FuzzSupport"] + quire, swiftSettings: settings),
    ]
)
