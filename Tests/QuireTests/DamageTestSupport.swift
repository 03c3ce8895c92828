import Foundation
@_spi(Format) import Quire
import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireTestSupport

// Helpers shared by the Damage*, Truncation*, Property* and Concurrency*
// suites. Names carry a `dmg` prefix so they never clash with TestSupport.swift.

/// The whole content of the file at `path`.
func dmgRead(_ path: String) -> [UInt8] {
    // Copy through a raw buffer: the generic sequence initializers are slow
    // in debug builds, and some tests read thousands of files.
    FileManager.default.contents(atPath: path)!.withUnsafeBytes { Array($0.bindMemory(to: UInt8.self)) }
}

/// Writes `bytes` to `path`, replacing whatever is there.
func dmgWrite(_ path: String, _ bytes: [UInt8]) {
    try! bytes.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: path))
}

/// Writes `bytes` to `path`, replacing whatever is there.
func dmgWrite(_ path: String, _ bytes: ArraySlice<UInt8>) {
    try! bytes.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: path))
}

/// Opens the vault at `path` with the recovery key and test options.
func dmgOpen(_ path: String, _ recovery: RecoveryKey, writable: Bool = true) throws(QuireError) -> Vault {
    try Vault.open(at: path, credential: .recoveryKey(recovery), writable: writable, options: fast)
}

/// A body with a distinct creation time so that `entries()` order is known.
func dmgBody(_ text: String, created: Int64, attachments: [AttachmentReference] = []) -> EntryBody {
    EntryBody(created: created, timeZone: "Europe/London", text: text, attachments: attachments)
}

/// The texts of `vault.entries()`, in its order.
func dmgTexts(_ vault: Vault) throws -> [String] {
    try vault.entries().map(\.body.text)
}

/// An issue reduced to what the tests compare exactly.
struct DmgIssue: Equatable, CustomStringConvertible {
    let code: String
    let offset: UInt64?
    let frameIndex: Int?
    let isDamage: Bool

    init(_ code: String, offset: UInt64?, frame: Int?, damage: Bool) {
        self.code = code
        self.offset = offset
        frameIndex = frame
        isDamage = damage
    }

    init(_ i: VerifyReport.Issue) {
        code = i.code
        offset = i.offset
        frameIndex = i.frameIndex
        isDamage = i.isDamage
    }

    var description: String {
        "\(code)@\(offset.map(String.init) ?? "-")#\(frameIndex.map(String.init) ?? "-")\(isDamage ? "!" : "")"
    }
}

/// The issues of `vault.verify()`, reduced.
func dmgIssues(_ vault: Vault) -> [DmgIssue] {
    vault.verify().issues.map(DmgIssue.init)
}

/// Frame index and offset of every commit group of a vault, as a keyless
/// scan of its file sees them.
struct DmgLayout {
    struct Frame {
        let index: Int
        let offset: UInt64
        let end: UInt64
        let kind: RecordKind
        let isSealed: Bool
        /// Index of the commit group the frame belongs to.
        let group: Int
    }

    let frames: [Frame]
    /// For each commit group: (first byte of its first member or commit, end of its commit frame, commit frame index).
    let groups: [(start: UInt64, end: UInt64, commitFrame: Int)]
    let fileSize: UInt64

    init(_ vault: Vault) {
        self.init(vault.file.structure)
    }

    init(_ s: VaultStructure) {
        var frames: [Frame] = []
        var groups: [(UInt64, UInt64, Int)] = []
        for (g, group) in s.groups.enumerated() {
            let first = group.members.isEmpty ? group.commitFrame : group.members.lowerBound
            groups.append((s.frames[first].location.offset, s.frames[group.commitFrame].end, group.commitFrame))
            for i in first...group.commitFrame {
                let f = s.frames[i]
                frames.append(Frame(index: i, offset: f.location.offset, end: f.end, kind: f.header.kind, isSealed: f.header.isSealed, group: g))
            }
        }
        self.frames = frames
        self.groups = groups
        fileSize = s.fileSize
    }

    /// The frame containing byte `offset` (nil for the file header).
    func frame(containing offset: UInt64) -> Frame? {
        frames.first { $0.offset <= offset && offset < $0.end }
    }
}

/// The damage tests' generator: ``SplitMix64`` of the shared test support.
typealias DmgRNG = SplitMix64
