"""File header (format.md §3), frames (§4) and scanning (§10.1–10.3).

Everything here works without a key. Commit recovery (§10.3), which needs
keys, is in reader.py.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from .crypto import blake2b, h256
from .errors import Issue, QuireError

MAGIC = b"\x89QUIRE\r\n"
VERSION = 2
HEADER_SIZE = 64
FRAME_HEADER = 16
MIN_BODY = 32
MAX_BODY = 17_825_792        # §4.2, §11: 16 MiB + 1 MiB

KIND_KEYRING = 0x01
KIND_COMMIT = 0x02
KIND_REVISION = 0x10
KIND_MANIFEST = 0x11
KIND_CHUNK = 0x12
KIND_PROFILE = 0x80

FLAG_SEALED = 0x01
FLAG_COMPRESSED = 0x02

COMMIT_BODY = 200
CHUNK_PUBLIC = 21
NONCE = 24
TAG = 16
BODY_HASH = 32
MIN_SEALED_RECORD = NONCE + 1 + TAG + BODY_HASH                      # 73
MIN_CHUNK = NONCE + CHUNK_PUBLIC + 1 + TAG                           # 62
MAX_CHUNK = NONCE + CHUNK_PUBLIC + 65_536 + TAG                      # 65,597

# §4.3: kind -> (sealed, minimum length, maximum length). Every other kind is
# unassigned; 0x81 (a draft's enrollment request) is unknown like any other.
KIND_ROWS = {
    KIND_KEYRING: (False, MIN_BODY, MAX_BODY),
    KIND_COMMIT: (False, COMMIT_BODY, COMMIT_BODY),
    KIND_REVISION: (True, MIN_SEALED_RECORD, MAX_BODY),
    KIND_MANIFEST: (True, MIN_SEALED_RECORD, MAX_BODY),
    KIND_CHUNK: (True, MIN_CHUNK, MAX_CHUNK),
    KIND_PROFILE: (True, MIN_SEALED_RECORD, MAX_BODY),
}


def is_critical(kind: int) -> bool:
    return kind < 0x80


# ---------------------------------------------------------------------------
# §3 file header
# ---------------------------------------------------------------------------

def _copy_intact(c: bytes) -> bool:
    return blake2b(c[:28], 16)[:4] == c[28:32]


def parse_header(data: bytes, issues: list) -> bytes:
    """§3, reader steps 1–6. Returns the vault id."""
    if len(data) < HEADER_SIZE:
        raise QuireError("truncated_header")
    c1, c2 = data[0:32], data[32:64]
    ok1, ok2 = _copy_intact(c1), _copy_intact(c2)
    if not ok1 and not ok2:
        if not c1.startswith(MAGIC) and not c2.startswith(MAGIC):
            raise QuireError("not_a_vault")
        raise QuireError("header_damaged")
    if ok1 and ok2 and c1 != c2:
        raise QuireError("header_copies_differ")
    use = c1 if ok1 else c2
    if use[:8] != MAGIC:
        raise QuireError("not_a_vault")
    version, flags = struct.unpack_from("<HH", use, 8)
    if version != VERSION:
        if version == 1:
            raise QuireError("unsupported_version",
                             "version 1 was a development version of the format: no vault "
                             "of it exists outside Quire's own history, and there is no "
                             "migration")
        raise QuireError("unsupported_version", "version %d" % version)
    if flags != 0:
        raise QuireError("unsupported_feature", "flags %#06x" % flags)
    if not ok1:
        issues.append(Issue("header_copy_damaged", 0))
    if not ok2:
        issues.append(Issue("header_copy_damaged", 32))
    return use[12:28]


# ---------------------------------------------------------------------------
# §4 frames
# ---------------------------------------------------------------------------

@dataclass(eq=False)
class Frame:
    offset: int
    header: bytes            # 16 bytes, as corrected (§10.2)
    body: bytes
    repaired: bool = False
    malformed: bool = False  # breaks its kind's row (§4.3, §7.2), set by mark_rows

    @property
    def kind(self):
        return self.header[0]

    @property
    def flags(self):
        return self.header[1]

    @property
    def key_id(self):
        return self.header[2:8]

    @property
    def length(self):
        return struct.unpack_from("<I", self.header, 8)[0]

    @property
    def fields(self):
        """The 12 header fields (§4.1)."""
        return self.header[:12]

    @property
    def sealed(self):
        return bool(self.flags & FLAG_SEALED)

    @property
    def compressed(self):
        return bool(self.flags & FLAG_COMPRESSED)

    @property
    def end(self):
        return self.offset + FRAME_HEADER + len(self.body)

    @property
    def summary(self):
        """§9.2: the header followed by the body hash, or a chunk's tag."""
        return self.header + (self.body[-TAG:] if self.kind == KIND_CHUNK else self.body[-BODY_HASH:])

    def body_hash_ok(self, key_commit: bytes = b"") -> bool:
        """§4.2 (not for chunks and commits): H256(body without its hash),
        or for a sealed frame H256(keyCommit ‖ body without its hash) with
        the commitment of the key that seals it."""
        return h256(key_commit + self.body[:-BODY_HASH]) == self.body[-BODY_HASH:]


