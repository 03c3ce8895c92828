// fuzz-commit: commit attestations (Spec/format.md §9.2, §9.4) with a fixed
// epoch key.
//
// The first byte of the input picks what the rest is:
//
//   0  a commit body of any length: CommitChain.checkAttestation and
//      openAttestation over a fixed previous head and group digest;
//   1  an attestation plaintext A (cut or zero-padded to 96 bytes), which
//      the harness seals into a commit body with CommitChain.body (the
//      synthetic nonce) and checks again: 96 zero bytes must be unattested,
//      anything else must fail (no input can sign without the key), and the
//      body must open back to A;
//   2  bytes 0..<32 are a group digest; the harness attests it with a fixed
//      member key and checks that the body verifies as signed by that key,
//      that one flipped bit anywhere in the body but the stored previous
//      head (bytes 32..<64, which the reader checks through the head, §9.3)
//      makes it fail, and that the same body checked as extending another
//      head fails.
//
// A crash, a trap or a broken invariant (fatalError) is a bug.

import FuzzSupport
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat

let vaultID: VaultID = {
    do { return try VaultID(bytes: [UInt8](repeating: 7, count: 16)) } catch { fatalError("\(error)") }
}()

let key: EpochKey = {
    do { return EpochKey(epoch: 1, key: try SymmetricKey(bytes: [UInt8](repeating: 9, count: 32))) } catch { fatalError("\(error)") }
}()

let member: Ed25519.KeyPair = {
    do {
        var seed = [UInt8](repeating: 3, count: 32)
        return try Ed25519.KeyPair(seed: SecureBytes(consuming: &seed))
    } catch { fatalError("\(error)") }
}()

let header = CommitChain.commitHeader(keyID: key.id)
let digest = [UInt8](repeating: 0xdd, count: 32)
let head = [UInt8](repeating: 0x4e, count: 32)
let previous = [UInt8](repeating: 0x5f, count: 32)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let mode = data[0] % 3
    let rest = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch mode {
    case 0:
        let result = CommitChain.checkAttestation(body: rest, previousHead: previous, digest: digest, key: key, vaultID: vaultID, commitHeader: header)
        Sink.touch("\(result)")
        Sink.touch(CommitChain.openAttestation(body: rest, previousHead: previous, digest: digest, key: key, vaultID: vaultID, commitHeader: header))
        if case .signed = result, rest.count != CommitChain.bodyByteCount { fatalError("a body of \(rest.count) bytes verified") }
    case 1:
        var a = Array(rest.prefix(CommitChain.attestationByteCount))
        a += [UInt8](repeating: 0, count: CommitChain.attestationByteCount - a.count)
        guard let body = try? CommitChain.body(previousHead: previous, digest: digest, attestation: a, key: key, vaultID: vaultID, commitHeader: header)
        else { fatalError("no body") }
        guard body.count == CommitChain.bodyByteCount else { fatalError("a commit body of \(body.count) bytes") }
        guard CommitChain.openAttestation(body: body, previousHead: previous, digest: digest, key: key, vaultID: vaultID, commitHeader: header) == a else { fatalError("the attestation does not open back") }
        let result = CommitChain.checkAttestation(body: body, previousHead: previous, digest: digest, key: key, vaultID: vaultID, commitHeader: header)
        switch result {
        case .unattested: if a != CommitChain.unattested { fatalError("a non-zero attestation read as unattested") }
        case .signed: fatalError("an attestation the fuzzer made verified as signed")
        case .failed: if a == CommitChain.unattested { fatalError("96 zero bytes failed: \(result)") }
        }
    default:
        let d = Array(rest.prefix(32)) + [UInt8](repeating: 0, count: max(0, 32 - rest.count))
        let a = CommitChain.attestation(keyCommitment: key.commitment, previousHead: previous, digest: d, vaultID: vaultID, signer: member)
        guard let body = try? CommitChain.body(previousHead: previous, digest: d, attestation: a, key: key, vaultID: vaultID, commitHeader: header)
        else { fatalError("no body") }
        guard CommitChain.checkAttestation(body: body, previousHead: previous, digest: d, key: key, vaultID: vaultID, commitHeader: header)
            == .signed(signer: member.publicKey)
        else {
            fatalError("a member's attestation does not verify")
        }
        if case .signed = CommitChain.checkAttestation(body: body, previousHead: head, digest: d, key: key, vaultID: vaultID, commitHeader: header) {
            fatalError("a member's attestation verifies after another head")
        }
        if rest.count > 32 {
            var damaged = body
            let bit = Int(rest[32]) | (rest.count > 33 ? Int(rest[33]) << 8 : 0)
            let at = (bit / 8) % damaged.count
            damaged[at] ^= UInt8(1 << (bit % 8))
            // The attestation's associated data holds h_(k−1) and D, not the
            // stored heads (bytes 0..<64): a flip there leaves it signed, and
            // the head check below catches it instead (Spec/format.md §9.2).
            if at >= 2 * CommitChain.headByteCount,
                case .signed = CommitChain.checkAttestation(body: damaged, previousHead: previous, digest: d, key: key, vaultID: vaultID, commitHeader: header) {
                fatalError("a commit body with a flipped bit still verifies as signed")
            }
            // The head covers the stored attestation (R6-1): a flip in the
            // stored head or in bytes 64..<200 makes them disagree.
            if !(32..<64).contains(at) {
                let computed = try? CommitChain.head(
                    key: key, vaultID: vaultID, previousHead: previous, digest: d, commitHeader: header,
                    storedAttestation: Array(damaged[(2 * CommitChain.headByteCount)...]))
                if computed == Array(damaged[0..<CommitChain.headByteCount]) {
                    fatalError("a commit body with a flipped bit still matches its head")
                }
            }
        }
    }
    return 0
}
