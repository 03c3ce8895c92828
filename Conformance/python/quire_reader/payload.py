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
        pos += n
        if last:
            break
    if checksum:
        need(4)
        pos += 4
    return declared, pos, first_block, fhd, did, window


def decompress(payload: bytes) -> bytes:
    """format.md §6.1, in its order: one zstd frame (not skippable: its magic
    differs) that declares its size, names no dictionary and has nothing
    after it [decompression_failed]; the declared size within 16 MiB
    [size_limit_exceeded]; a window over 16 MiB, from the frame header
    [decompression_failed] (step 3, thirteenth review R13-3); then decoding
    into exactly the declared size [decompressed_size_mismatch], any other
    decoder failure being decompression_failed."""
    declared, flen, first_block, fhd, did, window = zstd_frame_info(payload)
    if declared is None:
        raise PayloadError("decompression_failed", "frame does not declare its size")
    if any(did):
        raise PayloadError("decompression_failed", "frame names a dictionary")
    if flen != len(payload):
        raise PayloadError("decompression_failed", "bytes after the zstd frame")
    if declared > MAX_PAYLOAD:
        raise PayloadError("size_limit_exceeded", "declared size %d" % declared)
    if window is not None and window > MAX_PAYLOAD:
        raise PayloadError("decompression_failed", "window of %d bytes over 16 MiB" % window)
    # libzstd itself refuses a frame whose output differs from its declared
    # size ("corruption detected" / "destination buffer too small"), which
    # hides the difference between corrupt data and a size mismatch. To
    # observe how many bytes the frame really produces, decode the same blocks
    # under a header that declares no size (a window wide enough for any
    # allowed payload), reading at most declared + 1 bytes.
    window_log = max(17, (declared + 1).bit_length())
    new_fhd = fhd & 0x04                        # keep the checksum flag; no dictionary id
    header = struct.pack("<I", ZSTD_MAGIC) + bytes([new_fhd, (window_log - 10) << 3])
    frame = header + payload[first_block:]
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(frame))
        out = reader.read(declared + 1)
        while len(out) <= declared:
            more = reader.read(declared + 1 - len(out))
            if not more:
                break
            out += more
    except zstandard.ZstdError as e:
        raise PayloadError("decompression_failed", "corrupt zstd data: %s" % e)
    if len(out) != declared:
        raise PayloadError("decompressed_size_mismatch",
                           "produced %s bytes, declared %d"
                           % ("more than %d" % declared if len(out) > declared else len(out),
                              declared))
    return out
