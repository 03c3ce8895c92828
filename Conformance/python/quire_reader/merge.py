"""Merging two copies of a vault (merge.md §1, §3, §5), written from the
text, to check the merge vectors. It writes bytes in memory and never
touches a file.

merge(v, c, credential) -> Merged: whether V changes, the result's bytes,
the length of the common prefix.
"""

from __future__ import annotations

import copy
import os
import struct

import zstandard
from dataclasses import dataclass, field

from . import cbor
from .commits import (NO_ATTESTATION, ZERO_HEAD, attestation_ad, attestation_nonce, chain_head, group_digest, tip_head,
                      verify_commits)
from .crypto import (CTX_RK, SUBKEY_ATTESTATION, SUBKEY_NONCE, SUBKEY_RECORD, aead_seal, blake2b,
                     ed25519_from_seed, ed25519_sign, h256, kdf, key_commitment, subkey)
from .errors import QuireError
from .frames import (BODY_HASH, CHUNK_PUBLIC, COMMIT_BODY, HEADER_SIZE, KIND_CHUNK, KIND_COMMIT,
                     KIND_KEYRING, KIND_MANIFEST, KIND_PROFILE, KIND_REVISION, KIND_ROWS, MAGIC, NONCE, VERSION, Frame,
                     build_header, is_critical, is_well_formed, parse_header)
from .keyrings import (Credential, HeldKey, Keyring, SlotOpener, _may_sign, _parse_public, member_made,
                       open_keyrings)
from .payload import padme, unpad
from .reader import STALE, lay_out, open_view, release_keys
from .attachments import Chunk, blob_id, read_attachment
from .records import RecordError, open_sealed, record_payload
from .recovery import parse_recovery_code


def identity(f: Frame) -> bytes:
    """merge.md §1: frame header (16, as corrected) ‖ H256(whole body)."""
    return f.header + h256(f.body)


def clean_header(vault_id: bytes) -> bytes:
    copy = MAGIC + struct.pack("<HH", VERSION, 0) + vault_id
    copy += blake2b(copy, 16)[:4]
    return copy + copy


@dataclass
class Side:
    """One file of the merge, scanned and judged with the union of keys."""
    name: str                    # "v" or "c"
    data: bytes
    view: object
    keys: object = None          # its own key layer, when the credential opens it
    torn: bool = False


@dataclass
class _FileKeys:
    """What verify_commits and release_keys need, for one file: the key
    layer decided over the keyrings of both files (merge.md §3.2)."""
    union: object                # keyrings.Keys over V's and C's keyrings

    @property
    def held(self):
        return self.union.held

    @property
    def trusted(self):
        return self.union.trusted

    def candidates(self, key_id):
        return self.union.candidates(key_id)

    def signing_members(self):
        return self.union.signing_members()

    def removed_members(self):
        return self.union.removed_members()


@dataclass
class Block:
    side: str                    # "v" or "c"
    commit: object               # the source Commit
    frames: list                 # carried frames, source order
    keyrings: list = field(default_factory=list)    # Keyring (parsed public part) per keyring frame
    partial: bool = False        # re-sealed frames: the merging member attests it
    only_trusted_keyrings: bool = False   # every carried frame a keyring the union trusts
    link_position: int = 0       # its source commit's place in link order (§3.3)


@dataclass
class Merged:
    changed: bool
    data: bytes
    prefix: int
    left_out: list


def _signing_seed(cred: Credential) -> bytes:
    if cred.kind == "device":
        return cred.value
    if cred.kind == "recovery":
        return kdf(parse_recovery_code(cred.value), 2, CTX_RK)
    raise QuireError("operation_refused", "a passphrase (or escrow key) can read this vault "
                     "but not write to it; open it with a device or the recovery key")


def _union_keys(sides, cred: Credential, vault_id: bytes):
    """merge.md §3.2: trust decided once over every committed keyring frame
    of V and of C (one per id, parents before children, wherever they
    stand), with the keys the credential holds over that union."""
    frames = [(f, c.index) for s in sides for c in s.view.commits for f in c.covered
              if f.kind == KIND_KEYRING]
    return open_keyrings(frames, SlotOpener(cred), vault_id)


def _parsed_keyring(f: Frame) -> Keyring:
    kr = Keyring(f, 0, 0)
    _parse_public(kr)
    return kr


