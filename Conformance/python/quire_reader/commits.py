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
    # chain | orphaned | stale | mismatch | tampered | unverifiable (§9.3)
    status: str = ""
    key: object = None                   # the HeldKey its head verifies under
    stale: bool = False
    floor: int = 0
    # attested | removed (attested by a removed member) | unattested | failed
    attestation: str = ""
    signer: bytes = b""
    damaged_regions: list = field(default_factory=list)   # Damaged items in its group
    head_verifies: bool = False
    prev_used: bytes | None = None       # the head its own verified from (what A signs)
    computed: bytes = b""                # c_k, for a mismatch
    copy: bool = False                   # stores the head of an earlier commit whose head verifies
    bridge: bytes | None = None          # a mismatch: the head its repaired digest verifies from
    vouched: bool = False                # a mismatch a later commit links to by its stored head
    fork: bool = False                   # a member's fork: verified off the old line (§9.3)
    over_deletion: bool = False          # §9.3 step 5: a current member's, its link missing: tampered, yet verified
    line_floor: int = 0                  # the floor along its own line, before it (§9.3)
    line_after: int = 0                  # the same, with it
    linked_floor: int = 0                # its linked line: nothing taken through e (§9.3 step 2)
    linked_after: int = 0                # the same, with it
    raised: int = 0                      # what it raises the floor to, when verified and attested
    before_removal: bool = False         # attested by a removed member, a link ancestor of its removal (§9.4 step 5)
    walk_position: int = 0               # its place in the walk (§9.3); merge orders blocks by it

    @property
    def stored_head(self):
        return self.frame.body[:32]

    @property
    def stored_previous(self):
        """§9.2: the head it extends, body[32..<64]."""
        return self.frame.body[32:64]

    @property
    def on_chain(self):
        return self.status == "chain"

    @property
    def verified(self):
        """§9.3: on the chain (a stale commit never joins it)."""
        return self.status == "chain"

    @property
    def attested(self):
        """§9.4: attested by a member (not a removed one)."""
        return self.attestation == "attested"

    @property
    def member_standing(self):
        """§9.4 step 5: ranks with a current member's standing -- attested
        by a current member, or by a removed member before its removal (a
        link ancestor of a commit a current member attested that holds a
        keyring removing it, R11-2)."""
        return self.verified and (self.attested or self.before_removal)

    @property
    def standing(self):
        """merge.md §3.3, §5, format.md §7.3, §7.4: current-member standing
        (3), verified (2), unverified (1)."""
        return 3 if self.member_standing else 2 if self.verified else 1


def group_digest(frames: list) -> bytes:
    """§9.2: D_k = H256(summary_1 ‖ … ‖ summary_m)."""
    return h256(b"".join(f.summary for f in frames))


def chain_head(key: bytes, vault_id: bytes, prev: bytes, digest: bytes, commit_fields: bytes,
               stored_attestation: bytes) -> bytes:
    """§9.2: h_k = MAC256(commit key, "quire-chain-v3" ‖ vault id ‖ h_(k−1) ‖ D_k ‖
    fields ‖ nonce ‖ sealed), the last two the commit body's bytes 64..<200."""
    assert len(stored_attestation) == 136
    return mac256(subkey(key, SUBKEY_COMMIT),
                  b"quire-chain-v3" + vault_id + prev + digest + commit_fields + stored_attestation)


def attestation_ad(vault_id: bytes, commit_fields: bytes, prev: bytes, digest: bytes) -> bytes:
    """§9.2: the sealed attestation's ad = vault id ‖ fields ‖ h_(k−1) ‖ D_k."""
    return vault_id + commit_fields + prev + digest


def attestation_nonce(nonce_key: bytes, ad: bytes, a: bytes) -> bytes:
    """§9.2: BLAKE2b-192(key = nonce key, "quire-commit-nonce-v3" ‖ ad ‖ A)."""
    return blake2b(b"quire-commit-nonce-v3" + ad + a, 24, key=nonce_key)


