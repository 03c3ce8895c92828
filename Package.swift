// swift-tools-version: 6.2
//
// Quire: an encrypted journal vault. One portable file, readable only by the
// owner's devices. See README.md and Spec/.
//
// Dependencies point one way:
//
//   quire-vectors, quire-bench ─▶ Quire ─▶ QuireKeys ─▶ QuireFormat ─▶ QuireCrypto ─▶ CSodium
//                                              │          │   └────────▶ CZstd
//                                              └──────────┴────────────▶ QuireSystem (POSIX shim)
//
// Only QuireCrypto imports CSodium and only QuireFormat imports CZstd (the
// benchmark imports both to measure the raw primitives it compares against).
// No C type appears in a public signature.

import PackageDescription

/// One strict settings array, shared by every Swift target.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "Quire",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Quire", targets: ["Quire"]),
        .executable(name: "quire-vectors", targets: ["quire-vectors"]),
        .executable(name: "quire-bench", targets: ["quire-bench"]),
        .executable(name: "quire-demo", targets: ["quire-demo"]),
        .executable(name: "quire-sync-helper", targets: ["quire-sync-helper"]),
    ],
    targets: [
        // C libraries from the system, through pkg-config.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"]), .brew(["zstd"])]
        ),

        // The one small platform shim: POSIX file calls.
        .target(name: "QuireSystem", swiftSettings: strict),

        // Safe wrappers over libsodium: guarded keys, AEAD, KDF, BLAKE2b, signatures.
        .target(name: "QuireCrypto", dependencies: ["CSodium"], swiftSettings: strict),

        // Bytes on disk: header, frames, records, commits, compression, padding.
        .target(
            name: "QuireFormat",
            dependencies: ["QuireCrypto", "QuireSystem", "CZstd"],
            swiftSettings: strict
        ),

        // Device identity and key store, key slots, epochs, the recovery key,
        // keyring authentication, key operations, the privacy statement.
        .target(
            name: "QuireKeys",
            dependencies: ["QuireCrypto", "QuireFormat", "QuireSystem"],
            swiftSettings: strict
        ),

        // Copies of one vault: conflict-copy discovery, merge, fold.
        .target(
            name: "QuireSync",
            dependencies: ["QuireCrypto", "QuireFormat", "QuireKeys", "QuireSystem"],
            swiftSettings: strict
        ),

        // The facade an app imports.
        .target(
            name: "Quire",
            dependencies: ["QuireCrypto", "QuireFormat", "QuireKeys", "QuireSync", "QuireSystem"],
            swiftSettings: strict
        ),

        // The vector file format and the checker, shared by the generator and the tests.
        .target(
            name: "QuireVectors",
            dependencies: ["Quire", "QuireCrypto", "QuireFormat", "QuireKeys", "QuireSync"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "quire-vectors",
            dependencies: ["QuireVectors", "Quire", "QuireCrypto", "QuireFormat", "QuireKeys", "QuireSystem"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "quire-demo",
            dependencies: ["Quire", "QuireCrypto", "QuireFormat", "QuireKeys", "QuireSystem"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "quire-sync-helper",
            dependencies: ["Quire", "QuireSystem"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "quire-bench",
            dependencies: ["Quire", "QuireCrypto", "QuireFormat", "QuireKeys", "QuireSync", "QuireSystem", "CSodium", "CZstd"],
            swiftSettings: strict
        ),

        .testTarget(name: "QuireCryptoTests", dependencies: ["QuireCrypto"], swiftSettings: strict),
        .testTarget(
            name: "QuireFormatTests",
            dependencies: ["QuireFormat", "QuireCrypto", "QuireSystem"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "QuireKeysTests",
            dependencies: ["QuireKeys", "QuireFormat", "QuireCrypto"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "QuireSyncTests",
            dependencies: ["QuireSync", "Quire", "QuireFormat", "QuireKeys", "QuireCrypto", "QuireSystem"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "QuireTests",
            dependencies: ["Quire", "QuireFormat", "QuireKeys", "QuireCrypto", "QuireSystem", "QuireVectors"],
            swiftSettings: strict
        ),
    ]
)