def _body_hash_fails(f: Frame, keys) -> bool:
    """format.md §4.2, merge.md §3.2: a plaintext frame's body hash; a
    sealed one's with the commitment of a held key of its key id (under no
    held key it cannot be checked). Not for a chunk."""
    if f.kind == KIND_CHUNK:
        return False
    if not f.sealed:
        return not f.body_hash_ok()
    candidates = keys.candidates(f.key_id)
    return bool(candidates) and not any(f.body_hash_ok(h.commit) for h in candidates)


def _carry_unopened(kr, union, vault_id):
    # R9: an unopened keyring is carried only when a member made it (the
    # §8.6 link check, removed or not) and its public epoch is at most one
    # above its highest trusted parent's (rule 5.4 from the public part).
    if not member_made(kr, union.trusted, vault_id):
        return False
    tr = {t.id: t for t in union.trusted}
    top = max((tr[p].epoch for p in kr.parents if p in tr), default=0)
    return kr.epoch <= top + 1


def _classify(side: Side, keys: _FileKeys, union, vault_id: bytes, skip_groups: int):
    """merge.md §3.2 for each committed group after the prefix: returns
    [Block] and the frames left out [(frame, reason)]."""
    verify_commits(side.view.commits, keys, vault_id, [])
    by_id = {kr.id: kr for kr in union.keyrings if not kr.damaged}
    blocks, left_out = [], []
    for c in side.view.commits[skip_groups:]:
        carried = []
        for f in c.covered:
            reason = None
            if f.malformed:
                reason = "malformed_frame"
            elif _body_hash_fails(f, keys):
                reason = "authentication_failed"
            elif f.kind == KIND_KEYRING:
                kr = by_id.get(f.body[-BODY_HASH:])
                if kr is not None and kr.pub is not None and f.key_id != kr.key_commit[:6]:
                    # a damaged copy, trusted or not: format.md 8.1, R13-1, R14-2
                    reason = "keyring_unauthenticated"
                elif kr is not None and kr.trusted:
                    pass                                  # whatever its commit
                elif kr is None or kr.pub is None or kr.opened or kr.fail_public:
                    reason = "keyring_unauthenticated"    # a decoy, a forgery
                elif not _carry_unopened(kr, union, vault_id):
                    reason = "keyring_unauthenticated"    # R9: no member made it, or an impossible epoch
                elif not c.verified and not (c.status == "unverifiable" and not c.stale
                                             and c.frame.key_id == kr.key_commit[:6]):
                    # unopened: from a verified commit, or from an
                    # unverifiable one under its own key that a member
                    # made (eighth review R8-3)
                    reason = _commit_reason(c)
            elif not c.verified:
                reason = _commit_reason(c)
            elif f.kind == KIND_CHUNK and keys.candidates(f.key_id):
                try:
                    open_sealed(f, keys.candidates(f.key_id), vault_id)
                except RecordError:
                    reason = "authentication_failed"
            elif f.kind in KIND_ROWS and f.kind != KIND_CHUNK and f.sealed \
                    and keys.candidates(f.key_id):
                allowed = release_keys(c, f, keys)
                try:
                    record_payload(f, allowed, vault_id)
                except RecordError as e:
                    reason = e.code
            if reason:
                left_out.append((f, reason))
            else:
                carried.append(f)
        block = Block(side.name, c, carried)
        block.keyrings = [_parsed_keyring(f) for f in carried if f.kind == KIND_KEYRING]
        block.only_trusted_keyrings = bool(carried) and all(
            f.kind == KIND_KEYRING and by_id.get(f.body[-BODY_HASH:]) is not None
            and by_id[f.body[-BODY_HASH:]].trusted for f in carried)
        blocks.append(block)
    return blocks, left_out


def link_positions(commits) -> dict:
    """merge.md §3.3: each commit's position in its file's link order — the
    order of the walk of format.md §9.3 (depth first over the link tree,
    siblings by stored head; the commits that link to no commit after, in
    file order), which moving whole groups does not change (fifth review,
    F3 and F8). Keyed by commit index; the commits must have been verified
    (verify_commits sets each one's walk position)."""
    return {c.index: c.walk_position for c in commits}


def _commit_reason(c) -> str:
    if c.stale:
        return "stale_epoch"
    return {"mismatch": "commit_mismatch", "tampered": "commit_tampered",
            "orphaned": "commit_orphaned"}.get(c.status, "commit_unverifiable")