def check_heads(commits: list, keys, vault_id: bytes) -> None:
    """§9.3 "Heads": whose head verifies, under which key and from which
    value; the computed head and repaired-digest bridge of a mismatch; copies."""
    for k, c in enumerate(commits):
        stored = c.stored_head
        digest = group_digest(c.covered)
        fields = c.frame.fields
        stored_a = c.frame.body[64:200]                              # §9.2: the head covers it
        candidates = keys.candidates(c.frame.key_id)
        c.head_verifies, c.prev_used, c.key = False, None, None
        c.copy, c.bridge, c.vouched, c.computed = False, None, False, b""
        if not candidates:                                           # 1
            c.status = "unverifiable"
            continue
        before = commits[k - 1].stored_head if k > 0 else ZERO_HEAD
        tries = [c.stored_previous] + ([before] if before != c.stored_previous else [])
        for h in candidates:                                         # 2
            for prev in tries:
                if chain_head(h.key, vault_id, prev, digest, fields, stored_a) == stored:
                    c.key, c.prev_used = h, prev
                    break
            if c.key is not None:
                break
        if c.key is not None:
            c.head_verifies = True
        else:                                                        # 3
            c.status = "mismatch"
            c.key = candidates[0]
            c.computed = chain_head(candidates[0].key, vault_id, c.stored_previous, digest, fields, stored_a)
            repaired = repaired_digest(c, keys)
            if repaired is not None:
                c.bridge = next((p for p in tries if any(
                    chain_head(h.key, vault_id, p, repaired, fields, stored_a) == stored for h in candidates)), None)
    # §9.3 "copy": of the commits whose heads verify and store one head, the
    # original is the first in file order that stands in its place — its
    # head verifies from h_0 or from a head that a commit before it in the
    # file holds: the stored head of a commit whose head verifies, or a
    # mismatch's computed head (a junk commit's stored head counts for
    # nothing: fifth review F6) — else the first.
    def held_before(value, k):
        return value == ZERO_HEAD or any(
            (b.head_verifies and b.stored_head == value) or (b.computed and b.computed == value) for b in commits[:k])
    # Where commits store one head the original is chosen first among those
    # a current member attested (§9.4), then by the rule above (fifth review
    # F1). Since the head covers the attestation bytes (sixth review R6-1)
    # such commits carry one attestation, so this changes no choice (§9.3
    # "Copies": a reader MAY skip it).
    sharing = {}
    for c in commits:
        if c.head_verifies:
            sharing.setdefault(c.stored_head, []).append(c)
    originals = {}
    for head, cs in sharing.items():
        if len(cs) > 1:
            attested = []
            for c in cs:
                _attestation(c, group_digest(c.covered), keys, vault_id, None)
                if c.attested:
                    attested.append(c)
                c.attestation, c.signer = "", b""
            cs = attested or cs
        originals[head] = next((c for c in cs if held_before(c.prev_used, c.index)), cs[0])
    for c in commits:
        c.copy = c.head_verifies and originals[c.stored_head] is not c


def _resolve(c: Commit, commits: list):
    """§9.3 "Links": what the value c's head verified from names, anywhere
    in the file (forward too). Returns ("start",), ("commit", j) (j the
    original that stores it), ("none",) (shows nothing) or ("missing",)."""
    v = c.prev_used

    def verified_with(value):
        if value == ZERO_HEAD:
            return ("start",)
        j = next((b for b in commits if b.head_verifies and not b.copy and b.stored_head == value), None)
        return ("commit", j) if j is not None else ("none",)

    if v == ZERO_HEAD:
        return ("start",)
    hit = verified_with(v)
    if hit[0] == "commit":
        return hit
    m = next((b for b in commits if not b.head_verifies and b.stored_head == v), None)
    if m is not None:
        if m.status == "unverifiable":
            return ("none",)
        m.vouched = True
        return verified_with(m.bridge) if m.bridge is not None else ("none",)
    m = next((b for b in commits if b.status == "mismatch" and b.computed != b.stored_head
              and b.computed == v), None)
    if m is not None:
        return verified_with(m.stored_previous)
    return ("missing",)


