"""Keyrings (format.md §8).

- Credential, SlotOpener: §8.3 key slots (device, recovery, passphrase;
  escrow slots are never opened by a reader's credential), records.md §6.4
  recovery codes, §11 Argon2id limits;
- collect: §8.1 the two copies of a keyring (one keyring per id, its first
  intact copy, keyring_copy_damaged for a damaged copy);
- _parse, _open_inner: §8.1 layout and §8.4 rule 1 (records.md §6);
- _reach: §8.5 which epoch keys the credential reaches;
- _decide, _root_ok, _child_ok, _removals: §8.4 rules 1-7 (trust, sticky
  removal, a removed device's own view);
- _raise_no_trust: §8.5, the fatal error when nothing can be trusted.

Entry point: open_keyrings(frames, opener, vault_id) -> Keys, or raises
QuireError (§8.5).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from . import cbor, schema
from .crypto import (aead_open, argon2id, blake2b, ed25519_from_seed,
                     ed25519_to_x25519, ed25519_verify, kdf, sealed_box_open)
from .errors import Issue, QuireError
from .frames import Frame, u16
from .recovery import parse_recovery_code

CTX_V1 = b"quire v1"
CTX_RK = b"quire rk"

KDF_OPS = (1, 8)                         # §11
KDF_MEM = (8192, 1_073_741_824)

WRONG_CREDENTIAL = {"recovery": "wrong_recovery_key", "passphrase": "wrong_passphrase",
                    "device": "wrong_device_key"}


# ---------------------------------------------------------------------------
# Credentials (§8.3)
# ---------------------------------------------------------------------------

@dataclass
class Credential:
    kind: str            # "recovery" | "passphrase" | "device"
    value: object        # code str | passphrase bytes | seed bytes

    @staticmethod
    def recovery(code: str):
        return Credential("recovery", code)

    @staticmethod
    def passphrase(p: str):
        # §8.3: UTF-8 bytes in Unicode Normalization Form C.
        return Credential("passphrase", unicodedata.normalize("NFC", p).encode("utf-8"))

    @staticmethod
    def device(seed: bytes):
        return Credential("device", seed)


class SlotOpener:
    """Tries one credential on key slots. Constructing it checks the
    credential's syntax (recovery_code_invalid), which §8.5 puts first."""

    def __init__(self, cred: Credential):
        self.cred = cred
        self.kdf_refused = 0
        self._argon = {}
        self.own_key = None          # the credential's Ed25519 public key, if any
        if cred.kind == "recovery":
            r = parse_recovery_code(cred.value)
            self.r_key = kdf(r, 1, CTX_RK)
            self.own_key, _ = ed25519_from_seed(kdf(r, 2, CTX_RK))
        elif cred.kind == "device":
            pk, sk = ed25519_from_seed(cred.value)
            self.own_key = pk
            self.x_pk, self.x_sk = ed25519_to_x25519(pk, sk)
        elif cred.kind != "passphrase":
            raise ValueError(cred.kind)

    def open(self, slot, epoch: int, vault_id: bytes):
        """Returns the epoch key the slot wraps for this credential, or None."""
        kind = self.cred.kind
        if slot.get("kind") != kind:
            return None
        ad = vault_id + u16(epoch) + kind.encode()
        if kind == "recovery":
            return aead_open(self.r_key, slot.get("nonce"), slot.get("wrapped"), ad)
        if kind == "passphrase":
            ops, mem = slot.get("opsLimit"), slot.get("memLimit")
            if not (KDF_OPS[0] <= ops <= KDF_OPS[1] and KDF_MEM[0] <= mem <= KDF_MEM[1]):
                self.kdf_refused += 1
                return None
            params = (slot.get("salt"), ops, mem)
            if params not in self._argon:
                self._argon[params] = argon2id(self.cred.value, *params)
            return aead_open(self._argon[params], slot.get("nonce"), slot.get("wrapped"), ad)
        m = sealed_box_open(slot.get("box"), self.x_pk, self.x_sk)
        if m is None or len(m) != 50 or m[32:] != vault_id + u16(epoch):
            return None
        return m[:32]


# ---------------------------------------------------------------------------
# One keyring
# ---------------------------------------------------------------------------

