"""The whole read of a vault: format.md §5.2, §7, §9 and §10.3.

- open_sealed, record_payload: §5.2 sealed frames, §6 payloads (payload.py),
  records.md schemas (schema.py);
- verify_commits, release_allowed: §9.2 the chain, §9.3 verifying commits
  and which records are released, verified or unverified;
- check_stream, read_attachment: §7.4 reading an attachment (§7.1 chunking,
  §7.3 blob id);
- lay_out: §10.3 the committed end, §4.3 critical kinds, §9.2 commits, §8
  keyrings (keyrings.py);
- recover_commit: §10.3 commit recovery (a last commit header rebuilt from
  its MAC);
- read_vault: §10 scanning (frames.py), then all of the above, in the §8.5
  error order.

Entry point: read_vault(data, credential) -> Result, or raises QuireError.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from . import cbor, schema
from .crypto import aead_open, blake2b, kdf
from .errors import Issue, QuireError
from .frames import (CHUNK_PUBLIC, EMPTY_FINAL_CHUNK_BODY, HEADER_SIZE, KIND_CHUNK,
                     KIND_COMMIT, KIND_KEYRING, KIND_MANIFEST, KIND_PROFILE,
                     KIND_REVISION, KNOWN_KINDS, Damaged, Frame, is_commit_boundary,
                     is_well_formed, parse_header, scan)
from .keyrings import CTX_V1, Credential, Keys, KeyStore, SlotOpener, open_keyrings
from .payload import PayloadError, decompress, padme, unpad

__all__ = ["Credential", "Result", "Released", "read_vault"]

RECORD_KINDS = (KIND_REVISION, KIND_MANIFEST, KIND_PROFILE)

CHUNK_SIZE = 65536
NONFINAL_CHUNK_BODY = 24 + CHUNK_PUBLIC + CHUNK_SIZE + 16            # 65,597
MAX_FINAL_CHUNK_BODY = 24 + CHUNK_PUBLIC + padme(CHUNK_SIZE + 1) + 16  # 67,645
COMMIT_FRAME = 12 + 16                                               # §4.3: header + MAC


# ---------------------------------------------------------------------------
# §5 sealed frames, §6 payload, records.md schemas
# ---------------------------------------------------------------------------

class RecordError(Exception):
    def __init__(self, code, detail=""):
        super().__init__(code + (": " + detail if detail else ""))
        self.code = code


def open_sealed(f: Frame, held: KeyStore, vault_id: bytes, public_len: int = 0) -> bytes:
    """§5.2: returns the plaintext (still padded)."""
    keys = held.get(f.epoch)
    if not keys:
        raise RecordError("unknown_epoch")
    body = f.body
    nonce, public = body[:24], body[24:24 + public_len]
    ad = vault_id + f.fields + public
    for k in keys:
        pt = aead_open(kdf(k, 1, CTX_V1), nonce, body[24 + public_len:], ad)
        if pt is not None:
            return pt
    raise RecordError("authentication_failed")


def record_payload(f: Frame, held: KeyStore, vault_id: bytes):
    """Authenticates and decodes one record; returns (payload, decoded value)."""
    if f.sealed:
        pt = open_sealed(f, held, vault_id)
        try:
            payload = unpad(pt)
            if f.compressed:
                payload = decompress(payload)
        except PayloadError as e:
            raise RecordError(e.code, str(e))
    else:
        # §9.3 still speaks of releasing plaintext records, but every record
        # kind version 1 releases (RECORD_KINDS) is sealed, and a frame of one
        # that is not breaks its row (§4.3). Kept for the text; not reached.
        if blake2b(f.body[:-16], 16) != f.trailer:
            raise RecordError("authentication_failed", "checksum")
        payload = f.body[:-16]
    try:
        value = cbor.decode(payload)
        schema.check_record(f.kind, value)
    except cbor.CBORError as e:
        raise RecordError("malformed_record", str(e))
    except schema.SchemaError as e:
        raise RecordError(e.code, str(e))
    return payload, value


# ---------------------------------------------------------------------------
# §9 commits and release
# ---------------------------------------------------------------------------

@dataclass
class Commit:
    frame: Frame
    covered: list
    status: str = ""        # verified | mismatch | unverifiable
    stale: bool = False
    floor: int = 0


def chain_mac(key: bytes, vault_id: bytes, prev: bytes, covered: list, commit: Frame) -> bytes:
    """§9.2: h_k for the frames `covered` (their summaries: corrected header
    and trailer), the previous head `prev` and the commit frame's header fields."""
    d = blake2b(b"".join(f.header + f.trailer for f in covered), 32)
    return blake2b(vault_id + prev + d + commit.fields, 16, key=kdf(key, 2, CTX_V1))