def _link_order(commits: list, links: dict, tip_line=frozenset()) -> list:
    """§9.3 "The walk": depth first over the link tree, each commit followed
    by its subtree, the children of a commit (and of the start) in ascending
    stored-head order: first the start's subtree, then each commit that
    links to no commit (its link shows nothing or is missing; a copy, a
    mismatch, an unverifiable commit), in file order, with its subtree.
    Iterative (an explicit stack): the depth is hostile input. Commits never
    reached (a cycle, which no key holder can make) are left out: orphaned.
    With `tip_line` (commit indices), merge.md §3.3's link order: of the
    children of one commit, the one in `tip_line` comes first."""
    children = {}
    for c in commits:
        link = links.get(c.index)
        if link is not None and link[0] in ("commit", "start"):
            parent = link[1].index if link[0] == "commit" else "start"
            children.setdefault(parent, []).append(c)
    for kids in children.values():
        kids.sort(key=lambda c: (c.index not in tip_line, c.stored_head))
    order, seen = [], set()

    def descend(root, node):
        stack = [node] if root is None else list(reversed(children.get(root, [])))
        while stack:
            c = stack.pop()
            order.append(c)
            seen.add(c.index)
            stack.extend(reversed(children.get(c.index, [])))

    descend("start", None)
    for c in commits:
        link = links.get(c.index)
        if c.index in seen or (link is not None and link[0] in ("commit", "start")):
            continue
        descend(None, c)
    return order


def tip_head(commits: list, keys, vault_id: bytes) -> bytes:
    """§9.1: the stored head of the last commit on the chain (in link
    order), or h_0."""
    chain = verify_commits(commits, keys, vault_id, [])
    return chain[-1].stored_head if chain else ZERO_HEAD


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


def _own_keyring_epoch(c, trusted_keys) -> int:
    """§9.3: the highest epoch of a trusted keyring with an intact copy in
    c's group (0 when none); a copy under another key id is damaged (§8.1)."""
    return max([0] + [
        trusted_keys[f.body[-BODY_HASH:]][0] for f in c.covered
        if f.kind == KIND_KEYRING and f.body[-BODY_HASH:] in trusted_keys
        and f.key_id == trusted_keys[f.body[-BODY_HASH:]][1][:6]
        and is_well_formed(f) and f.body_hash_ok()])


def _own_key_epoch(c, trusted_keys):
    """§9.3 "The epoch of a commit's key": the highest epoch of a trusted
    keyring of c's own key with an intact copy in c's group, or None."""
    found = [trusted_keys[f.body[-BODY_HASH:]][0] for f in c.covered
             if f.kind == KIND_KEYRING and f.body[-BODY_HASH:] in trusted_keys
             and trusted_keys[f.body[-BODY_HASH:]][1] == c.key.commit
             and f.key_id == c.key.commit[:6]
             and is_well_formed(f) and f.body_hash_ok()]
    return max(found) if found else None