def _unverified_records(side: Side, keys: _FileKeys, vault_id: bytes, skip_groups: int) -> list:
    """merge.md §3.1: the records of a tail that a reader would release
    unverified (their commit is a mismatch, tampered, orphaned or
    unverifiable)."""
    out = []
    for c in side.view.commits[skip_groups:]:
        if c.on_chain or c.stale:
            continue
        for f in c.covered:
            if f.malformed or f.kind not in KIND_ROWS or f.kind in (KIND_KEYRING, KIND_CHUNK, KIND_COMMIT):
                continue
            allowed = release_keys(c, f, keys)
            if allowed is STALE:
                continue
            try:
                record_payload(f, allowed, vault_id)
            except RecordError:
                continue
            out.append(f)
    return out


def _rank_across(v_commits, c_commits) -> None:
    """merge.md §3.2 "Standing in a merge" (twelfth review R12-3): a commit
    of V's tail and a commit of C's tail that store the same head and are
    verified in both files are one commit (the head covers its link, its
    group digest and its attestation, format.md §9.2), and rank, in the
    merge, by the higher of their two standings. Both are judged over the
    union's keyrings, so their attestations agree; only format.md §9.4
    step 5 can differ -- a removed member's commit is a link ancestor of
    its removal in the file that holds the removal, and not in a copy from
    before it. Without this, the removal's side ranked it 3 and the copy's
    2: the chunk repair (rule 1) did not apply to an in-place rewrite of
    it, the copy's version was placed after every vouched block and
    written unattested, and the rewritten chunk won."""
    twins = {}
    for c in v_commits:
        if c.verified:
            twins.setdefault(c.stored_head, c)
    for c in c_commits:
        twin = twins.get(c.stored_head)
        if twin is None or not c.verified or twin.attestation != c.attestation:
            continue
        if twin.before_removal or c.before_removal:
            twin.before_removal = c.before_removal = True


def _chunk_slot(f: Frame) -> tuple:
    """A chunk's (stream id, index), from its public header (format.md §7.2)."""
    return f.body[NONCE:NONCE + 16], struct.unpack_from("<I", f.body, NONCE + 16)[0]


def _side_stream(side: Side, fk, vault_id: bytes, stream: bytes) -> list:
    """The candidate chunks of `stream` in one whole file (format.md §7.4)."""
    out = []
    for c in side.view.commits:
        for f in c.covered:
            if f.kind == KIND_CHUNK and not f.malformed and f.body[NONCE:NONCE + 16] == stream:
                allowed = release_keys(c, f, fk)
                if allowed is not STALE:
                    out.append(Chunk(f, allowed, c.standing, vault_id))
    return out