@dataclass
class Damaged:
    offset: int
    end: int


def header_check(fields12: bytes) -> bytes:
    return blake2b(fields12, 16)[:4]


def build_header(kind: int, flags: int, key_id: bytes, length: int) -> bytes:
    fields = bytes([kind, flags]) + key_id + struct.pack("<I", length)
    return fields + header_check(fields)


def header_checked(h: bytes) -> bool:
    """§4.2: the check verifies and the header is plausible."""
    if len(h) < FRAME_HEADER or header_check(h[:12]) != h[12:16]:
        return False
    flags = h[1]
    if flags & 0xFC:
        return False
    if flags & FLAG_COMPRESSED and not flags & FLAG_SEALED:
        return False
    return MIN_BODY <= _length(h) <= MAX_BODY


def _length(h: bytes) -> int:
    return struct.unpack_from("<I", h, 8)[0]


def is_well_formed(f: Frame) -> bool:
    """§4.3 (and §7.2 for a chunk's final byte). Unknown kinds pass."""
    row = KIND_ROWS.get(f.kind)
    if row is None:
        return True
    sealed, lo, hi = row
    if f.sealed != sealed or not lo <= f.length <= hi:
        return False
    if f.kind == KIND_CHUNK and (f.compressed or f.body[NONCE + 20] not in (0, 1)):
        return False
    return True


def is_commit_frame(f) -> bool:
    """A well-formed commit frame: a commit boundary (§4.3, §9)."""
    return isinstance(f, Frame) and f.kind == KIND_COMMIT and is_well_formed(f)


# ---------------------------------------------------------------------------
# §10 scanning
# ---------------------------------------------------------------------------

_NONZERO = re.compile(rb"[^\x00]")


def _positions(data: bytes, start: int, stop: int):
    """Candidate header positions in [start, stop) with 16 bytes in the file.
    §10.2 "Finding positions": a header whose length bytes (8..<12) are all
    zero is never plausible, so runs of zeros are skipped; every skipped
    position would fail its check anyway."""
    stop = min(stop, len(data) - FRAME_HEADER + 1)
    r = start
    while r < stop:
        if data[r + 8:r + 12] != b"\0\0\0\0":
            yield r
            r += 1
            continue
        m = _NONZERO.search(data, r + 12)
        # the first position whose length bytes reach that non-zero byte
        r = max(r + 1, (m.start() if m else len(data)) - 11)


def _fits(p: int, h: bytes, limit: int) -> bool:
    """The header h, at p, is checked and its frame ends at or before `limit`."""
    return header_checked(h) and p + FRAME_HEADER + _length(h) <= limit


def _frame_at(data: bytes, p: int, h: bytes, repaired: bool = False) -> Frame:
    return Frame(p, h, data[p + FRAME_HEADER:p + FRAME_HEADER + _length(h)], repaired=repaired)


