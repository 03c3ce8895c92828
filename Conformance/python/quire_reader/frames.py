"""File header (format.md §3), frames (§4) and scanning (§10).

Everything here works without a key.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .crypto import blake2b
from .errors import Issue, QuireError

MAGIC = b"\x89QUIRE\r\n"
HEADER_SIZE = 64
MAX_BODY = 16_777_216

KIND_KEYRING = 0x01
KIND_COMMIT = 0x02
KIND_REVISION = 0x10
KIND_MANIFEST = 0x11
KIND_CHUNK = 0x12
KIND_PROFILE = 0x80
KIND_ENROLL = 0x81

FLAG_SEALED = 0x01
FLAG_COMPRESSED = 0x02

# kind -> sealed?   (§4.3)
KNOWN_KINDS = {
    KIND_KEYRING: False, KIND_COMMIT: False, KIND_REVISION: True,
    KIND_MANIFEST: True, KIND_CHUNK: True, KIND_PROFILE: True, KIND_ENROLL: False,
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


def _confirmed(data: bytes, p: int, h: bytes) -> bool:
    """§10.2: checked, and the frame ends at EOF or where a checked header starts."""
    if not header_checked(h):
        return False
    end = p + 12 + _length(h)
    if end == len(data):
        return True
    return end + 12 <= len(data) and header_checked(data[end:end + 12])


def scan(data: bytes):
    """§10.1–10.3. Returns (items, tail_start) where items are Frames and
    Damaged regions in file order, and tail_start is where scanning stopped
    (len(data) when it reached the end exactly)."""
    items = []
    p = HEADER_SIZE
    n = len(data)
    while p < n:
        if p + 12 > n:
            return items, p                      # cut-off header
        h = data[p:p + 12]
        if header_checked(h):
            end = p + 12 + _length(h)
            if end > n:
                return items, p                  # runs past EOF: tail
            items.append(Frame(p, h, data[p + 12:end]))
            p = end
            continue
        # 1. repair one flipped bit
        repaired = None
        for bit in range(96):
            cand = bytearray(h)
            cand[bit // 8] ^= 1 << (bit % 8)
            cand = bytes(cand)
            if _confirmed(data, p, cand):
                repaired = cand
                break
        if repaired is not None:
            end = p + 12 + _length(repaired)
            items.append(Frame(p, repaired, data[p + 12:end], repaired=True))
            p = end
            continue
        # 2. resynchronise
        q = p + 1
        while q + 12 <= n and not _confirmed(data, q, data[q:q + 12]):
            q += 1
        if q + 12 > n:
            return items, p                      # 3. no confirmed header: tail
        items.append(Damaged(p, q))
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