def _repair_chunks(sides, sides_blocks, fkeys, vault_id: bytes):
    """merge.md §3.2 "Two versions of a chunk" (tenth review R10-1, with
    the standing of eleventh review R11-1). A slot (stream id, index) is in
    conflict when both tails carry chunks of it (under a held key) that are
    not the same frames and the two sides' differing chunks have the same
    standing (their source commits', as the merge ranks them: _rank_across,
    twelfth review R12-3); where the standings differ both are
    carried and format.md §7.4 takes the higher. The attachment is judged
    with one manifest frame of that stream that both tails carry, of at
    least that standing (the highest, then the first in V's tail); without
    one, both versions are carried. The side whose own file reads it whole
    keeps its chunks (V tried first, then C); the other side's differing
    chunks of that standing are left out. Another frame of a group that
    lost a chunk is written from the winning side instead only when the
    winning side carries it in a group of at least the losing group's
    standing. Returns ({side: identities not written from it},
    {side: [(frame, reason)]})."""
    tails = {}
    for s in sides:
        fk = fkeys[s.name]
        pool = {}
        for b in sides_blocks[s.name]:
            for f in b.frames:
                if f.kind == KIND_CHUNK and fk.candidates(f.key_id):
                    pool.setdefault(_chunk_slot(f), []).append((f, b.commit.standing))
        tails[s.name] = pool
    v_pool, c_pool = tails["v"], tails["c"]
    conflicts = {}                    # stream -> {slot: standing}
    for slot, v_frames in v_pool.items():
        c_frames = c_pool.get(slot)
        if not c_frames:
            continue
        v_ids = {identity(f) for f, _ in v_frames}
        c_ids = {identity(f) for f, _ in c_frames}
        v_top = max((st for f, st in v_frames if identity(f) not in c_ids), default=None)
        c_top = max((st for f, st in c_frames if identity(f) not in v_ids), default=None)
        if v_top is None or c_top is None or v_top != c_top:
            continue                  # R11-1: standings differ, §7.4 decides
        conflicts.setdefault(slot[0], {})[slot] = v_top
    dropped, left = {s.name: set() for s in sides}, {s.name: [] for s in sides}
    by_name = {s.name: s for s in sides}
    for stream in sorted(conflicts):
        level = max(conflicts[stream].values())
        # the manifests of the stream each tail carries: identity ->
        # (standing, position in V's tail, offset, value, blob key)
        found = {}
        for s in sides:
            fk = fkeys[s.name]
            position = 0
            for b in sides_blocks[s.name]:
                for f in b.frames:
                    position += 1
                    if f.kind != KIND_MANIFEST or not fk.candidates(f.key_id):
                        continue
                    try:
                        _, value, h = record_payload(f, release_keys(b.commit, f, fk), vault_id)
                    except RecordError:
                        continue
                    if value.get("stream") != stream:
                        continue
                    found.setdefault(s.name, {}).setdefault(
                        identity(f), (b.commit.standing, position, f.offset, value, h.blob_key))
        both = [(min(found["v"][i][0], found["c"][i][0]), -found["v"][i][1], i)
                for i in found.get("v", {}) if i in found.get("c", {})]
        both = [x for x in both if x[0] >= level]
        if not both:
            continue                  # no manifest both carry of that standing
        _, _, chosen = max(both)
        _, _, at, value, blob_key = found["v"][chosen]
        problems = {}
        for name in ("v", "c"):
            chunks = _side_stream(by_name[name], fkeys[name], vault_id, stream)
            _, problems[name] = read_attachment(at, value, chunks, vault_id, blob_key)
        winner = next((n for n in ("v", "c") if problems[n] is None), None)
        if winner is None:
            continue
        loser = "c" if winner == "v" else "v"
        keep = {identity(f) for slot in conflicts[stream] for f, _ in tails[winner][slot]}
        reason = problems[loser].code if problems[loser] else "chunk_duplicate"
        for slot, standing in conflicts[stream].items():
            for f, st in tails[loser][slot]:
                if identity(f) not in keep and st == standing:
                    dropped[loser].add(identity(f))
                    left[loser].append((f, reason))
    # The other frames of a group that lost a chunk are written with the
    # winning side's group where it carries them in a group of at least the
    # same standing, so that the stream's chunks stay in file order and no
    # frame moves into a group of lower standing (R11-1).
    carried = {n: {} for n in ("v", "c")}
    for n in ("v", "c"):
        for b in sides_blocks[n]:
            for f in b.frames:
                i = identity(f)
                carried[n][i] = max(carried[n].get(i, 0), b.commit.standing)
    for name, other in (("v", "c"), ("c", "v")):
        for b in sides_blocks[name]:
            if any(identity(f) in dropped[name] for f in b.frames):
                dropped[name].update(identity(f) for f in b.frames
                                     if carried[other].get(identity(f), 0) >= b.commit.standing)
    return dropped, left


def _common_prefix(v: bytes, v_view, c: bytes) -> tuple:
    """merge.md §3.2: (length, number of commit groups)."""
    if v[:HEADER_SIZE] != c[:HEADER_SIZE]:
        return 0, 0
    length, groups = HEADER_SIZE, 0
    for commit in v_view.commits:
        end = commit.frame.end
        if end > len(c) or v[:end] != c[:end]:
            break
        length, groups = end, groups + 1
    return length, groups


def _write_key(trusted: dict):
    """keys.md §5: the heads' highest epoch, the smallest key commitment."""
    named = {p for kr in trusted.values() for p in kr.parents}
    heads = [kr for kr in trusted.values() if kr.id not in named]
    top = max(kr.epoch for kr in heads)
    best = min((kr for kr in heads if kr.epoch == top), key=lambda kr: kr.key_commit)
    return best