def verify_commits(commits: list, held: KeyStore, trusted: list, vault_id: bytes, issues: list):
    """§9.3 steps 1–4."""
    s_prev = c_prev = bytes(16)
    for k, c in enumerate(commits):
        c.floor = max([kr.epoch for kr in trusted if kr.commit_index < k], default=0)
        keys = held.get(c.frame.epoch)
        stored = c.frame.body
        if not keys:
            c.status = "unverifiable"
            issues.append(Issue("commit_unverifiable", c.frame.offset))
            c_k = s_prev
        else:
            c_k = None
            for key in keys:
                for prev in (s_prev, c_prev):
                    if chain_mac(key, vault_id, prev, c.covered, c.frame) == stored:
                        c_k = stored
                        break
                if c_k is not None:
                    break
            if c_k is not None:
                c.status = "verified"
                if c.frame.epoch < c.floor:
                    c.stale = True
                    issues.append(Issue("stale_epoch", c.frame.offset))
            else:
                c.status = "mismatch"
                issues.append(Issue("commit_mismatch", c.frame.offset))
                c_k = chain_mac(keys[0], vault_id, s_prev, c.covered, c.frame)
        s_prev, c_prev = stored, c_k


def release_allowed(c: Commit, f: Frame):
    """§9.3, the commit condition. Returns None (refused: stale_epoch),
    True (released as verified) or False (released as unverified)."""
    if c.status == "verified":
        return None if c.stale else True
    if not f.sealed or f.epoch >= c.floor:
        return False
    return None


# ---------------------------------------------------------------------------
# §7 attachments
# ---------------------------------------------------------------------------

def chunk_public(f: Frame):
    pub = f.body[24:24 + CHUNK_PUBLIC]
    return pub[:16], struct.unpack_from("<I", pub, 16)[0], pub[20]


