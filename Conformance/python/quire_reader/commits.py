"""Commits: the chain (format.md §9.2), verifying commits (§9.3: links,
the chain, floor, stale) and attestation (§9.4)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .crypto import (SUBKEY_ATTESTATION, SUBKEY_COMMIT, SUBKEY_NONCE, aead_open, blake2b,
                     ed25519_verify, h256, mac256, subkey)
from .errors import Issue
from .frames import BODY_HASH, KIND_CHUNK, KIND_KEYRING, Frame, is_well_formed

ZERO_HEAD = bytes(32)
NO_ATTESTATION = bytes(96)


@dataclass(eq=False)
class Commit:
    frame: Frame
    index: int
    covered: list                        # the Frames between the previous commit and this one
    # chain | orphaned | mismatch | tampered | unverifiable (§9.3)
    status: str = ""
    key: object = None                   # the HeldKey its head verifies under
    stale: bool = False
    floor: int = 0
    # attested | removed (attested by a removed member) | unattested | failed
    attestation: str = ""
    signer: bytes = b""
    damaged_regions: list = field(default_factory=list)   # Damaged items in its group
    head_verifies: bool = False
    prev_used: bytes | None = None       # the head its own was computed from
    computed: bytes = b""                # c_k
    link: int | None = None              # index of the commit it links to; -1: h_0
    via_computed: bool = False           # its head verified from c_(k−1) ≠ s_(k−1)
    bridge: bytes | None = None          # a mismatch: the head its repaired digest chains from

    @property
    def stored_head(self):
        return self.frame.body[:32]

    @property
    def on_chain(self):
        return self.status == "chain"

    @property
    def verified(self):
        """§9.3: on the chain and not stale."""
        return self.status == "chain" and not self.stale

    @property
    def attested(self):
        """§9.4: attested by a member (not a removed one)."""
        return self.attestation == "attested"

    @property
    def standing(self):
        """merge.md §3.3, format.md §7.3, §7.4: verified and attested by a
        member (3), verified (2), unverified (1)."""
        return 3 if self.verified and self.attested else 2 if self.verified else 1


def group_digest(frames: list) -> bytes:
    """§9.2: D_k = H256(summary_1 ‖ … ‖ summary_m)."""
    return h256(b"".join(f.summary for f in frames))


def chain_head(key: bytes, vault_id: bytes, prev: bytes, digest: bytes, commit_fields: bytes) -> bytes:
    """§9.2: h_k = MAC256(commit key, "quire-chain-v2" ‖ vault id ‖ h_(k−1) ‖ D_k ‖ fields)."""
    return mac256(subkey(key, SUBKEY_COMMIT),
                  b"quire-chain-v2" + vault_id + prev + digest + commit_fields)


def attestation_nonce(nonce_key: bytes, head: bytes, a: bytes) -> bytes:
    """§9.2: BLAKE2b-192(key = nonce key, "quire-commit-nonce-v2" ‖ h_k ‖ A)."""
    return blake2b(b"quire-commit-nonce-v2" + head + a, 24, key=nonce_key)


LOOKBACK = 64                            # §9.3 links, step 3


def link_commits(commits: list, keys, vault_id: bytes) -> None:
    """§9.3 "Links": whose head verifies, under which key, from which head,
    and the commit each links to."""
    s_prev = c_prev = ZERO_HEAD
    verified: list = []                  # commits whose heads verified, in order
    for k, c in enumerate(commits):
        stored = c.stored_head
        digest = group_digest(c.covered)
        fields = c.frame.fields
        candidates = keys.candidates(c.frame.key_id)
        c.head_verifies, c.prev_used, c.key, c.link = False, None, None, None
        c.via_computed, c.bridge = False, None
        if not candidates:                                           # 1
            c.status = "unverifiable"
            c_k = s_prev
        else:
            for h in candidates:                                     # 2
                for prev in (s_prev, c_prev):
                    if chain_head(h.key, vault_id, prev, digest, fields) == stored:
                        c.key, c.prev_used = h, prev
                        break
                if c.key is not None:
                    break
            if c.key is None:                                        # 3
                older = [v.stored_head for v in verified if v.index < k - 1][-LOOKBACK:][::-1]
                if len(older) < LOOKBACK:
                    older.append(ZERO_HEAD)
                for h in candidates:
                    for prev in older:
                        if chain_head(h.key, vault_id, prev, digest, fields) == stored:
                            c.key, c.prev_used = h, prev
                            break
                    if c.key is not None:
                        break
            if c.key is None:                                        # 4
                c.status = "mismatch"
                c_k = chain_head(candidates[0].key, vault_id, s_prev, digest, fields)
                repaired = repaired_digest(c, keys)
                if repaired is not None:
                    c.bridge = next((p for p in dict.fromkeys((s_prev, c_prev))
                                     if any(chain_head(h.key, vault_id, p, repaired, fields)
                                            == stored for h in candidates)), None)
            else:
                c.head_verifies = True
                c.via_computed = c.prev_used == c_prev and c_prev != s_prev
                c_k = stored
        c.computed = c_k
        if c.head_verifies:
            c.link = _link(c, commits[:k], verified)
            verified.append(c)
        s_prev, c_prev = stored, c_k


def _link(c: Commit, before: list, verified: list):
    """§9.3: h_0 (-1), or the last commit whose head verified with that
    stored head, or else the commit whose stored or computed head it is."""
    p = c.prev_used
    if p == ZERO_HEAD:
        return -1
    for v in reversed(verified):
        if v.stored_head == p:
            return v.index
    for b in reversed(before):
        if b.stored_head == p or b.computed == p:
            return b.index
    return None


def repaired_digest(c: Commit, keys):
    """The group digest with each frame's body hash recomputed from its
    body (a sealed frame's with the first held key of its key id): what
    the writer committed if only body hashes were hit. None when no body
    hash differs, or the group holds a damaged region."""
    if c.damaged_regions:
        return None
    parts, changed = [], False
    for f in c.covered:
        trailer = f.summary[len(f.header):]
        if f.kind != KIND_CHUNK and not f.malformed:
            commit = b""
            if f.sealed:
                held = keys.candidates(f.key_id)
                commit = held[0].commit if held else None
            if commit is not None:
                fixed = h256(commit + f.body[:-BODY_HASH])
                changed |= fixed != trailer
                trailer = fixed
        parts.append(f.header + trailer)
    return h256(b"".join(parts)) if changed else None


def _predecessor(nxt: Commit, commits: list, heads: list):
    """The commit `nxt` confirms: the one it links to — or, when that is a
    mismatch, the commit the mismatch's content chains from, when that
    shows: through its computed head (`nxt` was computed from it: only its
    stored head was hit), or through its repaired digest."""
    j = nxt.link
    if j is None:
        return None

    def resolve(value, limit):
        if value == ZERO_HEAD:
            return -1
        return next((h.index for h in reversed(heads)
                     if h.index < limit and h.stored_head == value), None)

    if j >= 0 and commits[j].status == "mismatch":
        if nxt.via_computed:
            return resolve(commits[j - 1].stored_head, j) if j > 0 else -1
        return resolve(commits[j].bridge, j) if commits[j].bridge is not None else None
    return None if nxt.via_computed else j


def tip_head(commits: list, keys, vault_id: bytes) -> bytes:
    """§9.1: the stored head of the last commit whose head verifies, or h_0."""
    link_commits(commits, keys, vault_id)
    return next((c.stored_head for c in reversed(commits) if c.head_verifies), ZERO_HEAD)


def _looks_damaged(c: Commit, keys, vault_id: bytes) -> bool:
    """§9.3: a damaged region, a repaired header, a malformed frame, or a
    frame whose body hash (a chunk: its AEAD tag) fails under a held key."""
    from .records import RecordError, open_sealed     # no import cycle at load time
    if c.damaged_regions or c.frame.repaired:
        return True
    for f in c.covered:
        if f.repaired or f.malformed:
            return True
        if not f.sealed:
            if f.kind != KIND_CHUNK and not f.body_hash_ok():
                return True
            continue
        candidates = keys.candidates(f.key_id)
        if not candidates:
            continue                                     # cannot be checked
        if f.kind == KIND_CHUNK:
            try:
                open_sealed(f, candidates, vault_id)
            except RecordError:
                return True
        elif not any(f.body_hash_ok(h.commit) for h in candidates):
            return True
    return False


def verify_commits(commits: list, keys, vault_id: bytes, issues: list) -> None:
    """§9.3: links, the chain, then floor, stale and attestation."""
    link_commits(commits, keys, vault_id)
    heads = [c for c in commits if c.head_verifies]
    for i, c in enumerate(heads):                                    # the chain
        nxt = heads[i + 1] if i + 1 < len(heads) else None
        followed = nxt is None or _predecessor(nxt, commits, heads) == c.index
        passed = any(m.link is not None and m.link < c.index for m in heads[i + 1:])
        c.status = "chain" if followed and not passed else "orphaned"
    tampered = set()
    for m in heads:
        if m.link is not None and m.link >= 0:
            target = commits[m.link]
            if target.status == "mismatch" and not m.via_computed \
                    and m.prev_used == target.stored_head \
                    and not _looks_damaged(target, keys, vault_id):
                tampered.add(target)
    for c in tampered:
        c.status = "tampered"
    for c in commits:
        code = {"unverifiable": "commit_unverifiable", "mismatch": "commit_mismatch",
                "tampered": "commit_tampered", "orphaned": "commit_orphaned"}.get(c.status)
        if code:
            issues.append(Issue(code, c.frame.offset))

    trusted_ids = {kr.id: kr.epoch for kr in keys.trusted}
    floor = 0
    for c in commits:                                                # floor, stale, attestation
        c.floor, c.stale = floor, False
        c.attestation, c.signer = "", b""
        if not c.on_chain:
            continue
        if c.key.epoch < floor:
            c.stale = True
            issues.append(Issue("stale_epoch", c.frame.offset))
            continue
        _attestation(c, group_digest(c.covered), keys, vault_id, issues)
        if c.attested:
            floor = max([floor, c.key.epoch] + [
                trusted_ids[f.body[-BODY_HASH:]] for f in c.covered
                if f.kind == KIND_KEYRING and f.body[-BODY_HASH:] in trusted_ids
                and is_well_formed(f) and f.body_hash_ok()])


def _attestation(c: Commit, digest: bytes, keys, vault_id: bytes, issues: list) -> None:
    """§9.4. The synthetic nonce is checked for 96 zero bytes too: §9.2
    defines the nonce for both forms of A (see README, "What the text did
    not say")."""
    body = c.frame.body
    head, nonce, sealed = body[:32], body[32:56], body[56:168]
    att_key = subkey(c.key.key, SUBKEY_ATTESTATION)
    nonce_key = subkey(c.key.key, SUBKEY_NONCE)
    a = aead_open(att_key, nonce, sealed, vault_id + c.frame.fields + head)
    ok = a is not None and len(a) == 96 and nonce == attestation_nonce(nonce_key, head, a)
    if ok and a == NO_ATTESTATION:
        c.attestation = "unattested"
        return
    if ok:
        signer, sig = a[:32], a[32:]
        ok = (ed25519_verify(signer, b"quire-commit-v2" + vault_id + digest, sig)
              and signer in keys.signing_members())
    if not ok:
        c.attestation = "failed"
        issues.append(Issue("attestation_failed", c.frame.offset))
        return
    c.signer = a[:32]
    c.attestation = "removed" if c.signer in keys.removed_members() else "attested"
