"""File header (format.md §3), frames (§4) and scanning (§10).

Everything here works without a key.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass

from .crypto import blake2b
from .errors import Issue, QuireError

MAGIC = b"\x89QUIRE\r\n"
HEADER_SIZE = 64
MAX_BODY = 17_825_792        # §4.2, §11: 16 MiB + 1 MiB

KIND_KEYRING = 0x01
KIND_COMMIT = 0x02
KIND_REVISION = 0x10
KIND_MANIFEST = 0x11
KIND_CHUNK = 0x12
KIND_PROFILE = 0x80

FLAG_SEALED = 0x01
FLAG_COMPRESSED = 0x02

# kind -> sealed?   (§4.3). Every other kind is unassigned; 0x81 (once an
# enrollment request) is an unknown non-critical kind like any other.
KNOWN_KINDS = {
    KIND_KEYRING: False, KIND_COMMIT: False, KIND_REVISION: True,
    KIND_MANIFEST: True, KIND_CHUNK: True, KIND_PROFILE: True,
}

CHUNK_PUBLIC = 21
EMPTY_FINAL_CHUNK_BODY = 24 + CHUNK_PUBLIC + 1 + 16         # 62


def u16(x: int) -> bytes:
    return struct.pack("<H", x)


# ---------------------------------------------------------------------------
# §3 file header
# ---------------------------------------------------------------------------

def _copy_intact(c: bytes) -> bool:
    return blake2b(c[:28], 16)[:4] == c[28:32]


def parse_header(data: bytes, issues: list) -> bytes:
    """Returns the vault id."""
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
    if version != 1:
        raise QuireError("unsupported_version", str(version))
    if flags != 0:
        raise QuireError("unsupported_feature", "%#06x" % flags)
    if not ok1:
        issues.append(Issue("header_copy_damaged", 0))
    if not ok2:
        issues.append(Issue("header_copy_damaged", 32))
    return use[12:28]


# ---------------------------------------------------------------------------
# §4 frames, §10 scanning
# ---------------------------------------------------------------------------

@dataclass
class Frame:
    offset: int
    header: bytes        # 12 bytes, as corrected (§10.2)
    body: bytes
    repaired: bool = False
    # filled in later
    malformed: bool = False
    commit_index: int = -1      # index of the commit that covers it

    @property
    def kind(self):
        return self.header[0]

    @property
    def flags(self):
        return self.header[1]

    @property
    def epoch(self):
        return struct.unpack_from("<H", self.header, 2)[0]

    @property
    def length(self):
        return struct.unpack_from("<I", self.header, 4)[0]

    @property
    def fields(self):
        return self.header[:8]

    @property
    def trailer(self):
        return self.body[-16:]

    @property
    def sealed(self):
        return bool(self.flags & FLAG_SEALED)

    @property
    def compressed(self):
        return bool(self.flags & FLAG_COMPRESSED)

    @property
    def end(self):
        return self.offset + 12 + len(self.body)


@dataclass
class Damaged:
    offset: int
    end: int


def header_checked(h: bytes) -> bool:
    """§4.2: the check verifies and the header is plausible."""
    if len(h) < 12 or blake2b(h[:8], 16)[:4] != h[8:12]:
        return False
    flags = h[1]
    length = struct.unpack_from("<I", h, 4)[0]
    if flags & 0xFC:
        return False
    if flags & FLAG_COMPRESSED and not flags & FLAG_SEALED:
        return False
    if length < (40 if flags & FLAG_SEALED else 16):
        return False
    if length > MAX_BODY:
        return False
    return True


def _length(h: bytes) -> int:
    return struct.unpack_from("<I", h, 4)[0]


_NONZERO = re.compile(rb"[^\x00]")


def _positions(data: bytes, start: int, stop: int):
    """Candidate header positions in [start, stop) that have 12 bytes in the
    file, skipping zero runs: §10.2 "Finding positions": a header whose 4
    length bytes are all zero is never plausible (§4.2: length ≥ 16). The
    skip only saves time; every skipped position would fail its check."""
    stop = min(stop, len(data) - 11)
    r = start
    while r < stop:
        if data[r + 4:r + 8] != b"\0\0\0\0":
            yield r
            r += 1
            continue
        m = _NONZERO.search(data, r + 8)
        # the first position whose length bytes reach that non-zero byte
        r = max(r + 1, (m.start() if m else len(data)) - 7)


def _fits(p: int, h: bytes, limit: int) -> bool:
    """The header h, at p, is checked and its frame ends at or before `limit`."""
    return header_checked(h) and p + 12 + _length(h) <= limit


def _frame_at(data: bytes, p: int, h: bytes, repaired: bool = False) -> Frame:
    """The frame at p under header h (the bytes there, or a corrected header)."""
    return Frame(p, h, data[p + 12:p + 12 + _length(h)], repaired=repaired)


def _confirmed(data: bytes, p: int, h: bytes) -> bool:
    """§10.2: checked, and the frame ends at EOF or where a checked header starts."""
    if not _fits(p, h, len(data)):
        return False
    end = p + 12 + _length(h)
    return end == len(data) or header_checked(data[end:end + 12])


def _next_confirmed(data: bytes, start: int) -> int | None:
    """§10.2 step 2: the first position ≥ start whose header is confirmed."""
    for q in _positions(data, start, len(data)):
        if _confirmed(data, q, data[q:q + 12]):
            return q
    return None


def _repair(data: bytes, p: int) -> bytes | None:
    """§10.2 step 1: the first of the 96 one-bit variants of the header at p,
    in order of bit index, that is confirmed."""
    h = data[p:p + 12]
    for bit in range(96):
        cand = bytearray(h)
        cand[bit // 8] ^= 1 << (bit % 8)
        if _confirmed(data, p, bytes(cand)):
            return bytes(cand)
    return None


def _resynchronise(data: bytes, p: int, q: int) -> list:
    """§10.2 step 2, between the damage at p and the next confirmed position
    q: from p + 1, take the first position with a checked header whose frame
    ends at or before q, keep that frame, and go on from its end. The bytes
    no kept frame covers are damaged regions (frame_damaged at the start of
    each). No repair is tried inside (p, q): those headers are not checked,
    and the text keeps only checked frames there."""
    items: list = []
    gap = p                      # start of the bytes not yet covered
    r = p + 1
    while True:
        found = next((x for x in _positions(data, r, q) if _fits(x, data[x:x + 12], q)),
                     None)
        if found is None:
            break
        if found > gap:
            items.append(Damaged(gap, found))
        frame = _frame_at(data, found, data[found:found + 12])
        items.append(frame)
        gap = r = frame.end
    if gap < q:
        items.append(Damaged(gap, q))
    return items


def _leads_to_commit(data: bytes, q: int, memo: dict) -> bool:
    """§10.3: from position q, checked headers (without repairs) whose frames
    fit in the file lead, frame after frame, to a well-formed commit frame
    (q itself may hold it)."""
    path, r, result = [], q, False
    while r not in memo:
        h = data[r:r + 12]
        if not _fits(r, h, len(data)):
            break
        frame = _frame_at(data, r, h)
        if frame.kind == KIND_COMMIT and is_well_formed(frame):
            result = True
            break
        path.append(r)
        r = frame.end
    else:
        result = memo[r]
    for x in path:
        memo[x] = result
    return result


def _committed_frames_follow(data: bytes, p: int) -> bool:
    """§10.3: after the checked header at p, whose frame runs past the end of
    the file, a confirmed position exists from which checked headers lead to
    a well-formed commit frame. Then p's length was damaged; otherwise p is a
    torn write."""
    memo: dict[int, bool] = {}
    return any(_confirmed(data, q, data[q:q + 12]) and _leads_to_commit(data, q, memo)
               for q in _positions(data, p + 1, len(data)))


def scan(data: bytes):
    """§10.1–10.3 without a key. Returns (items, tail_start): items are Frames
    and Damaged regions in file order; tail_start is where scanning stopped
    (len(data) when it reached the end exactly). The bytes from tail_start on
    are tail; the reader decides which items before it are tail too (those
    after the committed end, §10.3).

    At each position p:
      - a checked header whose frame fits is read (§10.1);
      - a checked header whose frame runs past the end of the file is a torn
        write (tail from p) unless committed frames follow, in which case the
        reader resynchronises from p without trying repairs (§10.3);
      - otherwise one flipped bit is repaired (§10.2 step 1), or the reader
        resynchronises to the next confirmed position (step 2), or, when none
        follows, the tail starts at p (step 3).
    Commit recovery (§10.3) needs keys, so it is in reader.py."""
    items: list = []
    p = HEADER_SIZE
    n = len(data)
    while p < n:
        if p + 12 > n:
            return items, p                      # a cut-off header: tail
        h = data[p:p + 12]
        if header_checked(h):
            if _fits(p, h, n):
                items.append(_frame_at(data, p, h))
                p = items[-1].end
                continue
            if not _committed_frames_follow(data, p):
                return items, p                  # §10.3: a torn write
        else:
            repaired = _repair(data, p)
            if repaired is not None:             # step 1
                items.append(_frame_at(data, p, repaired, repaired=True))
                p = items[-1].end
                continue
        q = _next_confirmed(data, p + 1)
        if q is None:
            return items, p                      # step 3: the tail
        items += _resynchronise(data, p, q)      # step 2
        p = q
    return items, n


def is_well_formed(f: Frame) -> bool:
    """§4.3 (and §7.2 for the final byte of a chunk). Unknown kinds pass."""
    sealed = KNOWN_KINDS.get(f.kind)
    if sealed is None:
        return True
    if f.sealed != sealed:
        return False
    if f.kind == KIND_COMMIT and f.length != 16:
        return False
    if f.kind == KIND_CHUNK:
        if f.compressed or f.length < EMPTY_FINAL_CHUNK_BODY:
            return False
        if f.body[24 + 20] not in (0, 1):
            return False
    return True


def is_commit_boundary(f: Frame) -> bool:
    return f.kind == KIND_COMMIT and not f.malformed
