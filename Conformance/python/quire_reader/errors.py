"""Error and issue codes (format.md §12)."""

from __future__ import annotations

from dataclasses import dataclass

# format.md §12, "Warnings: nothing is lost" (the ones a file can show;
# rollback_suspected and device_memory_not_saved need device memory).
WARNINGS = frozenset({"header_copy_damaged", "frame_repaired", "torn_tail",
                      "keyring_copy_damaged", "kdf_limits_exceeded", "commit_fork",
                      "removal_tie", "removal_mutual", "key_epoch_claimed_twice"})


class QuireError(Exception):
    """A fatal error: the vault cannot be opened."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(code + (": " + detail if detail else ""))
        self.code = code
        self.detail = detail


@dataclass(frozen=True)
class Issue:
    code: str
    offset: int

    def __str__(self):
        return "%s @ %d" % (self.code, self.offset)