@dataclass
class Keyring:
    frame: Frame                     # the copy used: the first intact one (§8.1)
    index: int                       # position among the distinct keyrings
    commit_index: int
    damaged: bool = False            # trailer mismatch and no intact copy
    not_a_keyring: bool = False      # breaks its row (§4.3), fails records.md §6, or epoch 0
    public: object = None
    P: bytes = b""
    S: bytes = b""
    escrow_forbidden: bool = False
    # set by opening (reset each time the credential is tried again)
    slot_opened: bool = False        # the credential opened one of its slots
    key: bytes | None = None         # the epoch key that opened the sealed part
    inner_bad: bool = False          # rule 1: opened slot but no key opens it, or bad content
    content: object = None
    signer: bytes = b""
    signature_ok: bool = False
    # trust
    trusted: bool = False
    reason: str | None = None

    @property
    def malformed(self):
        return self.damaged or self.not_a_keyring or self.inner_bad

    @property
    def epoch(self):
        return self.frame.epoch

    @property
    def id(self):
        return self.frame.trailer

    @property
    def offset(self):
        return self.frame.offset

    @property
    def parents(self):
        return list(self.public.get("parents", [])) if self.public is not None else []

    @property
    def slots(self):
        return list(self.public.get("slots", [])) if self.public is not None else []

    def keys_in(self, listname):
        if self.content is None:
            return set()
        return {m.get("key") for m in self.content.get(listname, [])}


def _intact(f: Frame) -> bool:
    """§8.1: a keyring frame is intact when it keeps its kind's row (§4.3)
    and its trailer matches its body."""
    return not f.malformed and blake2b(f.body[:-16], 16) == f.trailer


def collect(frames: list) -> tuple[list, list]:
    """§8.1: one Keyring per keyring id (its first intact copy); damaged
    copies of an intact keyring become keyring_copy_damaged warnings; other
    damaged frames are keyrings of their own that are malformed."""
    intact_ids = {f.trailer for f in frames if _intact(f)}
    keyrings, issues, seen = [], [], set()
    for f in frames:
        if _intact(f):
            if f.trailer not in seen:
                seen.add(f.trailer)
                keyrings.append(Keyring(f, len(keyrings), f.commit_index))
        elif f.trailer in intact_ids or blake2b(f.body[:-16], 16) in intact_ids:
            issues.append(Issue("keyring_copy_damaged", f.offset))
        else:
            keyrings.append(Keyring(f, len(keyrings), f.commit_index, damaged=True))
    for kr in keyrings:
        if not kr.damaged:
            _parse(kr)
    return keyrings, issues


def _parse(kr: Keyring) -> None:
    """§8.4 rule 1 (structure, without keys) and rule 2."""
    if kr.frame.malformed or kr.epoch == 0:        # breaks its kind's row (§4.3)
        kr.not_a_keyring = True
        return
    try:
        K = cbor.decode(kr.frame.body[:-16])
        if not isinstance(K, cbor.CMap):
            raise schema.SchemaError("malformed_keyring", "not a map")
        P, S = K.get("public"), K.get("sealed")
        if type(P) is not bytes or type(S) is not bytes or len(S) < 24 + 16:
            raise schema.SchemaError("malformed_keyring", "public/sealed missing")
        pub = cbor.decode(P)
        schema.check_public(pub)
    except (cbor.CBORError, schema.SchemaError):
        kr.not_a_keyring = True
        return
    kr.public, kr.P, kr.S = pub, P, S
    if pub.get("escrowFree", False) and any(s.get("kind") == "escrow" for s in kr.slots):
        kr.escrow_forbidden = True


def _open_inner(kr: Keyring, key: bytes, vault_id: bytes) -> bool:
    """Opens the sealed part with `key`; checks the content and signature."""
    ad = vault_id + u16(kr.epoch) + kr.P
    inner = aead_open(kdf(key, 3, CTX_V1), kr.S[:24], kr.S[24:], ad)
    if inner is None:
        return False
    kr.key = key
    try:
        I = cbor.decode(inner)
        schema.check_map(I, {"content": schema.is_bytes, "signer": schema.bytes_n(32),
                             "signature": schema.bytes_n(64)},
                         ("content", "signer", "signature"), "keyring inner part")
        C = cbor.decode(I.get("content"))
        schema.check_content(C)
    except (cbor.CBORError, schema.SchemaError):
        kr.inner_bad = True          # authentic under the epoch key, yet not a keyring
        return True
    kr.content = C
    kr.signer = I.get("signer")
    msg = b"quire-keyring-v1" + vault_id + u16(kr.epoch) + kr.P + I.get("content")
    kr.signature_ok = ed25519_verify(kr.signer, msg, I.get("signature"))
    return True


