"""Recovery key codes (records.md §6.4)."""

from __future__ import annotations

from .crypto import blake2b
from .errors import QuireError

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_VALUE = {c: i for i, c in enumerate(ALPHABET)}
_VALUE.update({"I": 1, "L": 1, "O": 0})
_IGNORED = set(" \t\r\n-")


def checksum(r: bytes) -> bytes:
    """records.md §6.4: the label stays "quire-recovery-v1" in version 2."""
    return blake2b(b"quire-recovery-v1" + r, 16)[:3]


def device_code_checksum(a: bytes) -> bytes:
    """keys.md §3.2."""
    return blake2b(b"quire-device-code-v1" + a, 16)[:3]


def parse_recovery_code(code: str) -> bytes:
    """Returns the 32-byte recovery key R or raises recovery_code_invalid."""
    bits = 0
    count = 0
    for ch in code:
        if ch in _IGNORED:
            continue
        v = _VALUE.get(ch.upper()) if ch.isascii() else None
        if v is None:
            raise QuireError("recovery_code_invalid", "bad character %r" % ch)
        bits = (bits << 5) | v
        count += 1
    if count != 56:
        raise QuireError("recovery_code_invalid", "length %d, not 56" % count)
    raw = bits.to_bytes(35, "big")
    r, chk = raw[:32], raw[32:]
    if checksum(r) != chk:
        if device_code_checksum(r) == chk:
            raise QuireError("recovery_code_invalid",
                             "this is a device code, not a recovery code")
        raise QuireError("recovery_code_invalid", "bad checksum")
    return r


def format_recovery_code(r: bytes) -> str:
    raw = int.from_bytes(r + checksum(r), "big")
    chars = "".join(ALPHABET[(raw >> (5 * (55 - i))) & 31] for i in range(56))
    return "-".join(chars[i:i + 4] for i in range(0, 56, 4))
