"""Decoder for Quire's deterministic CBOR profile (records.md §1.1).

Every rule of the profile is enforced; any violation raises CBORError, which
the reader reports as `malformed_record` (or `malformed_keyring`).

Decoded values:
  major 0/1  -> int
  major 2    -> bytes
  major 3    -> str
  major 4    -> list
  major 5    -> CMap (ordered key/value pairs; lookup by text key)
  false/true -> bool, null -> None
  float64    -> float
"""

from __future__ import annotations

import math
import struct

MAX_DEPTH = 16


class CBORError(ValueError):
    pass


class CMap:
    """A decoded CBOR map: keeps every pair (any key type) in encoded order."""

    __slots__ = ("pairs", "_text")

    def __init__(self, pairs):
        self.pairs = pairs
        self._text = {k: v for k, v in pairs if type(k) is str}

    def __contains__(self, key):
        return key in self._text

    def get(self, key, default=None):
        return self._text.get(key, default)

    def __len__(self):
        return len(self.pairs)

    def __repr__(self):
        return "CMap(%r)" % (self.pairs,)


class _Decoder:
    def __init__(self, data: bytes):
        self.d = data
        self.p = 0

    def left(self) -> int:
        return len(self.d) - self.p

    def take(self, n: int) -> bytes:
        if n > self.left():
            raise CBORError("truncated")
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def head(self):
        ib = self.take(1)[0]
        major, ai = ib >> 5, ib & 0x1F
        if major == 7:
            return major, ai, None
        if ai < 24:
            return major, ai, ai
        if ai == 24:
            v = self.take(1)[0]
            if v < 24:
                raise CBORError("integer/length not in shortest form")
        elif ai == 25:
            v = struct.unpack(">H", self.take(2))[0]
            if v < 0x100:
                raise CBORError("integer/length not in shortest form")
        elif ai == 26:
            v = struct.unpack(">I", self.take(4))[0]
            if v < 0x10000:
                raise CBORError("integer/length not in shortest form")
        elif ai == 27:
            v = struct.unpack(">Q", self.take(8))[0]
            if v < 0x100000000:
                raise CBORError("integer/length not in shortest form")
        elif ai == 31:
            raise CBORError("indefinite length")
        else:
            raise CBORError("reserved additional information")
        return major, ai, v

    def item(self, depth: int):
        # Rule 8: the outermost item has depth 0; an element, key or value has
        # its container's depth plus one; no item may have depth 17 or more.
        if depth > MAX_DEPTH:
            raise CBORError("nesting too deep")
        major, ai, v = self.head()
        if major == 0:
            return v
        if major == 1:
            return -1 - v
        if major == 2:
            if v > self.left():
                raise CBORError("length exceeds remaining bytes")
            return self.take(v)
        if major == 3:
            if v > self.left():
                raise CBORError("length exceeds remaining bytes")
            raw = self.take(v)
            try:
                return raw.decode("utf-8", errors="strict")
            except UnicodeDecodeError:
                raise CBORError("invalid UTF-8")
        if major == 4:
            if v > self.left():
                raise CBORError("count exceeds remaining bytes")
            return [self.item(depth + 1) for _ in range(v)]
        if major == 5:
            if v > self.left():
                raise CBORError("count exceeds remaining bytes")
            pairs = []
            prev = None
            for _ in range(v):
                start = self.p
                k = self.item(depth + 1)
                kenc = self.d[start:self.p]
                if prev is not None and not (prev < kenc):
                    raise CBORError("map keys not unique and sorted")
                prev = kenc
                val = self.item(depth + 1)
                pairs.append((_hashable(k), val))
            return CMap(pairs)
        if major == 6:
            raise CBORError("tags are not allowed")
        # major 7
        if ai == 20:
            return False
        if ai == 21:
            return True
        if ai == 22:
            return None
        if ai == 27:
            f = struct.unpack(">d", self.take(8))[0]
            if not math.isfinite(f):
                raise CBORError("non-finite float")
            return f
        raise CBORError("simple value or float width not allowed (0x%02x)" % (0xE0 | ai))


class _Key:
    """Wrapper making an array or map usable as a dict key (unknown fields)."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __repr__(self):
        return "Key(%r)" % (self.v,)


def _hashable(k):
    if isinstance(k, (list, CMap)):
        return _Key(k)
    return k


def decode(data: bytes):
    """Decode one item that must span all of `data`."""
    dec = _Decoder(bytes(data))
    v = dec.item(0)
    if dec.left() != 0:
        raise CBORError("bytes after the item")
    return v


# --- Encoding (for the merge check, which writes a new manifest) ------------

def _head(major: int, n: int) -> bytes:
    if n < 24:
        return bytes([major << 5 | n])
    for ai, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
        if n < 1 << (8 * size):
            return bytes([major << 5 | ai]) + n.to_bytes(size, "big")
    raise CBORError("integer too large")


def encode(v) -> bytes:
    """The deterministic profile of records.md §1.1 (keys sorted by their
    encodings, shortest forms, 8-byte floats)."""
    if isinstance(v, _Key):
        v = v.v
    if v is False:
        return b"\xf4"
    if v is True:
        return b"\xf5"
    if v is None:
        return b"\xf6"
    if type(v) is int:
        return _head(0, v) if v >= 0 else _head(1, -1 - v)
    if type(v) is float:
        return b"\xfb" + struct.pack(">d", v)
    if type(v) is bytes:
        return _head(2, len(v)) + v
    if type(v) is str:
        raw = v.encode("utf-8")
        return _head(3, len(raw)) + raw
    if type(v) is list:
        return _head(4, len(v)) + b"".join(encode(x) for x in v)
    if isinstance(v, CMap):
        pairs = sorted((encode(k), encode(x)) for k, x in v.pairs)
        return _head(5, len(pairs)) + b"".join(k + x for k, x in pairs)
    raise CBORError("cannot encode %r" % type(v))
