#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
@_spi(Format) import Quire
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
@_spi(Format) import QuireSync
import QuireSystem
import Testing

/// ``QuireError/category``: the small mapping an app acts on, from errors
/// the vault really throws and from representative cases of every kind.
@Suite struct QuireErrorCategoryTests {
    /// The category of what `body` threw; nil when it threw nothing.
    func category(_ body: () throws -> Void) -> QuireError.Category? {
        do { try body() } catch let error as QuireError { return error.category } catch { Issue.record("\(error)") }
        return nil
    }

    @Test func errorsTheVaultThrowsHaveTheirCategory() throws {
        let dir = TemporaryDirectory()
        let (vault, _) = try makeVault(dir)
        let path = dir.file("v.quire")
        #expect(category { _ = try Vault.open(at: path, credential: .recoveryKey(testRecoveryKey("other"))) } == .wrongCredential)
        #expect(category { _ = try vault.edit(EntryID(unchecked: Array(repeating: 9, count: 16)), body: EntryBody()) } == .notFound)
        #expect(category { _ = try Vault.open(at: dir.file("missing.quire"), credential: .recoveryKey(testRecoveryKey("vault"))) } == .unavailable)
        // An empty file, as a cloud placeholder not yet downloaded is.
        _ = FileManager.default.createFile(atPath: dir.file("empty.quire"), contents: Data())
        #expect(category { _ = try Vault.open(at: dir.file("empty.quire"), credential: .recoveryKey(testRecoveryKey("vault"))) } == .unavailable)
        let readOnly = try Vault.open(at: path, credential: .recoveryKey(testRecoveryKey("vault")), writable: false)
        #expect(category { _ = try readOnly.add(EntryBody(created: 1, text: "no")) } == .readOnly)
    }

    @Test func systemErrorsMapByErrno() {
        func io(_ code: Int32) -> QuireError { .format(.io(SystemError(operation: "write", path: "/v", code: code))) }
        #expect(io(ENOSPC).category == .outOfSpace)
        #expect(io(EDQUOT).category == .outOfSpace)
        #expect(io(ENOENT).category == .unavailable)
        #expect(io(EIO).category == .unavailable)
        #expect(io(EAGAIN).category == .busy)
        #expect(io(EROFS).category == .readOnly)
        #expect(io(EINVAL).category == .programmerError)
        #expect(QuireError.sync(.io(SystemError(operation: "rename", path: "", code: ENOSPC))).category == .outOfSpace)
        #expect(QuireError.deviceStore(.io(SystemError(operation: "open", path: "", code: EDQUOT))).category == .outOfSpace)
    }

    @Test func representativeErrorsOfEveryKind() {
        let at = FrameLocation(offset: 64, index: 1)
        let expected: [(QuireError, QuireError.Category)] = [
            (.keys(.wrongPassphrase), .wrongCredential),
            (.keys(.wrongDeviceKey), .wrongCredential),
            (.keys(.recoveryCodeInvalid(reason: "checksum")), .wrongCredential),
            (.deviceStore(.noKey), .wrongCredential),
            (.sync(.keys(.wrongRecoveryKey)), .wrongCredential),
            (.entryNotFound(EntryID(unchecked: Array(repeating: 1, count: 16))), .notFound),
            (.entryDeleted(EntryID(unchecked: Array(repeating: 1, count: 16))), .notFound),
            (.attachmentNotFound(BlobID(unchecked: Array(repeating: 2, count: 32))), .notFound),
            (.format(.blobNotFound(blob: "ab")), .notFound),
            (.format(.locked(path: "/v", seconds: 60)), .busy),
            (.sync(.locked(path: "/v")), .busy),
            (.catalogStale, .busy),
            (.format(.outOfGuardedMemory), .outOfSpace),
            (.format(.notAVault), .unavailable),
            (.format(.truncatedHeader(fileByteCount: 0)), .unavailable),
            (.format(.unsupportedVersion(9)), .unavailable),
            (.format(.vaultChanged(path: "/v")), .unavailable),
            (.format(.truncatedHeader(fileByteCount: 40)), .damaged),
            (.format(.authenticationFailed(at)), .damaged),
            (.format(.commitMismatch(at)), .damaged),
            (.format(.malformedRecord(at, reason: "x")), .damaged),
            (.damagedHeader(reason: "CRLF"), .damaged),
            (.keys(.noKeyring), .damaged),
            (.sync(.damaged(issues: [])), .damaged),
            (.sync(.copyUnreadable(path: "/c", .headerDamaged)), .damaged),
            (.deviceStore(.permissionsTooOpen(path: "/k", mode: 0o644)), .damaged),
            (.rolledBack(reason: "older"), .needsMerge),
            (.tampered(at), .needsMerge),
            (.format(.commitTampered(at)), .needsMerge),
            (.keys(.rollbackSuspected(reason: "older")), .needsMerge),
            (.removedFromVault(newerEpoch: 3), .readOnly),
            (.behindNewerKeyring(newerEpoch: 3, madeBy: "the recovery key"), .readOnly),
            (.keys(.operationRefused(reason: "a passphrase can only read")), .readOnly),
            (.format(.notWritable(reason: "read-only")), .readOnly),
            (.sync(.removed(newerEpoch: 2)), .readOnly),
            (.cancelled, .cancelled),
            (.format(.cancelled), .cancelled),
            (.sync(.cancelled), .cancelled),
            (.format(.malformedRecord(nil, reason: "entry id must be 16 bytes")), .programmerError),
            (.format(.recordTooLarge(byteCount: 1 << 30, limit: 1 << 24)), .programmerError),
            (.format(.alreadyExists(path: "/v")), .programmerError),
            (.deviceStore(.invalid(reason: "control character")), .programmerError),
            (.keys(.escrowRefused), .programmerError),
        ]
        for (error, category) in expected {
            #expect(error.category == category, "\(error.code)")
        }
        // Every category is reached.
        #expect(Set(expected.map(\.1)).count == 10)
    }
}
