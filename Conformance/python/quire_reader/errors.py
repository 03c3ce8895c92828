"""Error and issue codes (format.md §12)."""

from __future__ import annotations

from dataclasses import dataclass

WARNINGS = frozenset({"header_copy_damaged", "frame_repaired", "torn_tail",
                      "keyring_copy_damaged"})


class QuireError(Exception):
    """A fatal error: the vault cannot be opened."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(code + (": " + detail if detail else ""))
        self.code = code
        self.detail = detail


@dataclass(frozen=True)
class Issue:
    code: str
    offset: int | None      # None: an issue without an offset (keys.md §2.3)

    def __str__(self):
        return self.code if self.offset is None else "%s @ %d" % (self.code, self.offset)
