// fuzz-cbor: CBORDecoder on arbitrary bytes, and the canonical round trip.
//
// Quire's CBOR profile gives every value exactly one encoding, so whatever
// the decoder accepts must re-encode to the very same bytes; a mismatch is a
// bug (fatalError). decodePrefix must agree with decode. Map keys with
// different encodings must be different values (no lookup conflates them).
//
// The same bytes then go to every record decoder (entry revision, profile,
// attachment manifest, keyring body / public part / content). Sealed records are unreachable from fuzz-vault (the fuzzer
// cannot forge an AEAD tag), so this is where their decoders get fuzzed.
// A record that decodes must survive encode → decode unchanged.

import FuzzSupport
@_spi(Format) import QuireFormat

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))

    // The prefix decoder: what it accepts must round-trip over the bytes it used.
    if let (value, used) = try? CBORDecoder.decodePrefix(bytes) {
        guard used > 0, used <= bytes.count else { fatalError("decodePrefix used \(used) of \(bytes.count) bytes") }
        let prefix = Array(bytes[0..<used])
        guard CBOREncoder.encode(value) == prefix else {
            fatalError("decodePrefix round trip differs: \(hexString(prefix)) re-encodes as \(hexString(CBOREncoder.encode(value)))")
        }
    }

    let value: CBOR
    do {
        value = try CBORDecoder.decode(bytes)
    } catch {
        Sink.touch(error.offset)
        guard error.offset >= 0, error.offset <= bytes.count else { fatalError("error offset \(error.offset) outside the input") }
        return 0
    }
    records(bytes)
    Sink.touch(value)
    distinctKeys(value)
    let encoded = CBOREncoder.encode(value)
    guard encoded == bytes else {
        fatalError("canonical round trip differs: \(hexString(bytes)) re-encodes as \(hexString(encoded))")
    }
    // And the re-encoding decodes to an equal value.
    guard let again = try? CBORDecoder.decode(encoded), again == value else {
        fatalError("re-encoded value does not decode to itself: \(hexString(encoded))")
    }
    return 0
}

/// Keys the decoder accepted as distinct (their encodings differ) must be
/// distinct CBOR values too, or map lookups would conflate them: `CBOR`
/// equality must be by bytes, not by `String`'s Unicode equivalence
/// (NFC "é" vs NFD "é", KELVIN SIGN vs "K") or `Double`'s (0.0 vs -0.0).
func distinctKeys(_ value: CBOR) {
    switch value {
    case .array(let items):
        for item in items { distinctKeys(item) }
    case .map(let m):
        var keys = Set<CBOR>()
        for e in m.entries {
            guard keys.insert(e.key).inserted else {
                fatalError("map keys with different encodings compare equal: \(hexString(CBOREncoder.encode(e.key)))")
            }
            guard m[e.key] == e.value else { fatalError("map lookup of \(hexString(CBOREncoder.encode(e.key))) finds another entry") }
            distinctKeys(e.key)
            distinctKeys(e.value)
        }
    default:
        break
    }
}

/// Feeds `bytes` to the record decoders; whatever decodes must round-trip.
func records(_ bytes: [UInt8]) {
    roundTrip("entry revision", bytes, decode: { b throws(FormatError) in try EntryRevision(decoding: b) }, encode: { $0.encoded() })
    roundTrip("profile", bytes, decode: { b throws(FormatError) in try Profile(decoding: b) }, encode: { $0.encoded() })
    roundTrip("attachment manifest", bytes, decode: { b throws(FormatError) in try BlobManifest(decoding: b) }, encode: { $0.encoded() })
    roundTrip("keyring public part", bytes, decode: { b throws(FormatError) in try KeyringPublic(decoding: b, location: nil) }, encode: { $0.encoded() })
    roundTrip("keyring body", bytes, decode: { b throws(FormatError) in try KeyringRecord(body: b, location: nil) }, encode: { $0.encodedBody() })
    // KeyringContent is not Equatable (it holds keys): compare encodings.
    if let content = bytes.withUnsafeBytes({ try? KeyringContent(decoding: $0, location: nil) }) {
        Sink.touch(content.members.count)
        let encoded = content.encoded()
        guard let again = encoded.withUnsafeBytes({ try? KeyringContent(decoding: $0, location: nil) }) else {
            fatalError("keyring content re-encoding does not decode: \(hexString(bytes)) -> \(hexString(encoded))")
        }
        guard again.encoded() == encoded else {
            fatalError("keyring content encoding is not stable: \(hexString(bytes)) -> \(hexString(encoded))")
        }
    }
}

func roundTrip<T: Equatable>(
    _ what: String, _ bytes: [UInt8], decode: ([UInt8]) throws(FormatError) -> T, encode: (T) -> [UInt8]
) {
    guard let record = try? decode(bytes) else { return }
    let encoded = encode(record)
    let again: T
    do { again = try decode(encoded) } catch {
        fatalError("\(what) re-encoding does not decode (\(error)): \(hexString(bytes)) -> \(hexString(encoded))")
    }
    guard again == record else { fatalError("\(what) changes through encode/decode: \(hexString(bytes)) -> \(hexString(encoded))") }
    guard encode(again) == encoded else { fatalError("\(what) encoding is not stable: \(hexString(bytes)) -> \(hexString(encoded))") }
}

private func hexString(_ bytes: [UInt8]) -> String {
    let digits: [Character] = Array("0123456789abcdef")
    var s = ""
    for b in bytes { s.append(digits[Int(b >> 4)]); s.append(digits[Int(b & 15)]) }
    return s
}
