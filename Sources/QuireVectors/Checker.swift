import Foundation
@_spi(Format) @_spi(Crypto) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys

/// Runs the reference library on a vector and compares every field of the
/// outcome with the vector's header (`Vectors/README.md`).
public enum Checker {
    /// What a reader made of a vector.
    public struct Outcome: CustomStringConvertible, Sendable {
        /// The outcome class.
        public var expect: String
        /// The error code, for `error`.
        public var error: String?
        /// Released records.
        public var records: Int?
        /// Their digest.
        public var recordsHash: String?
        /// How many released records are unverified.
        public var unverified: Int?
        public var unattested: Int?
        /// Whole attachments.
        public var attachments: Int?
        /// Their digest.
        public var attachmentsHash: String?
        /// Issues as `code @ offset`, sorted.
        public var issues: [(code: String, offset: UInt64)]

        /// One line for messages.
        public var description: String {
            var s = "expect: \(expect)"
            if let error { s += ", error: \(error)" }
            if let records, let recordsHash { s += ", records: \(records) \(recordsHash.prefix(16))…" }
            if let attachments, let attachmentsHash { s += ", attachments: \(attachments) \(attachmentsHash.prefix(16))…" }
            for i in issues { s += ", issue: \(i.code) @ \(i.offset)" }
            return s
        }
    }

    /// What the library makes of `vector`, using the file `scratch` (a
    /// path it may create and remove) for the vault bytes.
    public static func outcome(of vector: VectorFile, scratch: String) -> Outcome {
        try? FileManager.default.removeItem(atPath: scratch)
        _ = FileManager.default.createFile(atPath: scratch, contents: Data(vector.body))
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let credential: Credential
        do {
            if let seed = vector.deviceSeed {
                var bytes = QuireCrypto.bytes(fromHex: seed) ?? []
                credential = .device(try Ed25519.KeyPair(seed: SecureBytes(consuming: &bytes)))
            } else if let p = vector.passphrase {
                var bytes = Array(p.utf8)
                credential = .passphrase(try SecureBytes(consuming: &bytes))
            } else {
                credential = .recoveryKey(try RecoveryKey(code: vector.recoveryKey ?? ""))
            }
        } catch let e as QuireError {
            return Outcome(expect: "error", error: e.code, issues: [])
        } catch {
            return Outcome(expect: "error", error: "\(error)", issues: [])
        }
        let vault: Vault
        do {
            vault = try Vault.open(at: scratch, credential: credential, writable: false)
        } catch {
            return Outcome(expect: "error", error: error.code, issues: [])
        }
        // A member's frame of an unknown critical kind stops the records,
        // not the open (Spec/format.md §4.3): the vector's error all the same.
        if let fatal = vault.file.fatalCriticalKind { return Outcome(expect: "error", error: fatal.code, issues: []) }
        let report = vault.verify()
        var released: [(UInt8, [UInt8])] = []
        var unverified = 0
        var unattested = 0
        var manifests: [(BlobManifest, SymmetricKey?)] = []
        let kinds: Set<RecordKind> = [.entryRevision, .blobManifest, .profile]
        // Released = authenticated and decoded under its kind's schema.
        _ = vault.file.forEachRecord(kinds: kinds) { record in
            let p = record.payload
            switch record.frame.header.kind {
            case .entryRevision: guard (try? EntryRevision(decoding: p)) != nil else { return true }
            case .profile: guard (try? Profile(decoding: p)) != nil else { return true }
            case .blobManifest:
                guard let m = try? BlobManifest(decoding: p) else { return true }
                manifests.append((m, vault.file.openingKey(frame: record.frame.location.index)?.blobKey))
            default: break
            }
            released.append((record.frame.header.kind.rawValue, p))
            if !record.commitVerified { unverified += 1 } else if record.attestedBy == nil { unattested += 1 }
            return true
        }
        var attachments: [([UInt8], [UInt8])] = []
        var seen = Set<BlobID>()
        for (m, blobKey) in manifests where !seen.contains(m.blob) {
            guard let reader = try? vault.file.openBlob(m, blobKey: blobKey), let content = try? reader.readAll() else { continue }
            seen.insert(m.blob)
            attachments.append((m.blob.bytes, content))
        }
        let expect = report.issues.isEmpty ? "success" : (report.isIntact ? "recovered" : "damaged")
        return Outcome(
            expect: expect, error: nil, records: released.count, recordsHash: VectorDigest.records(released), unverified: unverified,
            unattested: unattested,
            attachments: attachments.count, attachmentsHash: VectorDigest.attachments(attachments),
            issues: report.issues.map { (code: $0.code, offset: $0.offset ?? 0) }.sorted { ($0.offset, $0.code) < ($1.offset, $1.code) })
    }

    /// Nil when the library's outcome matches the vector; otherwise what differs.
    public static func mismatch(_ vector: VectorFile, _ o: Outcome) -> String? {
        var problems: [String] = []
        if o.expect != vector.expect { problems.append("expect \(vector.expect), got \(o.expect)") }
        if o.error != vector.error { problems.append("error \(vector.error ?? "none"), got \(o.error ?? "none")") }
        if vector.expect != "error" {
            if o.records != vector.records || o.recordsHash != vector.recordsHash {
                problems.append(
                    "records \(vector.records ?? -1) \(vector.recordsHash ?? ""), got \(o.records ?? -1) \(o.recordsHash ?? "")")
            }
            if o.unverified != vector.unverified {
                problems.append("unverified \(vector.unverified ?? -1), got \(o.unverified ?? -1)")
            }
            if (o.unattested ?? 0) != (vector.unattested ?? 0) {
                problems.append("unattested \(vector.unattested ?? 0), got \(o.unattested ?? 0)")
            }
            if o.attachments != vector.attachments || o.attachmentsHash != vector.attachmentsHash {
                problems.append("attachments \(vector.attachments ?? -1), got \(o.attachments ?? -1)")
            }
            let want = vector.issues.map { "\($0.code)@\($0.offset)" }
            let got = o.issues.map { "\($0.code)@\($0.offset)" }
            if want != got { problems.append("issues \(want), got \(got)") }
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }
}
