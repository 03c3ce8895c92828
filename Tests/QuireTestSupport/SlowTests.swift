// What every test target shares: the `.slow` tag and the switch that skips
// slow tests in `make check`.

import Foundation
public import Testing

extension Tag {
    /// Tests that take long on a 2-core machine: corpus imports, PDF books,
    /// epubcheck and qpdf, exhaustive bit flips and truncations, pseudo-
    /// terminals, property runs. `make check` skips them; `make test` runs
    /// every test.
    @Tag public static var slow: Self
}

/// False when `QUIRE_SKIP_SLOW_TESTS` is set (`make check`): the suites and
/// tests tagged ``Testing/Tag/slow`` carry `.enabled(if: runsSlowTests)` and
/// are skipped. (`swift test --filter` on this toolchain matches test names
/// by regular expression, not tags, so the tag is paired with this switch.)
public let runsSlowTests = ProcessInfo.processInfo.environment["QUIRE_SKIP_SLOW_TESTS"] == nil

extension Trait where Self == ConditionTrait {
    /// `.enabled(if: runsSlowTests)`, with the reason shown when skipped.
    public static var skippedByMakeCheck: Self {
        .enabled(if: runsSlowTests, "slow: skipped by make check (QUIRE_SKIP_SLOW_TESTS); make test runs it")
    }
}
