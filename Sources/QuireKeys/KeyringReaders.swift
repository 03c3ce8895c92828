@_spi(Format) package import QuireFormat

/// The readers of a keyring that a new epoch must wrap to besides the
/// recovery member (`Spec/format.md §8.4` rule 1): its members of role
/// device, its escrow recipients and its passphrase slots.
package enum KeyringReaders {
    /// How many readers `members`, `escrow` and `slots` make.
    public static func count(members: [KeyringMember], escrow: [EscrowRecipient], slots: [KeySlot]) -> Int {
        members.filter { $0.role == "device" }.count + escrow.count
            + slots.filter { if case .passphrase = $0 { true } else { false } }.count
    }
}
