// swift-tools-version: 6.2
//
// Quire: an encrypted journal vault. One portable file, readable only by the
// owner's devices. See README.md and Spec/.
//
// Dependencies point one way (a module imports only what is right of it):
//
//   quire (CLI)   ─▶ QuireCommandLine (quire-book: QuireCommandLine, QuirePDF)
//   QuireCommandLine ─▶ QuireExport, QuireImport, Quire
//   QuirePDF      ─▶ QuireExport, QuireMarkdown, Quire, CPangoCairo
//   QuireExport   ─▶ QuireDayOne, QuireMarkdown, QuireZip, Quire
//   QuireImport   ─▶ QuireDayOne, QuireMarkdown, QuireZip, Quire
//   QuireDayOne   ─▶ QuireMarkdown, Quire
//   QuireMarkdown ─▶ CCmarkGFM
//   QuireZip      ─▶ CZip, QuireFormat (for ByteSource, the one byte-stream protocol)
//   Quire ─▶ QuireSync ─▶ QuireKeys ─▶ QuireFormat ─▶ QuireCrypto ─▶ CSodium
//                                         └─▶ CZstd      (and QuireSystem, the POSIX shim, below all)
//
// Only QuireCrypto imports CSodium and only QuireFormat imports CZstd (the
// benchmark imports both to measure the raw primitives it compares against;
// the vector generator imports CSodium for one forged Poly1305 tag).
// Only QuireZip imports libzip, only QuireMarkdown imports cmark-gfm and only
// QuirePDF imports cairo and pango: an app that stores entries links
// libsodium and zstd alone, and `quire` links no PDF stack (its
// `export --format pdf` runs the quire-book helper, which does). QuireImport and
// QuireExport never import each other: the Day One mapping both need (the
// import run backwards is the Day One variant of the export) lives in
// QuireDayOne, so the two cannot drift apart.
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
        .library(name: "QuireDayOne", targets: ["QuireDayOne"]),
        .library(name: "QuireImport", targets: ["QuireImport"]),
        .library(name: "QuireExport", targets: ["QuireExport"]),
        .library(name: "QuirePDF", targets: ["QuirePDF"]),
        .executable(name: "quire", targets: ["quire"]),
        .executable(name: "quire-book", targets: ["quire-book"]),
        .executable(name: "quire-vectors", targets: ["quire-vectors"]),
        .executable(name: "quire-bench", targets: ["quire-bench"]),
        .executable(name: "quire-demo", targets: ["quire-demo"]),
        .executable(name: "quire-sync-helper", targets: ["quire-sync-helper"]),
        .executable(name: "quire-example-app", targets: ["quire-example-app"]),
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

        .systemLibrary(
            name: "CZip",
            pkgConfig: "libzip",
            providers: [.apt(["libzip-dev"]), .brew(["libzip"])]
        ),
        .systemLibrary(
            name: "CCmarkGFM",
            pkgConfig: "libcmark-gfm",
            providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"]), .brew(["cmark-gfm"])]
        ),
        .systemLibrary(
            name: "CPangoCairo",
            pkgConfig: "pangocairo",
            providers: [.apt(["libpango1.0-dev", "libcairo2-dev"]), .brew(["pango", "cairo"])]
        ),

        // The one small platform shim: POSIX file calls.
        .target(name: "QuireSystem", swiftSettings: strict),

        // Safe wrappers over libsodium: guarded keys, AEAD, KDF, BLAKE2b, signatures.
        .target(name: "QuireCrypto", dependencies: ["CSodium", "QuireSystem"], swiftSettings: strict),

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

        // ZIP archives through libzip: reading with limits (import), writing (EPUB, Day One variant).
        // Members are read and written as QuireFormat's ByteSource, the one byte-stream protocol.
        .target(name: "QuireZip", dependencies: ["CZip", "QuireCrypto", "QuireFormat", "QuireSystem"], swiftSettings: strict),

        // Markdown read once, by libcmark-gfm, into a tree every exporter walks.
        .target(name: "QuireMarkdown", dependencies: ["CCmarkGFM"], swiftSettings: strict),

        // The Day One JSON dialects and their mapping to Quire entries, both
        // ways (Spec/import.md §2–§5, §11): what import and export share.
        .target(
            name: "QuireDayOne",
            dependencies: ["Quire", "QuireFormat", "QuireMarkdown"],
            swiftSettings: strict
        ),

        // Day One (JSON and Classic), jrnl and Markdown folders into a vault (Spec/import.md).
        .target(
            name: "QuireImport",
            dependencies: ["Quire", "QuireFormat", "QuireDayOne", "QuireMarkdown", "QuireZip", "QuireSystem"],
            swiftSettings: strict
        ),

        // Markdown folder, JSON (+ Day One variant), HTML, EPUB 3 (Spec/export-json.md).
        .target(
            name: "QuireExport",
            dependencies: ["Quire", "QuireDayOne", "QuireMarkdown", "QuireZip", "QuireSystem"],
            swiftSettings: strict
        ),

        // The PDF book through cairo and pango, kept apart so nothing else links them.
        .target(
            name: "QuirePDF",
            dependencies: ["Quire", "QuireExport", "QuireMarkdown", "QuireSystem", "CPangoCairo"],
            swiftSettings: strict
        ),

        // The command-line tool: its commands, and two programs running them.
        // `quire` links no PDF stack, so no command pays for loading cairo,
        // pango and the libraries under them at start-up; `quire-book`
        // (installed in libexec) adds QuirePDF, and `quire export --format
        // pdf` replaces its process with it.
        .target(
            name: "QuireCommandLine",
            dependencies: ["Quire", "QuireImport", "QuireExport", "QuireSystem"],
            swiftSettings: strict
        ),
        .executableTarget(name: "quire", dependencies: ["QuireCommandLine", "QuireSystem"], swiftSettings: strict),
        .executableTarget(
            name: "quire-book",
            dependencies: ["QuireCommandLine", "QuirePDF", "QuireExport", "QuireSystem"],
            swiftSettings: strict
        ),

        // The vector file format and the checker, shared by the generator and the tests.
        .target(
            name: "QuireVectors",
            // CSodium: attack vectors forge a Poly1305 tag (TagForgery) and
            // need the one-time key (keystream block 0), which no library
            // API exposes.
            dependencies: ["Quire", "QuireCrypto", "QuireFormat", "QuireKeys", "QuireSync", "CSodium"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "quire-vectors",
            // CSodium: one attack vector forges a Poly1305 tag and needs the
            // one-time key (keystream block 0), which no library API exposes.
            dependencies: ["QuireVectors", "Quire", "QuireCrypto", "QuireFormat", "QuireKeys", "QuireSystem", "CSodium"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "quire-demo",
            dependencies: ["Quire", "QuireCrypto", "QuireFormat", "QuireKeys", "QuireSystem"],
            swiftSettings: strict
        ),
        // A diary app's data layer on `import Quire` alone (issue 13, need 8):
        // run by `make example` (from `make test` and `make check`).
        .executableTarget(
            name: "quire-example-app",
            dependencies: ["Quire"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "quire-sync-helper",
            dependencies: ["Quire", "QuireSystem"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "quire-bench",
            dependencies: [
                "Quire", "QuireCrypto", "QuireFormat", "QuireKeys", "QuireSync", "QuireSystem", "QuireImport", "QuireExport",
                "QuirePDF", "CSodium", "CZstd",
            ],
            swiftSettings: strict
        ),

        // The `.slow` tag and the switch `make check` uses to skip slow tests.
        .target(name: "QuireTestSupport", path: "Tests/QuireTestSupport", swiftSettings: strict),

        .testTarget(name: "QuireCryptoTests", dependencies: ["QuireCrypto", "QuireTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "QuireFormatTests",
            dependencies: ["QuireFormat", "QuireCrypto", "QuireSystem", "QuireTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "QuireKeysTests",
            dependencies: ["QuireKeys", "QuireFormat", "QuireCrypto", "QuireTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "QuireSyncTests",
            dependencies: ["QuireSync", "Quire", "QuireFormat", "QuireKeys", "QuireCrypto", "QuireSystem", "QuireTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "QuireTests",
            dependencies: ["Quire", "QuireFormat", "QuireKeys", "QuireCrypto", "QuireSystem", "QuireVectors", "QuireTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "QuireImportTests",
            dependencies: ["QuireImport", "QuireDayOne", "QuireExport", "QuireZip", "QuireFormat", "Quire", "QuireTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "QuireExportTests",
            dependencies: ["QuireExport", "QuireDayOne", "QuireImport", "QuireZip", "QuireFormat", "Quire", "QuireTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(name: "QuireMarkdownTests", dependencies: ["QuireMarkdown"], swiftSettings: strict),
        .testTarget(name: "QuirePDFTests", dependencies: ["QuirePDF", "QuireExport", "Quire", "QuireTestSupport"], swiftSettings: strict),
        // Runs the built `quire` binary (a test dependency so `swift build --build-tests` builds it).
        .testTarget(
            name: "QuireCLITests",
            dependencies: [
                "quire", "quire-book", "QuireCommandLine", "Quire", "QuireFormat", "QuireKeys", "QuireSystem", "QuireTestSupport",
            ],
            swiftSettings: strict),
    ]
)
