"""Commits: the chain (format.md §9.2), verifying commits (§9.3 steps 1–5)
and attestation (§9.4)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .crypto import (SUBKEY_ATTESTATION, SUBKEY_COMMIT, aead_open, blake2b, ed25519_verify,
                     h256, mac256, subkey)
from .errors import Issue
from .frames import Frame

ZERO_HEAD = bytes(32)
NO_ATTESTATION = bytes(96)


@dataclass(eq=False)
class Commit:
    frame: Frame
    index: int
    covered: list                        # the Frames between the previous commit and this one
    status: str = ""                     # verified | mismatch | unverifiable
    key: object = None                   # the HeldKey that verified it
    stale: bool = False
    floor: int = 0
    attestation: str = ""                # attested | unattested | failed (verified, not stale)
    signer: bytes = b""
    damaged_regions: list = field(default_factory=list)

    @property
    def stored_head(self):
        return self.frame.body[:32]

    @property
    def verified(self):
        return self.status == "verified"

    @property
    def attested(self):
        return self.attestation == "attested"


def group_digest(frames: list) -> bytes:
    """§9.2: D_k = H256(summary_1 ‖ … ‖ summary_m)."""
    return h256(b"".join(f.summary for f in frames))


def chain_head(key: bytes, vault_id: bytes, prev: bytes, digest: bytes, commit_fields: bytes) -> bytes:
    """§9.2: h_k = MAC256(commit key, "quire-chain-v2" ‖ vault id ‖ h_(k−1) ‖ D_k ‖ fields)."""
    return mac256(subkey(key, SUBKEY_COMMIT),
                  b"quire-chain-v2" + vault_id + prev + digest + commit_fields)


def attestation_nonce(att_key: bytes, head: bytes, a: bytes) -> bytes:
    """§9.2: BLAKE2b-192(key = attestation key, "quire-commit-nonce-v2" ‖ h_k ‖ A)."""
    return blake2b(b"quire-commit-nonce-v2" + head + a, 24, key=att_key)


def verify_commits(commits: list, keys, vault_id: bytes, issues: list) -> None:
    """§9.3 steps 1–5 over the commits in file order."""
    s_prev = c_prev = ZERO_HEAD
    for c in commits:
        stored = c.stored_head
        digest = group_digest(c.covered)
        fields = c.frame.fields
        candidates = keys.candidates(c.frame.key_id)
        if not candidates:                                           # step 1
            c.status = "unverifiable"
            issues.append(Issue("commit_unverifiable", c.frame.offset))
            c_k = s_prev
        else:
            c_k = None
            for h in candidates:                                     # step 2
                for prev in (s_prev, c_prev):
                    if chain_head(h.key, vault_id, prev, digest, fields) == stored:
                        c.status, c.key, c_k = "verified", h, stored
                        break
                if c_k is not None:
                    break
            if c_k is None:                                          # step 3
                c.status = "mismatch"
                issues.append(Issue("commit_mismatch", c.frame.offset))
                c_k = chain_head(candidates[0].key, vault_id, s_prev, digest, fields)
        # step 4: the floor, from the trusted keyrings in the commits before
        # this one (a keyring counts in the commit of its first intact copy)
        c.floor = max((kr.epoch for kr in keys.trusted if kr.commit_index < c.index), default=0)
        if c.verified and c.key.epoch < c.floor:
            c.stale = True
            issues.append(Issue("stale_epoch", c.frame.offset))
        if c.verified and not c.stale:                               # step 5
            _attestation(c, digest, keys, vault_id, issues)
        s_prev, c_prev = stored, c_k


def _attestation(c: Commit, digest: bytes, keys, vault_id: bytes, issues: list) -> None:
    """§9.4. The synthetic nonce is checked for 96 zero bytes too: §9.2
    defines the nonce for both forms of A (see README, "What the text did
    not say")."""
    body = c.frame.body
    head, nonce, sealed = body[:32], body[32:56], body[56:168]
    att_key = subkey(c.key.key, SUBKEY_ATTESTATION)
    a = aead_open(att_key, nonce, sealed, vault_id + c.frame.fields + head)
    ok = a is not None and len(a) == 96 and nonce == attestation_nonce(att_key, head, a)
    if ok and a == NO_ATTESTATION:
        c.attestation = "unattested"
        return
    if ok:
        signer, sig = a[:32], a[32:]
        ok = (ed25519_verify(signer, b"quire-commit-v2" + vault_id + digest, sig)
              and signer in keys.signing_members())
    if ok:
        c.attestation, c.signer = "attested", a[:32]
    else:
        c.attestation = "failed"
        issues.append(Issue("attestation_failed", c.frame.offset))
