"""Keyrings (format.md §8, keys.md §2).

- Credential, SlotOpener: §8.3 and keys.md §2 key slots, each a sealed box
  to an X25519 recipient (device, recovery, passphrase; the runner has no
  escrow credential), records.md §6.4 recovery codes, keys.md §2.3 the
  Argon2id bounds and the derivation budget;
- collect: §8.1 the two copies of a keyring (one keyring per id, its first
  intact copy, keyring_copy_damaged for a damaged copy);
- _parse, _open_inner: §8.1 layout and §8.4 rule 1 (records.md §6; member
  keys valid Ed25519 public keys, keys.md §0);
- _reach: §8.5 which epoch keys the credential reaches;
- _decide, _root_ok, _child_ok, _removals: §8.4 rules 1-7 (trust,
  escrow-free for good, sticky removal, a removed device's own view);
- _raise_no_trust: §8.5, the fatal error when nothing can be trusted.

Entry point: open_keyrings(frames, opener, vault_id) -> Keys, or raises
QuireError (§8.5).
"""

from __future__ import annotations

import hmac
import unicodedata
from dataclasses import dataclass, field

from . import cbor, schema
from .crypto import (aead_open, argon2id, blake2b, ed25519_from_seed,
                     ed25519_to_x25519, ed25519_verify, is_valid_ed25519_public_key,
                     kdf, sealed_box_open, seed_keypair)
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
    """Tries one credential on key slots (keys.md §2, format.md §8.3).

    Every slot is a 98-byte sealed box of `K_e ‖ vault id ‖ u16(e)` to an
    X25519 recipient. The credential gives the X25519 key pair:

    - a device seed: libsodium's conversion of its Ed25519 key pair (§2.1);
    - a recovery key R: the conversion of EdKeyPair(KDF(R, 2, "quire rk"))
      (§2.2, §4); constructing the opener parses the code first
      (recovery_code_invalid, which format.md §8.5 puts first);
    - a passphrase: SeedKeyPair(Argon2id(P, salt, opsLimit, memLimit)), one
      pair per slot parameters, under the derivation budget of §2.3.

    One SlotOpener is one attempt to open the vault: the Argon2id cache
    persists across the key layer's looks (commit recovery makes it look
    again, format.md §10.3), so one attempt runs Argon2id at most 4 times.
    `begin_look` resets what §2.3 tracks per pass over the slots."""

    MAX_DERIVATIONS = 4                  # keys.md §2.3, format.md §11

    def __init__(self, cred: Credential):
        self.cred = cred
        self.own_key = None              # the credential's Ed25519 public key, if any
        self._derived = {}               # (salt, ops, mem) -> (pk, sk)   (§2.3 cache)
        self.begin_look()
        if cred.kind == "recovery":
            r = parse_recovery_code(cred.value)
            seed = kdf(r, 2, CTX_RK)     # keys.md §4; subkey 1 MUST NOT be used
        elif cred.kind == "device":
            seed = cred.value
        elif cred.kind == "passphrase":
            return
        else:
            raise ValueError(cred.kind)
        pk, sk = ed25519_from_seed(seed)
        self.own_key = pk
        self.x_pk, self.x_sk = ed25519_to_x25519(pk, sk)

    def begin_look(self):
        """keys.md §2.3: the flag *opened*, the set *untried*, and the slots
        refused for their cost (step 1), for one pass over the slots."""
        self.opened = False
        self.untried: set = set()
        self.kdf_refused = 0

    def _pair(self, slot):
        """keys.md §2.3 steps 1-2 for a passphrase slot: the X25519 key pair
        to try, or None (refused, skipped or untried)."""
        ops, mem = slot.get("opsLimit"), slot.get("memLimit")
        if not (KDF_OPS[0] <= ops <= KDF_OPS[1] and KDF_MEM[0] <= mem <= KDF_MEM[1]):
            self.kdf_refused += 1                                   # step 1
            return None
        params = (slot.get("salt"), ops, mem)
        if params in self._derived:                                 # step 2
            return self._derived[params]
        if self.opened:
            return None
        if len(self._derived) >= self.MAX_DERIVATIONS:
            self.untried.add(params)
            return None
        pair = seed_keypair(argon2id(self.cred.value, *params))
        self._derived[params] = pair
        return pair

    def open(self, slot, epoch: int, vault_id: bytes):
        """Returns the epoch key the slot wraps for this credential, or None
        (keys.md §2, "Opening a slot")."""
        kind = self.cred.kind
        if slot.get("kind") != kind:
            return None                  # other kinds, and unknown kinds, are skipped
        if kind == "passphrase":
            pair = self._pair(slot)
            if pair is None:
                return None
            pk, sk = pair
            if not hmac.compare_digest(pk, slot.get("publicKey")):   # step 3
                return None
        else:
            pk, sk = self.x_pk, self.x_sk
        m = sealed_box_open(slot.get("box"), pk, sk)
        if m is None or len(m) != 50 or m[32:] != vault_id + u16(epoch):
            return None
        if kind == "passphrase":
            self.opened = True                                      # step 4
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
    # Rule 1: every key in `members` is a valid Ed25519 public key (keys.md
    # §0; records.md §6.3 says "in `members`", so `removed` is not checked).
    # Checked after decoding the content and before the signature.
    if not all(is_valid_ed25519_public_key(m.get("key")) for m in C.get("members", [])):
        kr.inner_bad = True
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
    opener.begin_look()
    reached = KeyStore()
    for kr in reversed(keyrings):
        if kr.damaged or kr.not_a_keyring or kr.index in excluded:
            continue
        # Slots of an escrow-forbidden keyring are tried too: §8.3 says a
        # reader MAY, "only to tell a rejected keyring from a wrong
        # credential"; error-escrow-slot-in-escrow-free-vault requires it
        # (escrow_forbidden, not wrong_recovery_key). Its passphrase slots
        # therefore take part in the derivation budget (keys.md §2.3).
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


