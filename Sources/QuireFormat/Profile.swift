/// The journal's profile: the record of kind ``RecordKind/profile``
/// (`Spec/records.md §5`). The profile with the greatest clock wins.
public struct Profile: Sendable, Equatable {
    /// The journal's display name. Default `""`.
    public var name: String
    /// A longer description. Default `""`.
    public var about: String
    /// Application settings, free-form. Default empty.
    @_spi(Format) public var settings: CBORMap
    /// When the profile was written.
    package var clock: HybridLogicalClock
    /// Who wrote it.
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
