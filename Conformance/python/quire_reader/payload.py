"""Payload encoding (format.md §6): Padmé padding and zstd rules."""

from __future__ import annotations

import io
import struct

import zstandard

MAX_PAYLOAD = 16 * 1024 * 1024  # format.md §11


class PayloadError(Exception):
    def __init__(self, code: str, detail: str = ""):
        super().__init__(code + (": " + detail if detail else ""))
        self.code = code


def padme(length: int) -> int:
    """Padmé(L) of format.md §6.2."""
    if length < 2:
        return length
    e = length.bit_length() - 1          # ⌊log₂ L⌋
    s = e.bit_length()                   # ⌊log₂ E⌋ + 1
    m = (1 << (e - s)) - 1
    return (length + m) & ~m


def unpad(plaintext: bytes) -> bytes:
    """Removes ISO/IEC 7816-4 padding and checks the Padmé length [bad_padding]."""
    stripped = plaintext.rstrip(b"\x00")
    if not stripped or stripped[-1] != 0x80:
        raise PayloadError("bad_padding", "last non-zero byte is not 0x80")
    n = len(stripped) - 1
    if len(plaintext) != padme(n + 1):
        raise PayloadError("bad_padding", "length %d is not Padmé(%d)" % (len(plaintext), n + 1))
    return plaintext[:n]


ZSTD_MAGIC = 0xFD2FB528