def _child_ok(kr: Keyring, by_id: dict) -> str | None:
    """§8.4 rule 5, checked in its order: every parent already trusted; the
    signer a member of a parent; the parents' blob key; escrow-free if any
    parent is; the parents' top epoch (with its key) or one more. Returns
    None when trusted, else the first failure's code: escrow_forbidden for a
    keyring that is not escrow-free after an escrow-free parent,
    keyring_unauthenticated for every other failure."""
    parents = []
    for pid in kr.parents:
        p = by_id.get(pid)
        if p is None or not p.trusted or p.index >= kr.index:
            return "keyring_unauthenticated"
        parents.append(p)
    if not any(kr.signer in p.keys_in("members") for p in parents):
        return "keyring_unauthenticated"
    if any(p.content.get("blobKey") != kr.content.get("blobKey") for p in parents):
        return "keyring_unauthenticated"
    if any(p.public.get("escrowFree", False) for p in parents) \
            and not kr.public.get("escrowFree", False):
        return "escrow_forbidden"
    top = max(p.epoch for p in parents)
    if kr.epoch == top:
        ok = any(p.epoch == top and p.key == kr.key for p in parents)
    else:
        ok = kr.epoch == top + 1
    return None if ok else "keyring_unauthenticated"


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
        elif not kr.parents:
            if _root_ok(kr, vault_id):
                kr.trusted = True                            # rule 4
            else:
                kr.reason = "keyring_unauthenticated"
        else:
            kr.reason = _child_ok(kr, by_id)                 # rule 5
            kr.trusted = kr.reason is None


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
    # keys.md §2.3: the vault opened, yet passphrase slots were refused for
    # their cost: one kdf_limits_exceeded per refused slot, without an offset.
    issues += [Issue("kdf_limits_exceeded", None)] * opener.kdf_refused
    return Keys(held, trusted, issues)


def _raise_no_trust(keyrings: list, opener: SlotOpener, own_removed: set):
    """§8.5, after the frame-level checks: no keyring is trusted, so the
    vault cannot be opened. Raises the fatal error."""
    opened = any(kr.slot_opened for kr in keyrings) or own_removed
    if not opened:
        if opener.kdf_refused:
            raise QuireError("kdf_limits_exceeded",
                             "%d passphrase slot(s) ask for more Argon2id work than allowed"
                             % opener.kdf_refused)
        if opener.untried:
            raise QuireError("kdf_limits_exceeded",
                             "the derivation budget of %d Argon2id runs left %d parameter "
                             "triple(s) untried: someone may have added decoy passphrase "
                             "slots; a device or the recovery key still opens the vault"
                             % (SlotOpener.MAX_DERIVATIONS, len(opener.untried)))
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
