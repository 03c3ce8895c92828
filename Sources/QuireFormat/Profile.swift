/// The journal's profile: the profile record (`Spec/records.md §5`). The
/// profile of the highest standing wins, then the greatest clock, then the
/// later in file order.
public struct Profile: Sendable, Equatable {
    /// The journal's display name. Default `""`.
    public var name: String
    /// A longer description. Default `""`.
    public var about: String
    /// Application settings, free-form. Default empty.
    @_spi(Format) public var settings: CBORMap
    /// When the profile was written.
    package var clock: HybridLogicalClock
    /// The device id its writer claims. Anyone who holds an epoch key can
    /// write any id here: who wrote it is the member whose attestation
    /// covers its commit, never this field (`Spec/records.md §5`).
    @_spi(Format) public var device: DeviceID?
    /// Fields this version does not know.
    @_spi(Format) public var unknownFields: CBORMap

    /// A profile with the given fields.
    @_spi(Format) public init(
        name: String, about: String = "", settings: CBORMap = CBORMap(), clock: HybridLogicalClock, device: DeviceID? = nil,
        unknownFields: CBORMap = CBORMap()
    ) {
        self.name = name
        self.about = about
        self.settings = settings
        self.clock = clock
        self.device = device
        self.unknownFields = unknownFields
    }

    /// Decodes a profile body.
    ///
    /// - Throws: ``FormatError/malformedRecord(_:reason:)``.
    @_spi(Format) public init(decoding bytes: [UInt8], location: FrameLocation? = nil) throws(FormatError) {
        var r = try FieldReader(decodeBody(bytes, location: location), context: "profile", location: location)
        name = try r.text("name") ?? ""
        about = try r.text("about") ?? ""
        settings = try r.map("settings") ?? CBORMap()
        clock = HybridLogicalClock(rawValue: try r.unsigned("clock") ?? 0)
        device = try r.id("device", as: DeviceID.self)
        unknownFields = r.unknown
    }

    /// The canonical CBOR encoding.
    @_spi(Format) public func encoded() -> [UInt8] {
        var w = FieldWriter(unknown: unknownFields)
        w.text("name", name)
        w.text("about", about)
        w.map("settings", settings)
        w.unsigned("clock", clock.rawValue, default: 0)
        w.id("device", device)
        return w.encoded
    }
}

extension Profile {
    /// Whether profile `p`, read after `current` in file order, replaces it
    /// as the journal's profile (`Spec/records.md §5`): the higher standing
    /// (2 attested by a current member, 1 verified, 0 unverified), then the
    /// greater clock, then the later in file order. A profile written with
    /// only an epoch key and a clock of 2⁶⁴ − 1 never beats a member's
    /// (tenth review R10-2).
    package static func replaces(_ p: Profile, standing: Int, current: Profile?, standing currentStanding: Int) -> Bool {
        guard let current else { return true }
        if standing != currentStanding { return standing > currentStanding }
        return p.clock >= current.clock
    }
}