class KeyStore:
    """epoch -> ordered list of distinct keys (§5.1: an epoch may have several)."""

    def __init__(self):
        self.keys: dict[int, list[bytes]] = {}

    def add(self, epoch: int, key: bytes) -> None:
        lst = self.keys.setdefault(epoch, [])
        if key not in lst:
            lst.append(key)

    def get(self, epoch: int) -> list[bytes]:
        return self.keys.get(epoch, [])


# ---------------------------------------------------------------------------
# All keyrings: §8.4 and §8.5
# ---------------------------------------------------------------------------

@dataclass
class Keys:
    held: KeyStore                          # §8.4: keys of trusted keyrings and their history
    trusted: list                           # trusted keyrings, in file order
    issues: list = field(default_factory=list)

    @property
    def blob_key(self):
        """§7.4: the blob key of the newest trusted keyring. Rule 5 makes every
        trusted keyring carry its parents' blob key; the last in file order
        is taken."""
        return self.trusted[-1].content.get("blobKey")


def _reach(keyrings: list, opener: SlotOpener, vault_id: bytes, excluded: set) -> None:
    """§8.5: the credential on every slot, newest first; then each epoch key
    reached opens that epoch's keyrings, whose history carries earlier keys."""
    for kr in keyrings:
        kr.slot_opened, kr.key, kr.inner_bad = False, None, False
        kr.content, kr.signer, kr.signature_ok = None, b"", False
    reached = KeyStore()
    for kr in reversed(keyrings):
        if kr.damaged or kr.not_a_keyring or kr.index in excluded:
            continue
        for slot in kr.slots:
            e = opener.open(slot, kr.epoch, vault_id)
            if e is not None:
                kr.slot_opened = True
                if not kr.escrow_forbidden:      # §8.3: nothing in it is used
                    reached.add(kr.epoch, e)
    changed = True
    while changed:
        changed = False
        for kr in keyrings:
            if kr.damaged or kr.not_a_keyring or kr.escrow_forbidden or kr.key is not None:
                continue
            for key in reached.get(kr.epoch):
                if _open_inner(kr, key, vault_id):
                    changed = True
                    if kr.content is not None:
                        for h in kr.content.get("history", []):
                            reached.add(h.get("epoch"), h.get("key"))
                    break
    for kr in keyrings:
        # rule 1: a slot of it opened, but no key reached for its epoch opens it
        if kr.slot_opened and kr.key is None and not kr.escrow_forbidden:
            kr.inner_bad = True


def _ancestors(kr: Keyring, by_id: dict) -> set:
    seen, stack = set(), list(kr.parents)
    while stack:
        pid = stack.pop()
        if pid not in seen:
            seen.add(pid)
            if pid in by_id:
                stack.extend(by_id[pid].parents)
    return seen


def _root_ok(kr: Keyring, vault_id: bytes) -> bool:
    """§8.4 rule 4."""
    salt = kr.public.get("vaultSalt")
    if salt is None:
        return False
    derived = blake2b(b"quire-vault-id-v1" + kr.signer + salt, 16)
    return derived == vault_id and kr.signer in kr.keys_in("members")


def _child_ok(kr: Keyring, by_id: dict) -> bool:
    """§8.4 rule 5: every parent already trusted; the signer a member of a
    parent; the parents' blob key; the parents' top epoch (with its key) or
    one more."""
    parents = []
    for pid in kr.parents:
        p = by_id.get(pid)
        if p is None or not p.trusted or p.index >= kr.index:
            return False
        parents.append(p)
    if not any(kr.signer in p.keys_in("members") for p in parents):
        return False
    if any(p.content.get("blobKey") != kr.content.get("blobKey") for p in parents):
        return False
    top = max(p.epoch for p in parents)
    if kr.epoch == top:
        return any(p.epoch == top and p.key == kr.key for p in parents)
    return kr.epoch == top + 1


def _decide(keyrings: list, by_id: dict, vault_id: bytes, distrusted: dict, own_removed: set):
    """Rules 1–7 in file order, given the sticky removals found so far."""
    for kr in keyrings:
        kr.trusted, kr.reason = False, None
    for kr in keyrings:
        if kr.malformed:
            kr.reason = "malformed_keyring"                  # rule 1
        elif kr.escrow_forbidden:
            kr.reason = "escrow_forbidden"                   # rule 2
        elif kr.index in own_removed:
            kr.reason = "removed_device_slot"                # rule 6, own key removed
        elif kr.content is None:
            pass                                             # rule 7
        elif not kr.signature_ok:
            kr.reason = "keyring_unauthenticated"            # rule 3
        elif kr.index in distrusted:
            kr.reason = distrusted[kr.index]                 # rule 6
        elif _root_ok(kr, vault_id) if not kr.parents else _child_ok(kr, by_id):
            kr.trusted = True                                # rules 4, 5
        else:
            kr.reason = "keyring_unauthenticated"