def verify_commits(commits: list, keys, vault_id: bytes, issues: list) -> list:
    """§9.3: heads, links, then in link order the chain, floor, stale and
    attestation; last, tampered mismatches. Returns the chain."""
    check_heads(commits, keys, vault_id)
    trusted_keys = {kr.id: (kr.epoch, kr.key_commit) for kr in keys.trusted}
    chain: list = []                     # the commits on the chain, in order
    floor = 0
    links = {c.index: _resolve(c, commits) for c in commits if c.head_verifies and not c.copy}
    visited = set()

    def member_fork(c):
        """§9.3 "A member's fork": attested by a current member."""
        _attestation(c, group_digest(c.covered), keys, vault_id, None)
        if c.attested:
            c.fork = True
            return True
        c.attestation, c.signer = "", b""
        return False

    for c in commits:
        c.stale, c.fork, c.over_deletion = False, False, False
        c.attestation, c.signer = "", b""
        if c.head_verifies and not c.copy and links[c.index][0] == "commit":
            c.status = "orphaned"                # reached only through a cycle (§9.3)
    walk = _link_order(commits, links)
    _set_positions(commits, walk)
    for c in walk:
        visited.add(c.index)
        c.attestation, c.signer = "", b""
        if not c.head_verifies:
            continue                                                 # 1
        if c.copy:
            c.status = "orphaned"
            continue
        link = links[c.index]
        # §9.3: the floor along its own line, through the commit it links
        # to (showing nothing: the last commit on the chain a member
        # attested, e), and its linked line: the same, nothing through e.
        if link[0] == "commit":
            c.line_floor, c.linked_floor = link[1].line_after, link[1].linked_after
        elif link[0] == "start":
            c.line_floor, c.linked_floor = 0, 0
        else:
            c.line_floor = next((p.line_after for p in reversed(chain) if _member_attested(p, keys, vault_id)), 0)
            c.linked_floor = 0
        c.line_after, c.linked_after = c.line_floor, c.linked_floor
        # §9.3 "The epoch of a commit's key" (ninth review R9-4): that of a
        # trusted keyring of its key in its own group, else the one the
        # commit it links to under the same key took, else the key's (§5.1).
        own = _own_key_epoch(c, trusted_keys)
        if own is not None:
            c.key_epoch = own
        elif link[0] == "commit" and link[1].key.commit == c.key.commit:
            c.key_epoch = link[1].key_epoch
        else:
            c.key_epoch = c.key.epoch
        # 2, its own group: a commit holding a trusted keyring is made under
        # a key of at least that keyring's epoch (seventh review R7-3); no
        # attestation exempts one under an older key.
        if c.key_epoch < _own_keyring_epoch(c, trusted_keys):
            c.status, c.stale = "stale", True
            continue
        if c.key_epoch < c.line_floor:                               # 2
            # A commit a current member attested is stale only below its
            # linked line (sixth review R6-2, Part 2 item 4).
            member = False
            if c.key_epoch >= c.linked_floor:
                _attestation(c, group_digest(c.covered), keys, vault_id, None)
                member = c.attested
                if not member:
                    c.attestation, c.signer = "", b""
            if not member:
                c.status, c.stale = "stale", True
                continue
        fork_base = None
        if link[0] == "commit":
            e = link[1]
            if e.status not in ("chain", "tampered") or e not in chain:   # 3
                if not member_fork(c):           # the walk reached e first
                    c.status = "orphaned"
                    continue
                fork_base = 0                    # the chain goes on from c alone
            base = chain.index(e) + 1 if fork_base is None else 0
        elif link[0] == "start":
            base = 0
        else:                                                        # shows nothing
            base = next((i + 1 for i in range(len(chain) - 1, -1, -1) if _member_attested(chain[i], keys, vault_id)), 0)
        passed = chain[base:]
        if fork_base is None and any(_member_attested(p, keys, vault_id) for p in passed):  # 4: a fork
            if not member_fork(c):
                c.status = "orphaned"
                continue
            fork_base = base
        if fork_base is not None:                # a member's fork: the others keep their verdicts
            del chain[fork_base:]
            passed = []
        for p in passed:
            if p.status != "tampered":
                p.status = "orphaned"
            p.attestation, p.signer = "", b""
        del chain[base:]
        chain.append(c)
        if link[0] == "missing":                                     # 5
            # A current member's commit keeps its group and its signature:
            # tampered (vault level), yet verified and attested (fifth review F4).
            _attestation(c, group_digest(c.covered), keys, vault_id, None)
            if not c.attested:
                c.attestation, c.signer = "", b""
                c.status = "tampered"
                continue
            c.over_deletion = True
        c.status = "chain"
        if not c.fork and not c.over_deletion:
            _attestation(c, group_digest(c.covered), keys, vault_id, None)
        if c.attested:
            c.raised = max(c.key_epoch, _own_keyring_epoch(c, trusted_keys))
            c.line_after = max(c.line_floor, c.raised)
            c.linked_after = max(c.linked_floor, c.raised)
    # floor_k: over the commits before k in the file that are verified and
    # attested by a current member; it decides which keys open the records
    # of a commit that is not verified.
    for c in commits:
        c.floor = floor
        if c.status == "chain" and c.attested:
            floor = max(floor, c.raised)
    for c in commits:
        if c.status == "mismatch" and c.vouched and not _looks_damaged(c, keys, vault_id):
            c.status = "tampered"
    for c in commits:
        if c.prev_used is not None and c.prev_used != c.stored_previous:
            issues.append(Issue("frame_repaired", c.frame.offset))  # §9.3 step 2
        code = {"unverifiable": "commit_unverifiable", "mismatch": "commit_mismatch",
                "tampered": "commit_tampered", "orphaned": "commit_orphaned",
                "stale": "stale_epoch"}.get(c.status)
        if code:
            issues.append(Issue(code, c.frame.offset))
        if c.status == "chain" and c.over_deletion:
            issues.append(Issue("commit_tampered", c.frame.offset))
        if c.status == "chain" and c.fork:
            issues.append(Issue("commit_fork", c.frame.offset))
        if c.status == "chain" and c.attestation == "failed":
            issues.append(Issue("attestation_failed", c.frame.offset))
    _mark_before_removal(commits, links, keys)
    if chain:
        # merge.md §3.3: merge's link order puts first, of the children of
        # one commit, the one on the line to the chain's tip (sixth review
        # R6-5), so the line writers extend stays in place.
        tip_line, c = set(), chain[-1]
        while c is not None and c.index not in tip_line:
            tip_line.add(c.index)
            link = links.get(c.index)
            c = link[1] if link is not None and link[0] == "commit" else None
        _set_positions(commits, _link_order(commits, links, frozenset(tip_line)))
    return chain