def chunk_count(size: int) -> int:
    return 1 if size == 0 else -(-size // CHUNK_SIZE)


def check_stream(manifest: Frame, value, frames: list) -> Issue | None:
    """§7.4 rules 1–6, in order, from public headers and lengths alone."""
    at = manifest.offset
    n = len(frames)
    idx = [chunk_public(f)[1] for f in frames]
    finals = [chunk_public(f)[2] for f in frames]
    if len(set(idx)) != n:                                          # 1
        return Issue("chunk_duplicate", at)
    if set(idx) != set(range(n)) or n == 0:                         # 2
        return Issue("chunk_missing", at)
    if idx != sorted(idx):                                          # 3
        return Issue("chunk_out_of_order", at)
    for f, i, fin in zip(frames, idx, finals):                      # 4
        if not fin and f.length != NONFINAL_CHUNK_BODY:
            return Issue("chunk_noncanonical", at)
        if fin and f.length > MAX_FINAL_CHUNK_BODY:
            return Issue("chunk_noncanonical", at)
        if fin and f.length == EMPTY_FINAL_CHUNK_BODY and i != 0:
            return Issue("chunk_noncanonical", at)
    if any(finals[:-1]):                                            # 5
        return Issue("chunk_final_repeated", at)
    if not finals[-1]:
        return Issue("chunk_final_missing", at)
    if n != chunk_count(value.get("size", 0)):                      # 6
        return Issue("blob_size_mismatch", at)
    return None


def read_attachment(manifest: Frame, value, frames: list, held: KeyStore, vault_id: bytes,
                    blob_key: bytes):
    """§7.4 for one released manifest. Returns (content or None, its first
    failure or None). A failure of one chunk (it does not authenticate, its
    epoch has no key, its padding is bad) is reported at that chunk; every
    other failure at the manifest."""
    problem = check_stream(manifest, value, frames)
    if problem:
        return None, problem
    parts = []
    for f in frames:
        _, i, final = chunk_public(f)
        try:
            pt = open_sealed(f, held, vault_id, CHUNK_PUBLIC)
            if final:
                pt = unpad(pt)
        except (RecordError, PayloadError) as e:
            return None, Issue(e.code, f.offset)
        if final and (len(pt) > CHUNK_SIZE or (len(pt) == 0 and i != 0)):
            # §7.4: found after decryption, yet reported at the manifest.
            return None, Issue("chunk_noncanonical", manifest.offset)
        parts.append(pt)
    content = b"".join(parts)
    if len(content) != value.get("size", 0):
        return None, Issue("blob_size_mismatch", manifest.offset)
    if blake2b(content, 32, key=blob_key) != value.get("blob"):
        return None, Issue("blob_id_mismatch", manifest.offset)
    return content, None


# ---------------------------------------------------------------------------
# The whole read
# ---------------------------------------------------------------------------

@dataclass
class Released:
    kind: int
    payload: bytes
    offset: int
    verified: bool          # False: released from a mismatching or unverifiable commit


@dataclass
class Result:
    issues: list = field(default_factory=list)
    records: list = field(default_factory=list)        # [Released], file order
    attachments: list = field(default_factory=list)    # [(blob id, content)]
    trusted_keyrings: list = field(default_factory=list)  # [(offset, epoch, id)], file order


@dataclass
class Layout:
    """The committed part of the scanned items and what the key layer made of
    it (§10.3 committed end, §9.2 commits, §8 keyrings)."""
    items: list                 # every scanned item, file order
    n_committed: int            # items[:n_committed] are committed
    committed_end: int
    commits: list               # [Commit]
    keys: Keys
    issues: list                # frame issues, then the key layer's


def lay_out(items: list, opener: SlotOpener, vault_id: bytes) -> Layout:
    """§10.3 the committed end, §4.3 critical kinds, §9.2 commits and their
    frames' issues, then §8 the key layer over the committed keyring frames.
    Raises QuireError in the §8.5 order (critical kinds, then keyrings)."""
    for it in items:
        if isinstance(it, Frame):
            it.malformed = not is_well_formed(it)
    committed_end, n_committed = HEADER_SIZE, 0
    for i, it in enumerate(items):
        if isinstance(it, Frame) and is_commit_boundary(it):
            committed_end, n_committed = it.end, i + 1
    committed = items[:n_committed]

    for it in committed:                                 # §4.3
        if isinstance(it, Frame) and it.kind < 0x80 and it.kind not in KNOWN_KINDS:
            raise QuireError("unknown_critical_kind", "kind %#x at %d" % (it.kind, it.offset))

    issues: list[Issue] = []
    commits: list[Commit] = []
    group: list[Frame] = []
    for it in committed:
        if isinstance(it, Damaged):
            issues.append(Issue("frame_damaged", it.offset))
            continue
        if it.repaired:
            issues.append(Issue("frame_repaired", it.offset))
        if it.malformed and it.kind != KIND_KEYRING:
            # §4.3: a keyring frame that breaks its row is reported by the
            # key layer (malformed_keyring or keyring_copy_damaged, §8.1).
            issues.append(Issue("malformed_frame", it.offset))
        if is_commit_boundary(it):
            for f in group:
                f.commit_index = len(commits)
            commits.append(Commit(it, group))
            group = []
        else:
            group.append(it)

    # §8.4 rule 1: a keyring frame that breaks its kind's row is still a
    # keyring frame (so not no_keyring), and a malformed one.
    keyring_frames = [f for c in commits for f in c.covered if f.kind == KIND_KEYRING]
    keys = open_keyrings(keyring_frames, opener, vault_id)
    issues.extend(keys.issues)
    return Layout(items, n_committed, committed_end, commits, keys, issues)


def recover_commit(data: bytes, layout: Layout, vault_id: bytes) -> list | None:
    """§10.3 commit recovery. When the file ends with uncommitted frames
    followed by exactly 28 bytes that are not a well-formed commit frame,
    and for some epoch held (highest first, each key) the last 16 bytes are
    h_k over those frames, with the commit header rebuilt for that epoch and
    h_(k-1) the last commit's stored head, returns the items with those 28
    bytes as the rebuilt commit frame (marked repaired: frame_repaired at its
    offset). Otherwise returns None and the tail stays a torn tail.

    "Uncommitted frames" is read as: the tail, from the committed end up to
    the 28 bytes, is covered exactly by frames (repaired ones with their
    corrected headers, §9.2), with no damaged region, and there is at least
    one such frame (§10.3: "one or more frames")."""
    at = len(data) - COMMIT_FRAME
    if at < layout.committed_end:
        return None
    frames, pos = [], layout.committed_end
    for it in layout.items[layout.n_committed:]:
        if it.offset >= at:
            # The 28 bytes were read as a frame: not a well-formed commit,
            # or the committed end would be the end of the file.
            break
        if not isinstance(it, Frame) or it.offset != pos:
            return None
        frames.append(it)
        pos = it.end
    if pos != at or not frames:
        return None
    prev = layout.commits[-1].frame.body if layout.commits else bytes(16)
    mac = data[at + 12:]
    held = layout.keys.held
    for epoch in sorted(held.keys, reverse=True):
        fields = struct.pack("<BBHI", KIND_COMMIT, 0, epoch, 16)
        commit = Frame(at, fields + blake2b(fields, 16)[:4], mac, repaired=True)
        for key in held.get(epoch):
            if chain_mac(key, vault_id, prev, frames, commit) == mac:
                return layout.items[:layout.n_committed] + frames + [commit]
    return None


def read_vault(data: bytes, cred: Credential) -> Result:
    """The whole read. §8.5 error order: credential syntax, header (§3),
    unknown critical kind (§4.3), keyrings (§8.5). Then §10.3 commit recovery
    (which, when it succeeds, makes the key layer look again), the torn tail,
    §9.3 commits and release, §7.4 attachments."""
    opener = SlotOpener(cred)                            # recovery_code_invalid
    issues: list[Issue] = []
    vault_id = parse_header(data, issues)
    items, _ = scan(data)
    layout = lay_out(items, opener, vault_id)
    recovered = recover_commit(data, layout, vault_id)
    if recovered is not None:
        layout = lay_out(recovered, opener, vault_id)
    if layout.committed_end < len(data):
        issues.append(Issue("torn_tail", layout.committed_end))
    issues += layout.issues
    commits, keys = layout.commits, layout.keys
    result = Result(trusted_keyrings=[(kr.offset, kr.epoch, kr.id) for kr in keys.trusted])

    verify_commits(commits, keys.held, keys.trusted, vault_id, issues)

    # §9.3 release. §7.4: a stream's chunk frames are the chunks the release
    # rules allow; a chunk they refuse is part of no stream and is not
    # reported (its stale commit is).
    manifests = []
    chunks: dict[bytes, list] = {}          # stream id -> allowed chunk frames, file order
    for c in commits:
        for f in c.covered:
            if f.malformed or (f.kind not in RECORD_KINDS and f.kind != KIND_CHUNK):
                continue
            verified = release_allowed(c, f)
            if f.kind == KIND_CHUNK:
                if verified is not None:
                    chunks.setdefault(chunk_public(f)[0], []).append(f)
                continue
            if verified is None:
                issues.append(Issue("stale_epoch", f.offset))
                continue
            try:
                payload, value = record_payload(f, keys.held, vault_id)
            except RecordError as e:
                issues.append(Issue(e.code, f.offset))
                continue
            result.records.append(Released(f.kind, payload, f.offset, verified))
            if f.kind == KIND_MANIFEST:
                manifests.append((f, value))

    # §7.4: every released manifest, in file order, even when two name one
    # stream; records.md §4 and Vectors/README.md: a whole attachment is
    # counted once per blob id, for the first manifest whose stream reads whole.
    whole = set()
    for f, value in manifests:
        content, problem = read_attachment(f, value, chunks.get(value.get("stream"), []),
                                           keys.held, vault_id, keys.blob_key)
        if problem:
            issues.append(problem)
        elif value.get("blob") not in whole:
            whole.add(value.get("blob"))
            result.attachments.append((value.get("blob"), content))

    result.issues = issues
    return result
