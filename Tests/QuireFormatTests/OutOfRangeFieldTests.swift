@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Testing

/// No trap is reachable from a file (issue 15): integers a record carries
/// are brought within their documented range when decoded.
@Suite struct OutOfRangeFieldTests {
    static func revision(offset: Int64?) -> EntryRevision {
        let r = SeededRandom(label: "offset \(String(describing: offset))")
        return EntryRevision(
            entryID: EntryID(using: r), revisionID: RevisionID(using: r), parents: [], clock: HybridLogicalClock(rawValue: 1), device: nil,
            body: EntryBody(created: 1_700_000_000_000, timeZone: "Pacific/Kiritimati", utcOffsetSeconds: offset, text: "x"))
    }

    /// `Spec/records.md §3.3`: a `utcOffset` outside ±18 hours is read as absent.
    @Test(arguments: [
        (Int64.min, nil), (Int64.max, nil), (-64_801, nil), (64_801, nil), (1 << 40, nil),
        (-64_800, -64_800), (64_800, 64_800), (50_400, 50_400), (0, 0), (-3600, -3600),
    ] as [(Int64, Int64?)])
    func aUTCOffsetOutsideEighteenHoursIsReadAsAbsent(written: Int64, read: Int64?) throws {
        let decoded = try EntryRevision(decoding: Self.revision(offset: written).encoded())
        #expect(decoded.body.utcOffsetSeconds == read)
        #expect(decoded.body.text == "x")
    }
}
