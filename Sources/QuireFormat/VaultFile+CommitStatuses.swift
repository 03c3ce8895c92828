import QuireSystem

extension VaultFile {
    /// The status of each commit group, in file order, as
    /// ``verifyCommits(keys:trustedKeyrings:attestors:removedMembers:)`` left
    /// them: unlike ``commits``, reading it checks no attestation (an Ed25519
    /// signature check per group). A merge needs the statuses of every group
    /// but the attestations of the groups it carries only
    /// (``attestation(ofFrame:)``).
    public var commitStatuses: [CommitReport.Status] {
        lock.withLock { verdicts.statuses }
    }
}
