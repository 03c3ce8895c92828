@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
import Testing

@Suite struct CBORTests {
    /// RFC 8949 appendix A examples that are valid in Quire's profile, plus
    /// the 8-byte float forms the profile requires.
    static let vectors: [(CBOR, String)] = [
        (.unsigned(0), "00"),
        (.unsigned(1), "01"),
        (.unsigned(10), "0a"),
        (.unsigned(23), "17"),
        (.unsigned(24), "1818"),
        (.unsigned(25), "1819"),
        (.unsigned(100), "1864"),
        (.unsigned(255), "18ff"),
        (.unsigned(256), "190100"),
        (.unsigned(1000), "1903e8"),
        (.unsigned(65535), "19ffff"),
        (.unsigned(65536), "1a00010000"),
        (.unsigned(1_000_000), "1a000f4240"),
        (.unsigned(4_294_967_295), "1affffffff"),
        (.unsigned(4_294_967_296), "1b0000000100000000"),
        (.unsigned(1_000_000_000_000), "1b000000e8d4a51000"),
        (.unsigned(UInt64.max), "1bffffffffffffffff"),
        (.negative(0), "20"),
        (.negative(9), "29"),
        (.negative(99), "3863"),
        (.negative(999), "3903e7"),
        (.negative(UInt64.max), "3bffffffffffffffff"),
        (.double(1.1), "fb3ff199999999999a"),
        (.double(-4.1), "fbc010666666666666"),
        (.double(1.0e300), "fb7e37e43c8800759c"),
        (.double(1.0), "fb3ff0000000000000"),
        (.double(0.0), "fb0000000000000000"),
        (.bool(false), "f4"),
        (.bool(true), "f5"),
        (.null, "f6"),
        (.bytes([]), "40"),
        (.bytes([1, 2, 3, 4]), "4401020304"),
        (.text(""), "60"),
        (.text("a"), "6161"),
        (.text("IETF"), "6449455446"),
        (.text("\"\\"), "62225c"),
        (.text("\u{00fc}"), "62c3bc"),
        (.text("\u{6c34}"), "63e6b0b4"),
        (.text("\u{10151}"), "64f0908591"),
        (.array([]), "80"),
        (.array([.unsigned(1), .unsigned(2), .unsigned(3)]), "83010203"),
        (.array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])]), "8301820203820405"),
        (.map(CBORMap()), "a0"),
        (.map(CBORMap([(.unsigned(1), .unsigned(2)), (.unsigned(3), .unsigned(4))])), "a201020304"),
        (.map(CBORMap(text: [("a", .unsigned(1)), ("b", .array([.unsigned(2), .unsigned(3)]))])), "a26161016162820203"),
        (.array([.text("a"), .map(CBORMap(text: [("b", .text("c"))]))]), "826161a161626163"),
    ]

    @Test(arguments: vectors)
    func encodesAndDecodesCanonically(value: CBOR, expectedHex: String) throws {
        let encoded = CBOREncoder.encode(value)
        #expect(hex(encoded) == expectedHex)
        #expect(try CBORDecoder.decode(encoded) == value)
        var appended: [UInt8] = [0xaa]
        CBOREncoder.append(value, to: &appended)
        #expect(appended == [0xaa] + encoded)
    }

    @Test func mapKeysTakeTheOrderOfTheirEncodings() throws {
        // Text keys across the length classes of the head (1, 2 and 3 bytes),
        // the same length with different bytes, non-ASCII, and keys of other
        // types mixed in, set in a scrambled order.
        let texts = ["b", "a", "", "aa", "ab", "é", String(repeating: "x", count: 23), String(repeating: "x", count: 24),
                     String(repeating: "y", count: 24), String(repeating: "z", count: 255), String(repeating: "w", count: 256), "zz", "ä"]
        let keys: [CBOR] = texts.map { .text($0) } + [.unsigned(0), .unsigned(500), .negative(0), .bytes([1]), .bool(true)]
        var map = CBORMap()
        // 7 is prime to the 18 keys: every key once, scrambled.
        for i in keys.indices { map[keys[(i * 7) % keys.count]] = .unsigned(UInt64(i)) }
        map[.text("ab")] = .unsigned(99)
        let order = map.entries.map { CBOREncoder.encode($0.key) }
        #expect(order == keys.map { CBOREncoder.encode($0) }.sorted { $0.lexicographicallyPrecedes($1) })
        #expect(map[.text("ab")] == .unsigned(99))
        #expect(try CBORDecoder.decode(CBOREncoder.encode(.map(map))) == .map(map))
    }

    @Test func twentyFiveElementArrayUsesOneByteLength() throws {
        let value = CBOR.array((1...25).map { .unsigned(UInt64($0)) })
        let encoded = CBOREncoder.encode(value)
        #expect(Array(encoded[0..<2]) == [0x98, 0x19])
        #expect(encoded.count == 2 + 23 + 2 * 2)
        #expect(try CBORDecoder.decode(encoded) == value)
    }

    @Test func integerHelpers() {
        #expect(CBOR.int(0) == .unsigned(0))
        #expect(CBOR.int(-1) == .negative(0))
        #expect(CBOR.int(-1000) == .negative(999))
        #expect(CBOR.int(Int64.max) == .unsigned(UInt64(Int64.max)))
        #expect(CBOR.int(Int64.min) == .negative(UInt64(Int64.max)))
        #expect(CBOR.unsigned(5).int64Value == 5)
        #expect(CBOR.negative(4).int64Value == -5)
        #expect(CBOR.negative(UInt64(Int64.max)).int64Value == Int64.min)
        #expect(CBOR.unsigned(UInt64(Int64.max)).int64Value == Int64.max)
        #expect(CBOR.unsigned(UInt64(Int64.max) + 1).int64Value == nil)
        #expect(CBOR.negative(UInt64(Int64.max) + 1).int64Value == nil)
        #expect(CBOR.text("1").int64Value == nil)
        #expect(CBOR.double(1).int64Value == nil)
    }

    // MARK: Rejections, with the exact offset and reason.

    static let rejections: [(String, Int, String)] = [
        // Shortest form for integers, lengths and counts.
        ("1805", 2, "integer or length not in its shortest form"),
        ("1817", 2, "integer or length not in its shortest form"),
        ("1900ff", 3, "integer or length not in its shortest form"),
        ("1a0000ffff", 5, "integer or length not in its shortest form"),
        ("1b00000000ffffffff", 9, "integer or length not in its shortest form"),
        ("3805", 2, "integer or length not in its shortest form"),
        ("580100", 2, "integer or length not in its shortest form"),
        ("78016161", 2, "integer or length not in its shortest form"),
        ("980100", 2, "integer or length not in its shortest form"),
        ("b8010000", 2, "integer or length not in its shortest form"),
        // Indefinite lengths and reserved additional information.
        ("5f4101ff", 1, "indefinite length is not allowed"),
        ("7f6161ff", 1, "indefinite length is not allowed"),
        ("9f01ff", 1, "indefinite length is not allowed"),
        ("bf0102ff", 1, "indefinite length is not allowed"),
        ("1f", 1, "indefinite length is not allowed"),
        ("1c", 1, "reserved additional information 28"),
        ("3d", 1, "reserved additional information 29"),
        ("5e", 1, "reserved additional information 30"),
        // Tags.
        ("c074323031332d30332d32315432303a30343a30305a", 1, "tags are not allowed"),
        ("c11a514b67b0", 1, "tags are not allowed"),
        ("d818456449455446", 1, "tags are not allowed"),
        // Floats other than 8 bytes; NaN and infinities.
        ("f93c00", 1, "floats must be encoded in 8 bytes"),
        ("f97e00", 1, "floats must be encoded in 8 bytes"),
        ("fa47c35000", 1, "floats must be encoded in 8 bytes"),
        ("fb7ff8000000000000", 9, "NaN and infinity are not allowed"),
        ("fb7ff0000000000000", 9, "NaN and infinity are not allowed"),
        ("fbfff0000000000000", 9, "NaN and infinity are not allowed"),
        ("fb7ff0000000000001", 9, "NaN and infinity are not allowed"),
        // Simple values other than false, true, null.
        ("f7", 1, "simple value 23 is not allowed"),
        ("f0", 1, "simple value 16 is not allowed"),
        ("f820", 1, "simple value 24 is not allowed"),
        ("ff", 1, "simple value 31 is not allowed"),
        // Map key order and uniqueness (bytewise order of the encoded keys).
        ("a2616201616102", 4, "map keys are duplicated or not in canonical order"),
        ("a2616101616102", 4, "map keys are duplicated or not in canonical order"),
        ("a2626161016162 02", 5, "map keys are duplicated or not in canonical order"),
        ("a2186401 0a02", 4, "map keys are duplicated or not in canonical order"),
        ("a220010a02", 3, "map keys are duplicated or not in canonical order"),
        ("a3010102020102", 5, "map keys are duplicated or not in canonical order"),
        // Invalid UTF-8.
        ("62c328", 1, "text is not valid UTF-8"),
        ("62c0af", 1, "text is not valid UTF-8"),
        ("63eda080", 1, "text is not valid UTF-8"),
        ("61ff", 1, "text is not valid UTF-8"),
        ("64f4908080", 1, "text is not valid UTF-8"),
        // Truncation.
        ("", 0, "unexpected end of input"),
        ("19 01", 1, "unexpected end of input"),
        ("1b 00000000", 1, "unexpected end of input"),
        ("fb 3ff0", 1, "unexpected end of input"),
        ("8201", 1, "length 2 exceeds the 1 bytes left"),
        ("821901", 2, "unexpected end of input"),
        ("a10a", 1, "length 1 exceeds the 1 bytes left"),
        ("a10a19", 3, "unexpected end of input"),
        // Lengths larger than the bytes left, before any allocation.
        ("4501 02", 1, "length 5 exceeds the 2 bytes left"),
        ("5bffffffffffffffff", 9, "length 18446744073709551615 exceeds the 0 bytes left"),
        ("7b7fffffffffffffff61", 9, "length 9223372036854775807 exceeds the 1 bytes left"),
        ("9b000000010000000001", 9, "length 4294967296 exceeds the 1 bytes left"),
        ("9bffffffffffffffff", 9, "length 18446744073709551615 exceeds the 0 bytes left"),
        ("bbffffffffffffffff0102", 9, "length 18446744073709551615 exceeds the 2 bytes left"),
        ("a20102", 1, "length 2 exceeds the 2 bytes left"),
        ("8301 02", 1, "length 3 exceeds the 2 bytes left"),
        // Trailing bytes.
        ("0102", 1, "1 trailing bytes after the item"),
        ("80 00 00", 1, "2 trailing bytes after the item"),
        ("f6f6", 1, "1 trailing bytes after the item"),
    ]

    @Test(arguments: rejections)
    func rejects(input: String, offset: Int, reason: String) {
        expectCBORFailure(offset: offset, reason: reason, hexBytes(input))
    }

    @Test func errorDescription() {
        #expect(cborFailure(hexBytes("a2616201616102"))?.description == "map keys are duplicated or not in canonical order at byte 4")
    }

    @Test func bytewiseKeyOrderPutsShorterEncodingsFirst() throws {
        // "b" (61 62) sorts before "aa" (62 61 61): the order is of encodings.
        let canonical = hexBytes("a2 6162 01 626161 02")
        let value = try CBORDecoder.decode(canonical)
        #expect(value == .map(CBORMap(text: [("aa", .unsigned(2)), ("b", .unsigned(1))])))
        #expect(CBOREncoder.encode(value) == canonical)
        expectCBORFailure(offset: 5, reason: "map keys are duplicated or not in canonical order", hexBytes("a2 626161 02 6162 01"))
    }

    // MARK: Depth

    static func nested(_ levels: Int, innermost: CBOR = .unsigned(0)) -> CBOR {
        var v = innermost
        for _ in 0..<levels { v = .array([v]) }
        return v
    }

    static func nestedMaps(_ levels: Int) -> CBOR {
        var v = CBOR.null
        for _ in 0..<levels { v = .map(CBORMap(text: [("a", v)])) }
        return v
    }

    @Test func depthLimit() throws {
        #expect(Limits.maxCBORDepth == 16)
        // An item at depth 16 (inside 16 containers) is accepted…
        let deepest = Self.nested(16)
        #expect(try CBORDecoder.decode(CBOREncoder.encode(deepest)) == deepest)
        let deepestEmpty = Self.nested(16, innermost: .array([]))
        #expect(try CBORDecoder.decode(CBOREncoder.encode(deepestEmpty)) == deepestEmpty)
        let maps = Self.nestedMaps(16)
        #expect(try CBORDecoder.decode(CBOREncoder.encode(maps)) == maps)
        // …one more level is not.
        expectCBORFailure(offset: 17, reason: "nesting deeper than 16", CBOREncoder.encode(Self.nested(17)))
        expectCBORFailure(offset: 17, reason: "nesting deeper than 16", CBOREncoder.encode(Self.nested(16, innermost: .array([.null]))))
        // 17 maps {"a": …}: each level is 3 bytes (a1 61 61); keys sit one level
        // deeper than their map, so the 17th map's key (at byte 49) is too deep.
        expectCBORFailure(offset: 49, reason: "nesting deeper than 16", CBOREncoder.encode(Self.nestedMaps(17)))
        // A hostile input: 100 000 nested array heads fails fast, without recursion trouble.
        expectCBORFailure(offset: 17, reason: "nesting deeper than 16", [UInt8](repeating: 0x81, count: 100_000) + [0])
    }

    // MARK: Prefix decoding

    @Test func decodePrefix() throws {
        let (value, used) = try CBORDecoder.decodePrefix(hexBytes("8201 02 ffee"))
        #expect(value == .array([.unsigned(1), .unsigned(2)]))
        #expect(used == 3)
        expectCBORFailure(offset: 1, reason: "indefinite length is not allowed", hexBytes("9f"), prefix: true)
    }

    // MARK: Round trips

    @Test func nestedRoundTrip() throws {
        var inner = CBORMap()
        inner[text: "zeta"] = .double(-0.5)
        inner[.unsigned(7)] = .bytes(counting(300))
        inner[.negative(3)] = .array([.null, .bool(true), .bool(false)])
        let value = CBOR.map(CBORMap([
            (.text("list"), .array([.map(inner), .text("😀 journal"), .negative(UInt64.max), .unsigned(UInt64.max)])),
            (.bytes([0xff]), .map(CBORMap())),
            (.unsigned(0), .text(String(repeating: "x", count: 70_000))),
            (.text("empty"), .array([])),
        ]))
        let encoded = CBOREncoder.encode(value)
        let decoded = try CBORDecoder.decode(encoded)
        #expect(decoded == value)
        #expect(CBOREncoder.encode(decoded) == encoded)
    }

    @Test func randomValuesRoundTrip() throws {
        let random = SeededRandom(label: "cbor round trip")
        func draw() -> UInt64 {
            random.bytes(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        func make(_ depth: Int) -> CBOR {
            let choice = Int(draw() % (depth >= 4 ? 7 : 9))
            switch choice {
            case 0: return .unsigned(draw() >> (draw() % 64))
            case 1: return .negative(draw() >> (draw() % 64))
            case 2: return .bytes(random.bytes(Int(draw() % 40)))
            case 3: return .text(String(repeating: "é", count: Int(draw() % 10)) + "k\(draw() % 1000)")
            case 4: return .bool(draw() % 2 == 0)
            case 5: return .null
            case 6:
                let d = Double(bitPattern: draw())
                return .double(d.isFinite ? d : 0.25)
            case 7: return .array((0..<Int(draw() % 5)).map { _ in make(depth + 1) })
            default:
                var m = CBORMap()
                for _ in 0..<Int(draw() % 5) { m[make(depth + 3)] = make(depth + 1) }
                return .map(m)
            }
        }
        for _ in 0..<300 {
            let value = make(0)
            let encoded = CBOREncoder.encode(value)
            let decoded = try CBORDecoder.decode(encoded)
            #expect(decoded == value)
            #expect(CBOREncoder.encode(decoded) == encoded)
        }
    }

    // MARK: CBORMap

    @Test func mapSubscriptKeepsCanonicalOrder() throws {
        var m = CBORMap()
        m[.text("aa")] = .unsigned(1)
        m[.bytes([1])] = .unsigned(2)
        m[.negative(0)] = .unsigned(3)
        m[.unsigned(100)] = .unsigned(4)
        m[.text("b")] = .unsigned(5)
        m[.unsigned(10)] = .unsigned(6)
        #expect(m.entries.map(\.key) == [.unsigned(10), .unsigned(100), .negative(0), .bytes([1]), .text("b"), .text("aa")])
        #expect(m.count == 6)
        // Replacing keeps one entry in place; nil removes.
        m[.unsigned(100)] = .text("new")
        #expect(m.count == 6)
        #expect(m[.unsigned(100)] == .text("new"))
        #expect(m.entries[1].value == .text("new"))
        m[.negative(0)] = nil
        #expect(m.count == 5)
        #expect(m[.negative(0)] == nil)
        m[text: "b"] = nil
        #expect(m[text: "b"] == nil)
        #expect(m[text: "aa"] == .unsigned(1))
        // The encoding decodes, so the order is the canonical one.
        let encoded = CBOREncoder.encode(.map(m))
        #expect(hex(encoded) == "a40a061864636e6577410102626161" + "01")
        #expect(try CBORDecoder.decode(encoded) == .map(m))
        // The iterator walks the canonical order.
        #expect(Array(m).map(\.key) == m.entries.map(\.key))
    }

    @Test func mapInitializerLaterDuplicatesWin() {
        let m = CBORMap([(.text("k"), .unsigned(1)), (.text("j"), .unsigned(2)), (.text("k"), .unsigned(3))])
        #expect(m.count == 2)
        #expect(m[text: "k"] == .unsigned(3))
        #expect(m.entries.map(\.key) == [.text("j"), .text("k")])
    }

    @Test func shuffledInsertionOrderGivesTheSameMap() {
        let keys: [CBOR] = (0..<40).map { i in
            switch i % 4 {
            case 0: .unsigned(UInt64(i * 1000))
            case 1: .negative(UInt64(i))
            case 2: .text(String(repeating: "k", count: i % 7) + "\(i)")
            default: .bytes(counting(i % 5, from: i))
            }
        }
        var forward = CBORMap()
        for k in keys { forward[k] = .null }
        var backward = CBORMap()
        for k in keys.reversed() { backward[k] = .null }
        #expect(forward == backward)
        #expect(CBOREncoder.encode(.map(forward)) == CBOREncoder.encode(.map(backward)))
        let encodedKeys = forward.entries.map { CBOREncoder.encode($0.key) }
        for i in 1..<encodedKeys.count { #expect(encodedKeys[i - 1].lexicographicallyPrecedes(encodedKeys[i])) }
    }

    @Test
    func textKeysThatDifferOnlyInNormalizationAreDistinct() throws {
        // "é" precomposed (62 c3a9) and decomposed (63 65cc81) are different
        // CBOR items with different encodings.
        let composed = CBOR.text("\u{e9}"), decomposed = CBOR.text("e\u{301}")
        #expect(CBOREncoder.encode(composed) != CBOREncoder.encode(decomposed))
        #expect(composed != decomposed)
        let m = CBORMap([(composed, .unsigned(1)), (decomposed, .unsigned(2))])
        #expect(m.count == 2)
        let decoded = try decodeHex("a2 62c3a9 01 6365cc81 02")
        guard case .map(let dm) = decoded else { Issue.record("not a map"); return }
        #expect(dm[decomposed] == .unsigned(2))
    }

    /// `mapFieldRanges` (the index cache's summaries, read in place): a byte
    /// string's contents and any other value whole, at their offsets; the
    /// ranges decode to the values the tree decoder gives.
    @Test func mapFieldRangesPointIntoTheInput() throws {
        let map = CBOR.map(
            CBORMap(text: [
                ("ids", .bytes([1, 2, 3])), ("count", .unsigned(300)), ("strings", .array([.text("a"), .text("bc")])),
                ("empty", .bytes([])),
            ]))
        let encoded = CBOREncoder.encode(map)
        let fields = try encoded.withUnsafeBytes { try CBORDecoder.mapFieldRanges($0) }
        #expect(fields.count == 4)
        let ids = try #require(fields["ids"])
        #expect(ids.isBytes && Array(encoded[ids.range]) == [1, 2, 3])
        let empty = try #require(fields["empty"])
        #expect(empty.isBytes && empty.range.isEmpty)
        let count = try #require(fields["count"])
        let countValue = try CBORDecoder.decode(Array(encoded[count.range]))
        #expect(!count.isBytes && countValue == .unsigned(300))
        let strings = try #require(fields["strings"])
        let stringsValue = try CBORDecoder.decode(Array(encoded[strings.range]))
        #expect(!strings.isBytes && stringsValue == .array([.text("a"), .text("bc")]))
    }

    /// What the tree decoder refuses, `mapFieldRanges` refuses too: keys out
    /// of canonical order or repeated, a non-text key, a truncated byte
    /// string, trailing bytes, a length not in its shortest form.
    @Test func mapFieldRangesRefusesWhatIsNotCanonical() {
        for hex in [
            "a2 6162 01 6161 02",  // "b" before "a"
            "a2 6161 01 6161 02",  // a repeated key
            "a1 01 02",  // an unsigned key
            "a1 6161 43 0102",  // a byte string longer than what is left
            "a1 6161 41 01 00",  // a trailing byte
            "a1 6161 5801 01",  // a length of 1 in two bytes
            "80",  // not a map
        ] {
            let bytes = hexBytes(hex)
            #expect((try? bytes.withUnsafeBytes { try CBORDecoder.mapFieldRanges($0) }) == nil, "\(hex)")
        }
    }
}
