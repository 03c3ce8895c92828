@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireVectors

/// Vectors for the fifth review's key findings that a file can show (F10).
/// Its device-memory and merge findings (F5, F7, F8) are tests named
/// `attack…` (`Tests/QuireTests`, `Tests/QuireSyncTests`): they depend on a
/// device's memory or on a merge, not on the file alone.
extension Catalog {
    static var memoryAttacks: [Make] {
        [
            {
                // Fifth review, F10 and A13: a recovery-signed keyring with a
                // non-empty `answers` list. Writers leave it empty; readers
                // ignore it (records.md §6.3): it is not malformed, and rule
                // 5.3 does not read it, even when a keyring it names removes
                // the signer.
                let b = try VectorBuilder("attack-recovery-signed-answers-ignored", deviceSeed: seedA)
                try b.commit([.entry(b.entry("before"))])
                let m = b.members  // Q (the recovery key), A
                let a = try VectorBuilder.device(seedA)
                // A replaces the recovery key: R lists Q in `removed`.
                let newRecovery = KeyringMember(
                    role: "recovery", publicKey: try Ed25519.KeyPair(seed: SecureBytes(randomCount: 32, using: b.random)).publicKey,
                    name: "Recovery key", added: b.now)
                let (kr, r) = try child(b, members: [newRecovery, m[1]], removed: [m[0]], reason: "recovery", signer: a)
                let ir = try b.addKeyring(kr, r, trust: false)
                // Q, on R's sibling branch, rotates, listing R (which removed
                // it) and an id no keyring has in its signed `answers`.
                let unknown = KeyringID(unchecked: [UInt8](repeating: 0xaa, count: 32))
                let (kx, x) = try child(b, members: [m[0], m[1]], reason: "rotate", answers: [KeyringBuilder.id(ofBody: r), unknown])
                try b.addKeyring(kx, x, members: [m[0], m[1]])
                try b.commit([.entry(b.entry("after"))])
                return try b.vector(
                    "damaged",
                    comment:
                        "attack (fifth review, F10, A13): the recovery key Q signs X, a rotation concurrent with A's replacement R of Q, and lists in X's signed answers R (which removes Q) and an id no keyring has. A recovery-signed keyring's answers are ignored, not malformed (records.md §6.3): writers leave them empty, readers do not read them (rule 5.3 reads answers only for keyrings a recovery member of a parent did not sign). X is trusted; rule 6 cuts R (the recovery key's keyring X defies it, format.md §8.4 scenario 7), and reported keyring_unauthenticated; Q is still the recovery key. Opened by A, which can open both (the old code Q cannot open R, so it judges R not at all)",
                    issues: [("keyring_unauthenticated", b.offset(ir))], deviceSeed: seedA)
            }
        ]
    }
}