def _set_positions(commits: list, walk: list) -> None:
    """Each commit's walk_position: its place in `walk`; the commits never
    reached (a cycle) after it, in file order."""
    for i, c in enumerate(walk):
        c.walk_position = i
    reached = {c.index for c in walk}
    for c in commits:
        if c.index not in reached:
            c.walk_position = len(reached)
            reached.add(c.index)


def _mark_before_removal(commits: list, links: dict, keys) -> None:
    """§9.4 step 5 (eleventh review R11-2): a commit attested by a removed
    member ranks with a current member's standing when it is a link ancestor
    of a commit a current member attested whose group holds an intact copy
    of a trusted keyring listing that member in `removed` (an intact copy:
    one with its own key id, §8.1, fourteenth review R14-3). Each such commit
    walks up its links (one link per commit: a path), stopping at a commit
    already walked for the same removed keys, so each commit is looked at
    once per distinct `removed` set."""
    removing = {kr.id: frozenset(kr.removed_keys()) for kr in keys.trusted if kr.removed_keys()}
    own_key_id = {kr.id: kr.key_commit[:6] for kr in keys.trusted}
    for c in commits:
        c.before_removal = False
    if not removing:
        return
    walked: dict = {}                                # commit index -> removed sets walked from it
    # Descendants first (the walk is depth first): a removal a removed
    # member wrote counts when it ranks as a current member's itself.
    for r in sorted(commits, key=lambda c: -c.walk_position):
        if not (r.status == "chain" and (r.attested or r.before_removal)):
            continue
        for f in r.covered:
            removed = removing.get(f.body[-BODY_HASH:]) if f.kind == KIND_KEYRING and is_well_formed(f) \
                and f.body_hash_ok() and f.key_id == own_key_id.get(f.body[-BODY_HASH:]) else None
            if not removed:
                continue
            link = links.get(r.index)
            while link is not None and link[0] == "commit":
                a = link[1]
                if removed in walked.setdefault(a.index, set()):
                    break
                walked[a.index].add(removed)
                if a.status == "chain" and a.attestation == "removed" and a.signer in removed:
                    a.before_removal = True          # (walk_position: the merge's link order, a depth-first order too)
                link = links.get(a.index)


def _member_attested(c: Commit, keys, vault_id: bytes) -> bool:
    """§9.3: a verified commit on the chain attested by a member."""
    return c.status == "chain" and c.attested


def _attestation(c: Commit, digest: bytes, keys, vault_id: bytes, issues: list) -> None:
    """§9.4. The synthetic nonce is checked for 96 zero bytes too: §9.2
    defines the nonce for both forms of A (see README, "What the text did
    not say")."""
    body = c.frame.body
    nonce, sealed = body[64:88], body[88:200]
    att_key = subkey(c.key.key, SUBKEY_ATTESTATION)
    nonce_key = subkey(c.key.key, SUBKEY_NONCE)
    # §9.2: the box is sealed over the head the commit extends (the value its
    # head verified from) and the group digest; the head covers the box.
    ad = attestation_ad(vault_id, c.frame.fields, c.prev_used, digest)
    a = aead_open(att_key, nonce, sealed, ad)
    ok = a is not None and len(a) == 96 and nonce == attestation_nonce(nonce_key, ad, a)
    if ok and a == NO_ATTESTATION:
        c.attestation = "unattested"
        return
    if ok:
        signer, sig = a[:32], a[32:]
        # §9.2: the signature covers the commitment of the key the commit
        # frame is sealed under (the key its head verified with).
        ok = (ed25519_verify(signer, b"quire-commit-v2" + vault_id + c.key.commit + c.prev_used + digest, sig)
              and signer in keys.signing_members())
    if not ok:
        c.attestation = "failed"
        return
    c.signer = a[:32]
    c.attestation = "removed" if c.signer in keys.removed_members() else "attested"