def merge(v: bytes, c: bytes, cred: Credential) -> Merged:
    v_vid = parse_header(v, [])
    c_vid = parse_header(c, [])
    if v_vid != c_vid:
        raise QuireError("different_vaults")
    vault_id = v_vid
    seed = _signing_seed(cred)
    pk, sk = ed25519_from_seed(seed)

    opener = SlotOpener(cred)
    v_view, v, _ = open_view(v, opener, vault_id)            # its key error if it fails
    sv = Side("v", v, v_view, v_view.keys)
    try:
        c_view, c, _ = open_view(c, SlotOpener(cred), vault_id)
        sc = Side("c", c, c_view, c_view.keys)
    except QuireError:
        sc = Side("c", c, lay_out(c), None)
    for s in (sv, sc):
        s.torn = s.view.committed_end < len(s.data)
    # §3.1: removed or behind in V over V's keyrings alone, in C over the
    # keyrings of both files together (third review A8)
    if sv.keys.removed or sv.keys.behind:
        raise QuireError("removed_from_vault")

    union = _union_keys((sv, sc), cred, vault_id)
    if union.removed or union.behind:
        raise QuireError("removed_from_vault")
    trusted = {kr.id: kr for kr in union.trusted}
    members = union.signing_members()
    if pk not in members:
        raise QuireError("operation_refused", "the credential is not a member that may sign")
    held = union.held

    prefix, groups = _common_prefix(sv.data, sv.view, sc.data)
    c_groups = groups                 # the same bytes, so the same groups in C
    sides_blocks, left, fkeys = {}, {}, {}
    for s, skip in ((sv, groups), (sc, c_groups)):
        fk = _FileKeys(union)
        fkeys[s.name] = fk
        sides_blocks[s.name], left[s.name] = _classify(s, fk, union, vault_id, skip)
        linked = link_positions(s.view.commits)
        for b in sides_blocks[s.name]:
            b.link_position = linked[b.commit.index]
    # merge.md §3.2: a commit both tails hold ranks by the higher of its two
    # standings (twelfth review R12-3)
    _rank_across(sv.view.commits[groups:], sc.view.commits[c_groups:])

    # merge.md §3.1, format.md §4.3: a merge writes records, so it is refused
    # while a frame of an unknown critical kind sits in a commit a current
    # member attested, in V or in C, judged with the keyrings of both files
    # (eleventh review R11-3)
    for s in (sv, sc):
        for cm in s.view.commits:
            if cm.verified and cm.attested:
                for f in cm.covered:
                    if f.kind not in KIND_ROWS and is_critical(f.kind):
                        raise QuireError("unknown_critical_kind",
                                         "kind %#04x at %d of %s, in a verified and attested commit"
                                         % (f.kind, f.offset, "V" if s is sv else "C"))

    # merge.md §3.1: V's unverified records that C does not bring verified
    c_verified = {identity(f) for cm in sc.view.commits if cm.verified for f in cm.covered}
    lost = [f for f in _unverified_records(sv, fkeys["v"], vault_id, groups)
            if identity(f) not in c_verified]
    if lost:
        raise QuireError("merge_refused", "V's tail holds %d record(s) a reader releases "
                         "unverified, which C does not bring verified" % len(lost))

    prefix_ids = {identity(f) for cm in sv.view.commits[:groups] for f in cm.covered}

    # merge.md §3.2: of two versions of a chunk, the one with which its
    # attachment reads whole (tenth review R10-1)
    repaired, repair_left = _repair_chunks((sv, sc), sides_blocks, fkeys, vault_id)
    for side in ("v", "c"):
        left[side] += repair_left[side]

    write = trusted[_write_key(trusted).id]
    wkey = write.key

    # §3.3: a keyring carried unopened above the write key's epoch would be
    # committed under an older key than its own (stale, format.md §9.3)
    above = [kr.epoch for side in ("v", "c") for b in sides_blocks[side] for kr in b.keyrings
             if kr.pub is not None and kr.id not in trusted and kr.epoch > write.epoch]
    if above:
        raise QuireError("behind_newer_keyring", "an unopened keyring of epoch %d" % max(above))

    # merge.md §3.4: re-sealing into a rekeyed result
    rekeys = [kr.epoch for kr in trusted.values() if kr.reason == "rekey"]
    e_rk = max(rekeys) if rekeys else None
    epoch_of = {h.key_id: h.epoch for h in held}
    resealed_any = False
    if e_rk is not None:
        resealer = _Resealer(vault_id, held, write, e_rk, (sv, sc), fkeys)
        for side in ("v", "c"):
            kept = []
            for b in sides_blocks[side]:
                frames, partial, dropped = resealer.block(b, side)
                left[side] += dropped
                if partial:
                    resealed_any = True
                    b.partial = True
                b.frames = frames
                b.keyrings = [k for k in b.keyrings if k.frame in frames]
                kept.append(b)
            sides_blocks[side] = kept
    v_ids = prefix_ids | {identity(f) for b in sides_blocks["v"] for f in b.frames}
    c_carried = [f for b in sides_blocks["c"] for f in b.frames if identity(f) not in repaired["c"]]

    # merge.md §3.3: nothing to write
    if all(identity(f) in v_ids for f in c_carried) and not left["v"]:
        return Merged(False, v, prefix, left["c"])
    # the result is C's bytes
    if sv.view.committed_end == prefix and not left["c"] and not sc.torn \
            and not resealed_any:
        # every header after the prefix as corrected (§10.2), as the other
        # results carry them (trial 28)
        out = bytearray(c)
        for f in sc.view.committed:
            if isinstance(f, Frame) and f.repaired and f.offset >= prefix:
                out[f.offset:f.offset + len(f.header)] = f.header
        return Merged(True, bytes(out), prefix, [])

    out = bytearray(sv.data[:prefix] if prefix else clean_header(vault_id))
    written = set(prefix_ids)
    prefix_keyring_ids = {f.body[-BODY_HASH:] for cm in sv.view.commits[:groups]
                          for f in cm.covered if f.kind == KIND_KEYRING}
    all_keyring_ids = set()
    for s in (sv, sc):
        for cm in s.view.commits:
            for f in cm.covered:
                if f.kind == KIND_KEYRING:
                    all_keyring_ids.add(f.body[-BODY_HASH:])

    ring_epoch = {kr.id: kr.epoch for kr in union.keyrings if kr.pub is not None}
    # the result extends the prefix's chain tip (format.md §9.1): the last
    # commit of the prefix's own walk (§9.3), judged on copies so that the
    # verdicts on V's commits stay those of the whole file
    prev = tip_head([copy.copy(cm) for cm in sv.view.commits[:groups]], fkeys["v"], vault_id)

    def block_key(b):
        epochs = [0]
        for f in b.frames:
            if f.kind == KIND_KEYRING:
                kr = next(k for k in b.keyrings if k.frame is f)
                epochs.append(kr.epoch if kr.pub is not None else 0)
            elif f.sealed and f.key_id in epoch_of:
                epochs.append(epoch_of[f.key_id])
        # A removed member's commit before its removal (format.md §9.4
        # step 5) ranks as a current member's (eleventh review R11-2), in
        # either file for a commit both tails hold (_rank_across, R12-3).
        vouched = b.commit.attested or b.commit.before_removal or b.only_trusted_keyrings
        others = b.commit.attestation in ("attested", "removed") and b.commit.signer != pk
        return (0 if vouched else 1, max(epochs), 0 if others else 1, b.link_position,
                h256(b"".join(identity(f) for f in b.frames)))

    pending = sides_blocks["v"] + sides_blocks["c"]
    placed_keyrings = set(prefix_keyring_ids)
    while pending:
        def ready(b):
            seen = set()
            for f in b.frames:
                if f.kind == KIND_KEYRING:
                    kr = next(k for k in b.keyrings if k.frame is f)
                    for p in (kr.parents if kr.pub is not None else []):
                        if p not in placed_keyrings and p not in seen and p in all_keyring_ids:
                            return False
                    seen.add(f.body[-BODY_HASH:])
            return True
        candidates = [b for b in pending if ready(b)]
        if not candidates:
            raise QuireError("merge_not_verified", "no block is ready")
        b = min(candidates, key=block_key)
        pending.remove(b)
        frames, second = [], []
        for f in b.frames:
            i = identity(f)
            if i in written or i in repaired[b.side]:
                continue
            written.add(i)
            frames.append(f)
            if f.kind == KIND_KEYRING:
                second.append(f)
                placed_keyrings.add(f.body[-BODY_HASH:])
        for f in b.keyrings:
            placed_keyrings.add(f.frame.body[-BODY_HASH:])
        if not frames:
            continue
        frames += second
        digest = group_digest(frames)
        src = b.commit
        # §3.3: under the key of a keyring it writes that starts the write
        # key's epoch (the smallest key commitment among several), when
        # held; otherwise under the write key (eighth review R8-3)
        starting = [trusted[f.body[-BODY_HASH:]] for f in frames if f.kind == KIND_KEYRING
                    and f.body[-BODY_HASH:] in trusted]
        starting = [kr for kr in starting if kr.epoch == write.epoch and kr.key is not None
                    and all(ring_epoch.get(p, 0) < kr.epoch for p in kr.parents)]
        bkr = min(starting, key=lambda kr: kr.key_commit) if starting else write
        bkey, bcommit = bkr.key, bkr.key_commit
        att_key = subkey(bkey, SUBKEY_ATTESTATION)
        nonce_key = subkey(bkey, SUBKEY_NONCE)
        commit_header = build_header(KIND_COMMIT, 0, bcommit[:6], COMMIT_BODY)
        # §3.3: carried only whole, after the same head, under the same key
        # (the signature covers the key commitment, format.md §9.2);
        # otherwise the block is moved.
        if src.attestation in ("attested", "removed") and digest == group_digest(src.covered) \
                and src.prev_used == prev and src.key.commit == bcommit:
            a = src.signer + _source_signature(src, vault_id)       # whole, unchanged, in place
        elif ((src.attested or src.before_removal) and all(f.kind in KIND_ROWS for f in frames)) \
                or b.only_trusted_keyrings:
            # moved or partial: attested again by the merging member when a
            # current member attested it or it ranks so (format.md §9.4 step
            # 5, eleventh review R11-2), never over a frame of a kind it does
            # not know (R11-3, twelfth review R12-4)
            a = pk + ed25519_sign(sk, b"quire-commit-v2" + vault_id + bcommit + prev + digest)
        else:
            a = NO_ATTESTATION                                       # never laundered
        # §9.2: A is sealed first, over the head the commit extends and D;
        # the head then covers nonce ‖ sealed.
        ad = attestation_ad(vault_id, commit_header[:12], prev, digest)
        nonce = attestation_nonce(nonce_key, ad, a)
        sealed = aead_seal(att_key, nonce, a, ad)
        head = chain_head(bkey, vault_id, prev, digest, commit_header[:12], nonce + sealed)
        for f in frames:
            out += f.header + f.body
        out += commit_header + head + prev + nonce + sealed
        prev = head
    return Merged(True, bytes(out), prefix, left["v"] + left["c"])


