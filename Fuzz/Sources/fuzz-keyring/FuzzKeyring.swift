// fuzz-keyring: the keyring parsers and the opening of a keyring's sealed
// part (Spec/format.md §8.1–§8.5), with a fixed epoch key.
//
// The first byte of the input picks what the rest is:
//
//   0  a keyring body K: KeyringRecord(body:) (then its public part
//      re-encodes, and a body that parses re-encodes to its own bytes);
//   1  a public part P: KeyringPublic(decoding:);
//   2  an inner part I, which the harness pads and seals under the fixed
//      key's keyring key with a fixed public part and nonce, then opens
//      with KeyringRecord.open (unpadding, the three byte-string fields,
//      the content decoder into guarded memory, the signature check);
//   3  the same, sealed as it is (the padding is the input's: pad(I) rules);
//   4  CBORDecoder.byteStringFields on the rest;
//   5  a link plaintext (signer ‖ signature, any length), sealed under the
//      fixed parent key's link key into a keyring's link, then read back
//      with linkSigner (which must not return a signer whose signature did
//      not verify).
//
// Sealed parts cannot be reached through fuzz-vault (the fuzzer cannot
// forge an AEAD tag): this target is where their decoders are fuzzed.
// Errors are fine; a crash, a trap or a broken invariant (fatalError) is a bug.

import FuzzSupport
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat

let vaultID: VaultID = {
    do { return try VaultID(bytes: [UInt8](repeating: 7, count: 16)) } catch { fatalError("\(error)") }
}()

let epochKey: EpochKey = {
    do { return EpochKey(epoch: 2, key: try SymmetricKey(bytes: [UInt8](repeating: 9, count: 32))) } catch { fatalError("\(error)") }
}()

let parentKey: EpochKey = {
    do { return EpochKey(epoch: 1, key: try SymmetricKey(bytes: [UInt8](repeating: 8, count: 32))) } catch { fatalError("\(error)") }
}()

let parentID = KeyringID(unchecked: [UInt8](repeating: 0x11, count: 32))
let nonce = [UInt8](repeating: 0x24, count: 24)
let location = FrameLocation(offset: 64, index: 0)

/// The fixed public part the harness seals inner parts under.
let publicPart = KeyringPublic(
    epoch: 2, keyCommit: epochKey.commitment, parents: [parentID], links: [[UInt8](repeating: 0, count: KeyringRecord.linkByteCount)],
    isEscrowFree: false, slotEntries: [])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let mode = data[0] % 6
    let rest = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch mode {
    case 0: body(rest)
    case 1: publicBytes(rest)
    case 2: var inner = rest
        Padding.pad(&inner)
        sealedInner(inner)
    case 3: sealedInner(rest)
    case 4:
        let fields = rest.withUnsafeBytes { try? CBORDecoder.byteStringFields($0) }
        for (key, range) in fields ?? [:] {
            guard range.lowerBound >= 0, range.upperBound <= rest.count else { fatalError("byte string field \(key) at \(range) outside the input") }
            Sink.touch(key)
        }
    default: link(rest)
    }
    return 0
}

func body(_ bytes: [UInt8]) {
    guard let record = try? KeyringRecord(body: bytes, location: location) else { return }
    Sink.touch(record.epoch)
    Sink.touch(record.publicPart.parents)
    guard record.encodedBody() == bytes else { fatalError("a keyring body that parses does not re-encode to itself") }
    guard (try? KeyringPublic(decoding: record.publicBytes, location: location)) == record.publicPart else {
        fatalError("a keyring's public part does not decode to itself")
    }
    // Opening it with the fixed key exercises the AEAD failure path.
    Sink.touch((try? record.open(key: epochKey, vaultID: vaultID, location: location))?.signatureValid)
    for i in record.publicPart.parents.indices { Sink.touch(record.linkSigner(parentIndex: i, parentKey: parentKey, vaultID: vaultID)) }
}

func publicBytes(_ bytes: [UInt8]) {
    guard let pub = try? KeyringPublic(decoding: bytes, location: location) else { return }
    Sink.touch(pub.slots.count)
    guard pub.links.count == pub.parents.count, pub.parents.count <= Limits.maxParentCount, Set(pub.parents).count == pub.parents.count,
          pub.slots.count <= Limits.maxSlotsPerKeyring, pub.epoch >= 1
    else { fatalError("a public part broke a limit the decoder checks") }
    guard (try? KeyringPublic(decoding: pub.encoded(), location: location)) == pub else { fatalError("a public part does not survive encode/decode") }
}

func sealedInner(_ padded: [UInt8]) {
    guard let keyringKey = try? epochKey.subkey(.keyring) else { fatalError("no keyring key") }
    let publicBytes = publicPart.encoded()
    let sealed = XChaCha20Poly1305.seal(padded, key: keyringKey, nonce: nonce, authenticating: KeyringRecord.associatedData(vaultID: vaultID, publicBytes: publicBytes))
    let record = KeyringRecord(publicPart: publicPart, nonce: nonce, sealed: sealed)
    do {
        let opened = try record.open(key: epochKey, vaultID: vaultID, location: location)
        Sink.touch(opened.signer)
        Sink.touch(opened.signatureValid)
        Sink.touch(opened.content.members.count)
        Sink.touch(opened.content.parentKeys.count)
        Sink.touch(opened.content.reason)
        guard opened.content.parentKeys.count <= Limits.maxParentCount, opened.content.members.count <= Limits.maxKeyringListCount else {
            fatalError("an opened keyring's content broke a limit the decoder checks")
        }
        // The content re-encodes to something that decodes to the same encoding.
        let encoded = opened.content.encoded()
        let again = encoded.withUnsafeBytes { try? KeyringContent(decoding: $0, location: location) }
        guard let again, again.encoded() == encoded else { fatalError("an opened keyring's content does not survive encode/decode") }
    } catch {
        Sink.touch(error.code)
    }
}

func link(_ plain: [UInt8]) {
    guard let linkKey = try? parentKey.subkey(.link) else { fatalError("no link key") }
    let linkNonce = [UInt8](repeating: 0x42, count: 24)
    var ad = Array("quire-keyring-link-v2".utf8) + vaultID.bytes
    ad += [2, 0, 0, 0] + epochKey.commitment + parentID.bytes
    let sealedLink = linkNonce + XChaCha20Poly1305.seal(plain, key: linkKey, nonce: linkNonce, authenticating: ad)
    let pub = KeyringPublic(epoch: 2, keyCommit: epochKey.commitment, parents: [parentID], links: [sealedLink], isEscrowFree: false, slotEntries: [])
    let record = KeyringRecord(publicPart: pub, nonce: nonce, sealed: [UInt8](repeating: 0, count: 17))
    guard let signer = record.linkSigner(parentIndex: 0, parentKey: parentKey, vaultID: vaultID) else { return }
    // A signer is returned only for a signature that verifies over the
    // link message, which no input can make without the signer's secret key.
    guard plain.count == 96, Array(plain[0..<32]) == signer else { fatalError("linkSigner returned \(signer) for a link it did not verify") }
    fatalError("a link signed by \(signer) verified: the fuzzer forged an Ed25519 signature")
}