def _removals(keyrings: list, by_id: dict, own_key, distrusted: dict, own_removed: set) -> bool:
    """Rule 6 (sticky removal). Returns True when something new was found."""
    new = False
    for r in keyrings:
        if not r.trusted:
            continue
        removed = r.keys_in("removed")
        if not removed:
            continue
        anc = _ancestors(r, by_id)
        for x in keyrings:
            if x is r or x.index in distrusted or x.content is None:
                continue
            if x.signer in removed and x.id not in anc:
                distrusted[x.index] = "keyring_unauthenticated"
                new = True
            elif r.id in _ancestors(x, by_id) and x.keys_in("members") & removed:
                distrusted[x.index] = "removed_device_slot"
                new = True
        if own_key is not None and own_key in removed:
            # A device whose own key R lists as removed reports
            # removed_device_slot at R and at each descendant of R whose
            # sealed part it opened, and treats them as unopened.
            for x in keyrings:
                if (x is r or r.id in _ancestors(x, by_id)) and x.index not in own_removed:
                    if x.key is not None:
                        own_removed.add(x.index)
                        new = True
    return new


def open_keyrings(frames: list, opener: SlotOpener, vault_id: bytes) -> Keys:
    """§8.4 and §8.5 over the committed, well-formed keyring frames (file order)."""
    if not frames:
        raise QuireError("no_keyring")
    keyrings, issues = collect(frames)
    if all(kr.malformed for kr in keyrings):
        raise QuireError("malformed_keyring", "no keyring is well-formed")

    by_id = {kr.id: kr for kr in keyrings if not kr.damaged}
    distrusted: dict[int, str] = {}
    own_removed: set[int] = set()
    own_key = opener.own_key if opener.cred.kind == "device" else None
    _reach(keyrings, opener, vault_id, own_removed)
    while True:
        _decide(keyrings, by_id, vault_id, distrusted, own_removed)
        before = set(own_removed)
        if not _removals(keyrings, by_id, own_key, distrusted, own_removed):
            break
        if own_removed != before:
            _reach(keyrings, opener, vault_id, own_removed)

    trusted = [kr for kr in keyrings if kr.trusted]
    if not trusted:
        _raise_no_trust(keyrings, opener, own_removed)

    held = KeyStore()
    for kr in trusted:
        held.add(kr.epoch, kr.key)
        for h in kr.content.get("history", []):
            held.add(h.get("epoch"), h.get("key"))

    for kr in keyrings:
        # Rejections decided without a key are always reported; the others
        # only for keyrings whose sealed part the reader opened (rule 7).
        if kr.reason in ("malformed_keyring", "escrow_forbidden", "removed_device_slot") \
                or (kr.reason and kr.key is not None):
            issues.append(Issue(kr.reason, kr.offset))
    return Keys(held, trusted, issues)


def _raise_no_trust(keyrings: list, opener: SlotOpener, own_removed: set):
    """§8.5, after the frame-level checks: no keyring is trusted, so the
    vault cannot be opened. Raises the fatal error."""
    opened = any(kr.slot_opened for kr in keyrings) or own_removed
    if not opened:
        if opener.kdf_refused:
            raise QuireError("kdf_limits_exceeded")
        if any(kr.malformed for kr in keyrings):
            raise QuireError("malformed_keyring", "nothing opened and a keyring is damaged")
        raise QuireError(WRONG_CREDENTIAL[opener.cred.kind])
    for kr in keyrings:
        # "the reason of the first rejected keyring, in file order, that the
        # credential reached (one of its slots opened, or a reached key opened
        # its sealed part), rules 1-6". Keyrings a removed device treats as
        # unopened (rule 6) were reached before it found itself removed.
        reached = kr.slot_opened or kr.key is not None or kr.index in own_removed
        if reached and kr.reason:
            raise QuireError(kr.reason, "first rejected keyring reached, at %d" % kr.offset)
    raise QuireError("keyring_unauthenticated", "no keyring is trusted")