def zstd_frame_info(data: bytes):
    """Walks one zstd frame (RFC 8878 §3.1.1) without decompressing.

    Returns (declared content size or None, total frame length, offset of the
    first block, frame header descriptor). Raises
    PayloadError(decompression_failed) when `data` does not start with a
    well-formed zstd frame.
    """
    def need(n):
        if pos + n > len(data):
            raise PayloadError("decompression_failed", "truncated zstd frame")

    pos = 0
    need(4)
    if struct.unpack_from("<I", data, 0)[0] != ZSTD_MAGIC:
        raise PayloadError("decompression_failed", "not a zstd frame")
    pos = 4
    need(1)
    fhd = data[pos]
    pos += 1
    fcs_flag = fhd >> 6
    single_segment = (fhd >> 5) & 1
    if (fhd >> 3) & 1:
        raise PayloadError("decompression_failed", "reserved frame header bit set")
    checksum = (fhd >> 2) & 1
    did_size = (0, 1, 2, 4)[fhd & 3]
    window = None
    if not single_segment:
        need(1)
        wd = data[pos]
        pos += 1
        base = 1 << (10 + (wd >> 3))
        window = base + (base // 8) * (wd & 7)
    need(did_size)
    did = data[pos:pos + did_size]
    pos += did_size
    fcs_size = (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    need(fcs_size)
    declared = None
    if fcs_size:
        declared = int.from_bytes(data[pos:pos + fcs_size], "little")
        if fcs_size == 2:
            declared += 256
    pos += fcs_size
    first_block = pos
    blocks = []
    while True:
        need(3)
        bh = int.from_bytes(data[pos:pos + 3], "little")
        pos += 3
        last = bh & 1
        btype = (bh >> 1) & 3
        bsize = bh >> 3
        if btype == 3:
            raise PayloadError("decompression_failed", "reserved block type")
        n = 1 if btype == 1 else bsize
        need(n)
        blocks.append((pos - 3, btype, bsize, literals_regenerated_size(data[pos:pos + n]) if btype == 2 else None))
        pos += n
        if last:
            break
    if checksum:
        need(4)
        pos += 4
    if window is None:
        window = declared  # a single-segment frame's window is its declared size
    return declared, pos, first_block, fhd, did, window, blocks


def literals_regenerated_size(block: bytes):
    """The Regenerated_Size of a compressed block's Literals_Section_Header
    (RFC 8878 §3.1.1.3.1.1), or None when the block is too short for it."""
    if not block:
        return None
    h = int.from_bytes(block[:5].ljust(5, b"\0"), "little")
    ltype, fmt = h & 3, (h >> 2) & 3
    if ltype <= 1:
        if fmt in (0, 2):
            return (h >> 3) & 0x1f
        return (h >> 4) & (0xfff if fmt == 1 else 0xfffff)
    return (h >> 4) & {0: 0x3ff, 1: 0x3ff, 2: 0x3fff, 3: 0x3ffff}[fmt]


def decompress(payload: bytes) -> bytes:
    """format.md §6.1, in its order: one zstd frame (not skippable: its magic
    differs) that declares its size, names no dictionary and has nothing
    after it [decompression_failed]; the declared size within 16 MiB
    [size_limit_exceeded]; a window over 16 MiB, from the frame header
    [decompression_failed] (step 3, thirteenth review R13-3); the blocks, in
    order, against Block_Maximum_Size = min(window, 128 KiB): a Block_Size
    over it [decompression_failed], literals that regenerate to more than it
    [decompressed_size_mismatch] (step 4, fourteenth review R14-5); then
    decoding into exactly the declared size, no block decoding to more than
    the maximum [decompressed_size_mismatch], any other decoder failure
    being decompression_failed. The decoding is one pass with the whole
    output as history, so a match offset beyond the frame's window but
    within the output resolves (fifteenth review R15-3)."""
    declared, flen, first_block, fhd, did, window, blocks = zstd_frame_info(payload)
    if declared is None:
        raise PayloadError("decompression_failed", "frame does not declare its size")
    if any(did):
        raise PayloadError("decompression_failed", "frame names a dictionary")
    if flen != len(payload):
        raise PayloadError("decompression_failed", "bytes after the zstd frame")
    if declared > MAX_PAYLOAD:
        raise PayloadError("size_limit_exceeded", "declared size %d" % declared)
    if window > MAX_PAYLOAD:
        raise PayloadError("decompression_failed", "window of %d bytes over 16 MiB" % window)
    block_max = min(window, 128 * 1024)
    for _, btype, bsize, regenerated in blocks:
        if bsize > block_max:
            raise PayloadError("decompression_failed",
                               "block of %d bytes over the block maximum of %d" % (bsize, block_max))
        if regenerated is not None and regenerated > block_max:
            raise PayloadError("decompressed_size_mismatch",
                               "literals of %d bytes over the block maximum of %d" % (regenerated, block_max))
    # libzstd itself refuses a frame whose output differs from its declared
    # size ("corruption detected" / "destination buffer too small"), which
    # hides the difference between corrupt data and a size mismatch. To
    # observe how many bytes the frame really produces, decode the same blocks
    # under a header that declares no size (a window wide enough for any
    # allowed payload), one block at a time, so that a block that decodes to
    # more than the frame's own Block_Maximum_Size shows (the decoder under
    # the frame's own header runs out of room there). The header's window,
    # at least the declared size, keeps the whole output as the decoder's
    # history, as one-pass decoding into the declared-size buffer does
    # (format.md §6.1, R15-3): an offset beyond the frame's own window, but
    # within the output, resolves from the output.
    window_log = max(17, (declared + 1).bit_length())
    new_fhd = fhd & 0x04                        # keep the checksum flag; no dictionary id
    header = struct.pack("<I", ZSTD_MAGIC) + bytes([new_fhd, (window_log - 10) << 3])
    ends = [start for start, _, _, _ in blocks[1:]] + [flen]
    out = b""
    try:
        d = zstandard.ZstdDecompressor().decompressobj()
        out = d.decompress(header + payload[first_block:ends[0]])
        if len(out) > block_max:
            raise PayloadError("decompressed_size_mismatch",
                               "a block decodes to more than the block maximum of %d" % block_max)
        for start, end in zip(ends, ends[1:]):
            more = d.decompress(payload[start:end])
            if len(more) > block_max:
                raise PayloadError("decompressed_size_mismatch",
                                   "a block decodes to more than the block maximum of %d" % block_max)
            out += more
            if len(out) > declared:
                break
    except zstandard.ZstdError as e:
        raise PayloadError("decompression_failed", "corrupt zstd data: %s" % e)
    if len(out) != declared:
        raise PayloadError("decompressed_size_mismatch",
                           "produced %s bytes, declared %d"
                           % ("more than %d" % declared if len(out) > declared else len(out),
                              declared))
    return out