def _confirmed(data: bytes, p: int, h: bytes) -> bool:
    """§10.2: checked, and the frame ends at the end of the file or where
    another checked header starts."""
    if not _fits(p, h, len(data)):
        return False
    end = p + FRAME_HEADER + _length(h)
    return end == len(data) or header_checked(data[end:end + FRAME_HEADER])


def _next_confirmed(data: bytes, start: int):
    """§10.2 step 2: the first position q ≥ start (q ≤ end − 16) whose
    header, as it stands, is confirmed."""
    for q in _positions(data, start, len(data)):
        if _confirmed(data, q, data[q:q + FRAME_HEADER]):
            return q
    return None


def _repair(data: bytes, p: int):
    """§10.2 step 1: the first of the 128 one-bit variants of the header at
    p, in order of bit index, that is confirmed."""
    h = data[p:p + FRAME_HEADER]
    for bit in range(8 * FRAME_HEADER):
        cand = bytearray(h)
        cand[bit // 8] ^= 1 << (bit % 8)
        if _confirmed(data, p, bytes(cand)):
            return bytes(cand)
    return None


def _resynchronise(data: bytes, p: int, q: int) -> list:
    """§10.2 step 2 between the damage at p and the confirmed q: from
    r = p + 1, the first r′ < q with a checked header whose frame ends at or
    before q is read, and the reader goes on from its end; bytes no such
    frame covers are damaged regions. No repair between p and q."""
    items: list = []
    gap = p
    r = p + 1
    while True:
        found = next((x for x in _positions(data, r, q)
                      if _fits(x, data[x:x + FRAME_HEADER], q)), None)
        if found is None:
            break
        if found > gap:
            items.append(Damaged(gap, found))
        frame = _frame_at(data, found, data[found:found + FRAME_HEADER])
        items.append(frame)
        gap = r = frame.end
    if gap < q:
        items.append(Damaged(gap, q))
    return items


def _leads_to_commit(data: bytes, q: int) -> bool:
    """§10.3: from q, frames read by their headers as they stand (checked,
    no repair, each fitting in the file) reach a well-formed commit frame,
    possibly the one at q."""
    r = q
    while _fits(r, data[r:r + FRAME_HEADER], len(data)):
        frame = _frame_at(data, r, data[r:r + FRAME_HEADER])
        if is_commit_frame(frame):
            return True
        r = frame.end
    return False


def scan(data: bytes) -> list:
    """§10.1–10.3 without a key: Frames and Damaged regions in file order,
    from offset 64. Whatever it cannot read at the end (a cut-off header, a
    torn write, bytes with no confirmed position after them) is left out:
    it lies after the committed end anyway, in the tail.

    At each position p:
      - a checked header whose frame fits is read (§10.1);
      - a checked header whose frame runs past the end of the file is a torn
        write, unless from the next confirmed position frames lead to a
        well-formed commit frame: then the reader resynchronises from p
        without trying a repair (§10.3);
      - otherwise one flipped bit is repaired (§10.2 step 1), or the reader
        resynchronises to the next confirmed position (step 2), or, when none
        follows, stops (step 3: the tail)."""
    items: list = []
    p = HEADER_SIZE
    n = len(data)
    while p < n:
        if p + FRAME_HEADER > n:
            break                                # a cut-off header: tail
        h = data[p:p + FRAME_HEADER]
        if header_checked(h):
            if _fits(p, h, n):
                items.append(_frame_at(data, p, h))
                p = items[-1].end
                continue
            q = _next_confirmed(data, p + 1)
            if q is None or not _leads_to_commit(data, q):
                break                            # §10.3: a torn write
            items += _resynchronise(data, p, q)
            p = q
            continue
        repaired = _repair(data, p)
        if repaired is not None:                 # step 1
            items.append(_frame_at(data, p, repaired, repaired=True))
            p = items[-1].end
            continue
        q = _next_confirmed(data, p + 1)
        if q is None:
            break                                # step 3: the tail
        items += _resynchronise(data, p, q)      # step 2
        p = q
    for it in items:
        if isinstance(it, Frame):
            it.malformed = not is_well_formed(it)
    return items
