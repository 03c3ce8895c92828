"""Attachments (format.md §7): the stream checks and reading a stream
(§7.4), the padded stream (§7.1) and the blob id (§7.3)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .crypto import mac256
from .errors import Issue
from .frames import CHUNK_PUBLIC, MAX_CHUNK, NONCE, Frame
from .payload import padme
from .records import RecordError, open_sealed

CHUNK_SIZE = 65_536


def blob_id(blob_key: bytes, content: bytes) -> bytes:
    """The blob id (format.md §7.3): a leaf per 65,536 bytes of content,
    MAC256(bk, "quire-blob-leaf" ‖ u64(i) ‖ chunk i's content), then
    MAC256(bk, "quire-blob-root" ‖ leaves ‖ u64(N) ‖ u64(c)); no leaf for
    empty content."""
    leaves = [mac256(blob_key, b"quire-blob-leaf" + struct.pack("<Q", i // CHUNK_SIZE)
                     + content[i:i + CHUNK_SIZE])
              for i in range(0, len(content), CHUNK_SIZE)]
    return mac256(blob_key, b"quire-blob-root" + b"".join(leaves)
                  + struct.pack("<QQ", len(content), len(leaves)))


@dataclass
class Chunk:
    frame: Frame
    candidates: list             # the keys release step 2 allows it to be tried with
    standing: int = 1            # its commit's: attested by a member 3, verified 2, else 1
    vault_id: bytes = b""

    def opens(self) -> bool:
        """§7.4: it opens under a key held for its key id (§5.2 steps 1
        and 3); a candidate with no such key does not open."""
        if not self.candidates:
            return False
        try:
            open_sealed(self.frame, self.candidates, self.vault_id)
        except RecordError:
            return False
        return True

    @property
    def stream(self):
        return self.frame.body[NONCE:NONCE + 16]

    @property
    def index(self):
        return struct.unpack_from("<I", self.frame.body, NONCE + 16)[0]

    @property
    def final(self):
        return self.frame.body[NONCE + 20] == 1


def chunk_count(size: int) -> int:
    """§7.1: ⌈Padmé(N + 1) / 65,536⌉."""
    return -(-padme(size + 1) // CHUNK_SIZE)


def take(candidates: list):
    """§7.4: for each index the candidate of the highest standing, then the
    first in file order. Returns (the stream's chunks in file order,
    whether another candidate of a taken one's index and standing differs
    from it). Of several candidates of one index, when some opens, every
    one that does not (whatever its key id) is passed over first."""
    by_index: dict = {}
    for c in candidates:
        by_index.setdefault(c.index, []).append(c)
    dropped = set()
    for group in by_index.values():
        if len(group) > 1:
            failing = [c for c in group if not c.opens()]
            if len(failing) < len(group):
                dropped.update(map(id, failing))
    candidates = [c for c in candidates if id(c) not in dropped]
    best: dict = {}
    for c in candidates:
        b = best.get(c.index)
        if b is None or c.standing > b.standing:
            best[c.index] = c
    duplicate = any(c is not best[c.index] and c.standing == best[c.index].standing
                    and (c.frame.header, c.frame.body)
                    != (best[c.index].frame.header, best[c.index].frame.body)
                    for c in candidates)
    taken = set(map(id, best.values()))
    return [c for c in candidates if id(c) in taken], duplicate


def structure_ok(at: int, value, candidates: list) -> bool:
    """§7.4 checks 1–6 pass ("reads whole in structure", §7.3)."""
    return check_stream(at, value.get("size", 0), candidates) is None


def check_stream(at: int, size: int, candidates: list):
    """§7.4 checks 1–6, from public headers and lengths (and, for an index
    with several candidates, whether each opens), in order;
    the first failure, reported at the manifest (offset `at`)."""
    chunks, duplicate = take(candidates)
    n = len(chunks)
    idx = [c.index for c in chunks]
    if duplicate:                                                    # 1
        return Issue("chunk_duplicate", at)
    if n == 0 or set(idx) != set(range(n)):                          # 2
        return Issue("chunk_missing", at)
    if idx != sorted(idx):                                           # 3
        return Issue("chunk_out_of_order", at)
    if any(not c.final and c.frame.length != MAX_CHUNK for c in chunks):   # 4
        return Issue("chunk_noncanonical", at)
    if any(c.final for c in chunks[:-1]):                            # 5
        return Issue("chunk_final_repeated", at)
    if not chunks[-1].final:
        return Issue("chunk_final_missing", at)
    if n != chunk_count(size):                                       # 6
        return Issue("blob_size_mismatch", at)
    return None


def read_attachment(at: int, value, chunks: list, vault_id: bytes, blob_key: bytes):
    """§7.4 for one released manifest at offset `at`. Returns (content or
    None, the first failure or None)."""
    size = value.get("size", 0)
    problem = check_stream(at, size, chunks)
    if problem:
        return None, problem
    chunks, _ = take(chunks)
    parts = []
    for c in chunks:
        try:
            pt, _ = open_sealed(c.frame, c.candidates, vault_id)
        except RecordError as e:
            return None, Issue(e.code, c.frame.offset)               # at the chunk
        parts.append(pt)
    s = b"".join(parts)
    if len(s) != padme(size + 1) or s[size] != 0x80 or any(s[size + 1:]):   # 7
        return None, Issue("bad_padding", at)
    content = s[:size]
    if blob_id(blob_key, content) != value.get("blob"):             # 8
        return None, Issue("blob_id_mismatch", at)
    return content, None