def _source_signature(commit, vault_id: bytes) -> bytes:
    """The source commit's signature (its A is signer ‖ signature)."""
    from .crypto import aead_open
    body = commit.frame.body
    att_key = subkey(commit.key.key, SUBKEY_ATTESTATION)
    ad = attestation_ad(vault_id, commit.frame.fields, commit.prev_used, group_digest(commit.covered))
    a = aead_open(att_key, body[64:88], body[88:200], ad)
    return a[32:]


def pad(x: bytes) -> bytes:
    """format.md §6.2."""
    return x + b"\x80" + bytes(padme(len(x) + 1) - len(x) - 1)


class _Resealer:
    """merge.md §3.4 for the frames of each block."""

    def __init__(self, vault_id, held, write, e_rk, sides, fkeys):
        self.vid = vault_id
        self.e_rk = e_rk
        self.write = write
        self.wkey = write.key
        self.wblob = write.blob_key
        self.epoch_of = {h.key_id: h.epoch for h in held}
        self.held = held
        self.fkeys = fkeys
        self.sides = {s.name: s for s in sides}
        # replacements: what V and C already hold under e_rk or later
        self.payloads = set()            # (kind, payload) of records
        self.blobs = set()               # blob ids and aliases of manifests
        self.whole = {}                  # blob id under the write blob key -> stream id
        self.streams = {}                # side -> stream id -> [Chunk]
        for s in sides:
            fk = fkeys[s.name]
            pool = self.streams.setdefault(s.name, {})
            for c in s.view.commits:
                for f in c.covered:
                    if f.malformed or f.kind not in KIND_ROWS:
                        continue
                    allowed = release_keys(c, f, fk)
                    if f.kind == KIND_CHUNK:
                        if allowed is not STALE:
                            ch = Chunk(f, allowed, vault_id=self.vid)
                            pool.setdefault(ch.stream, []).append(ch)
                        continue
                    if not f.sealed or allowed is STALE or f.kind == KIND_KEYRING:
                        continue
                    if self.epoch_of.get(f.key_id, 0) < e_rk:
                        continue
                    try:
                        payload, value, h = record_payload(f, allowed, vault_id)
                    except RecordError:
                        continue
                    if f.kind == KIND_MANIFEST:
                        self.blobs.add(value.get("blob"))
                        self.blobs.update(value.get("aliases", []))
                        if h.blob_key == self.wblob:
                            self.whole.setdefault(value.get("blob"), (s.name, value))
                    else:
                        self.payloads.add((f.kind, payload))

    def below(self, f):
        return f.sealed and f.key_id in self.epoch_of and self.epoch_of[f.key_id] < self.e_rk

    def block(self, b, side):
        """Returns (frames, partial, left out)."""
        out, partial, dropped = [], False, []
        fk = self.fkeys[side]
        for f in b.frames:
            if f.kind not in KIND_ROWS or f.kind == KIND_KEYRING or not self.below(f):
                out.append(f)                        # kept as it is (unopened ones too)
                continue
            partial = True
            if f.kind == KIND_CHUNK:
                continue                             # never carried below e_rk
            allowed = release_keys(b.commit, f, fk)
            payload, value, h = record_payload(f, allowed, self.vid)
            if f.kind != KIND_MANIFEST:
                if (f.kind, payload) in self.payloads:
                    continue                         # its replacement is already there
                self.payloads.add((f.kind, payload))
                # merge.md §3.4: the payload sealed again as a new record:
                # compressed again when the frame was, and always for entry
                # revisions and profiles (format.md §6.1: one zstd frame that
                # declares its size), padded again.
                data = payload
                flags = f.flags
                if f.compressed or f.kind in (KIND_REVISION, KIND_PROFILE):
                    data = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(payload)
                    flags |= 0x02
                out.append(self._seal(f.kind, flags, pad(data)))
                continue
            if value.get("blob") in self.blobs:
                continue
            chunks = self.streams[side].get(value.get("stream"), [])
            content, problem = read_attachment(f.offset, value, chunks, self.vid, h.blob_key)
            if problem:
                dropped.append((f, problem.code))
                continue
            blob = blob_id(self.wblob, content)
            self.blobs.add(value.get("blob"))
            if blob in self.whole:
                stream = self.whole[blob][1].get("stream")
            else:
                stream = os.urandom(16)
                s = pad(content)
                n = -(-len(s) // 65536)
                for i in range(n):
                    part = s[65536 * i:65536 * (i + 1)]
                    out.append(self._seal_chunk(stream, i, i == n - 1, part))
            pairs = [(k, x) for k, x in value.pairs if k not in ("blob", "stream", "aliases")]
            aliases = ([value.get("blob")] + list(value.get("aliases", [])))[:64]
            pairs += [("blob", blob), ("stream", stream), ("aliases", aliases)]
            manifest = cbor.CMap(pairs)
            self.whole[blob] = (side, manifest)
            out.append(self._seal(KIND_MANIFEST, 0x01, pad(cbor.encode(manifest))))
        return out, partial, dropped

    def _seal(self, kind, flags, padded):
        """A record sealed again: same kind and flags, the write key's id, a
        fresh nonce, a new body hash over the write key's commitment and the
        body (merge.md §3.4, format.md §5.2)."""
        length = NONCE + len(padded) + 16 + BODY_HASH
        header = build_header(kind, flags, self.write.key_commit[:6], length)
        nonce = os.urandom(NONCE)
        ct = aead_seal(subkey(self.wkey, SUBKEY_RECORD), nonce, padded, self.vid + header[:12])
        body = nonce + ct
        return Frame(0, header, body + h256(self.write.key_commit + body))

    def _seal_chunk(self, stream, index, final, part):
        public = stream + struct.pack("<I", index) + bytes([1 if final else 0])
        length = NONCE + CHUNK_PUBLIC + len(part) + 16
        header = build_header(KIND_CHUNK, 0x01, self.write.key_commit[:6], length)
        nonce = os.urandom(NONCE)
        ct = aead_seal(subkey(self.wkey, SUBKEY_RECORD), nonce, part,
                       self.vid + header[:12] + public)
        return Frame(0, header, nonce + public + ct)
