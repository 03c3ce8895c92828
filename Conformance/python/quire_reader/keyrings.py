"""Keyrings (format.md §8, keys.md §2, §5).

- Credential, SlotOpener: §8.3 and keys.md §2 key slots (a sealed box of
  `K ‖ vault id ‖ u32(e)` to an X25519 recipient), records.md §6.4 recovery
  codes, keys.md §2.3 the Argon2id bounds and the derivation budget;
- collect: §8.1 the two copies of a keyring (one keyring per id, its first
  intact copy; keyring_copy_damaged for a damaged copy);
- _parse_public: §8.4 rule 1 before any key, rule 2 from the public part;
- _try_slots, _open: §8.5 steps 2 and 3 (keys by commitment; rule 1 once
  opened, rule 2 once opened, rule 3);
- _parents_first, _rules_1_to_5, _rule_6: §8.4 trust, each keyring after
  its parents wherever it stands;
- _raise_fatal: §8.5, the error when the vault cannot be opened;
- _removed_or_behind: §8.6 removed-device detection (removed, behind).

Entry point: open_keyrings(frames, opener, vault_id) -> Keys, or raises
QuireError.
"""

from __future__ import annotations

import hmac
import struct
import unicodedata
from dataclasses import dataclass, field

from . import cbor, schema
from .crypto import (CTX_RK, SUBKEY_KEYRING, SUBKEY_LINK, aead_open, argon2id, blake2b,
                     ed25519_from_seed, ed25519_verify, ed_to_x, h256, is_valid_ed25519_public_key,
                     kdf, key_commitment, sealed_box_open, seed_keypair, slot_member_tag, subkey)
from .errors import Issue, QuireError
from .frames import BODY_HASH, Frame, is_well_formed
from .payload import PayloadError, unpad
from .recovery import parse_recovery_code

KDF_OPS = (1, 8)                         # §8.3, §11, keys.md §2.3
KDF_MEM = (8192, 268_435_456)
MAX_DERIVATIONS = 4                      # keys.md §2.3, the derivation budget

WRONG_CREDENTIAL = {"recovery": "wrong_recovery_key", "passphrase": "wrong_passphrase",
                    "device": "wrong_device_key", "escrow": "wrong_device_key"}


def u32(x: int) -> bytes:
    return struct.pack("<I", x)


# ---------------------------------------------------------------------------
# Credentials (§8.3, keys.md §2)
# ---------------------------------------------------------------------------

@dataclass
class Credential:
    kind: str            # "recovery" | "passphrase" | "device" | "escrow"
    value: object        # code str | passphrase bytes | seed bytes | (x_pk, x_sk)

    @staticmethod
    def recovery(code: str):
        return Credential("recovery", code)

    @staticmethod
    def passphrase(p: str):
        # keys.md §2.3: the UTF-8 bytes in Unicode Normalization Form C.
        return Credential("passphrase", unicodedata.normalize("NFC", p).encode("utf-8"))

    @staticmethod
    def device(seed: bytes):
        return Credential("device", seed)

    @staticmethod
    def escrow(x_pk: bytes, x_sk: bytes):
        return Credential("escrow", (x_pk, x_sk))


class SlotOpener:
    """One attempt to open a vault with one credential (keys.md §2).

    The X25519 key pair that opens the slots:
    - a device seed: libsodium's conversion of EdKeyPair(seed) (§2.1);
    - a recovery key R: the conversion of EdKeyPair(KDF(R, 2, "quire rk"))
      (§2.2, §4); the code is parsed first [recovery_code_invalid];
    - a passphrase: SeedKeyPair(Argon2id(P, salt, opsLimit, memLimit)), under
      the derivation budget of §2.3;
    - an escrow key pair, as given (§2.4).

    The Argon2id cache lives as long as the attempt (commit recovery makes
    the key layer look again, format.md §10.3); `begin_look` resets the
    triples run, the set *untried* and the refused keyrings of §2.3."""

    def __init__(self, cred: Credential):
        self.cred = cred
        self.kind = cred.kind
        self.own_key = None              # the credential's Ed25519 public key, if any
        self._derived = {}               # (salt, ops, mem) -> (pk, sk)
        self.begin_look()
        if cred.kind == "recovery":
            r = parse_recovery_code(cred.value)
            seed = kdf(r, 2, CTX_RK)     # keys.md §4; subkey 1 MUST NOT be used
        elif cred.kind == "device":
            seed = cred.value
        elif cred.kind == "passphrase":
            return
        elif cred.kind == "escrow":
            self.x_pk, self.x_sk = cred.value
            return
        else:
            raise ValueError(cred.kind)
        pk, sk = ed25519_from_seed(seed)
        self.own_key = pk
        self.x_pk, self.x_sk = ed_to_x(pk, sk)

    def begin_look(self):
        self.chosen: set = set()         # the triples chosen for the budget (choose)
        self.run: set = set()            # those of them run in this look
        self.untried: set = set()
        self.refused: list = []          # keyrings holding a slot refused for its cost

    def choose(self, keyrings_in_file_order) -> None:
        """keys.md §2.3, the derivation budget, before any slot is tried, in
        two passes that each run their triples in order up to the first whose
        derived public key a slot with that triple names:
        1. the first MAX_DERIVATIONS distinct (salt, opsLimit, memLimit) of
           the passphrase slots, newest keyring first and in slot order
           within a keyring, skipping slots outside the bounds;
        2. only if no triple of pass 1 was named: up to MAX_DERIVATIONS more,
           in file order (the bootstrap's), skipping the triples already run.
        Independent of the order slots are tried in (format.md §8.5 step 2)."""
        if self.kind != "passphrase":
            return
        keyrings = list(keyrings_in_file_order)
        names: dict = {}                 # triple -> the public keys slots give it
        for kr in keyrings:
            for slot in kr.slots:
                if slot.get("kind") != "passphrase":
                    continue
                ops, mem = slot.get("opsLimit"), slot.get("memLimit")
                if not (KDF_OPS[0] <= ops <= KDF_OPS[1] and KDF_MEM[0] <= mem <= KDF_MEM[1]):
                    continue
                names.setdefault((slot.get("salt"), ops, mem), []).append(slot.get("publicKey"))

        def pick(rings, skip):
            order: list = []
            for kr in rings:
                for slot in kr.slots:
                    if slot.get("kind") != "passphrase" or len(order) >= MAX_DERIVATIONS:
                        continue
                    params = (slot.get("salt"), slot.get("opsLimit"), slot.get("memLimit"))
                    if params in names and params not in skip and params not in order:
                        order.append(params)
            return order

        def run(order) -> bool:
            for params in order:
                if params not in self._derived:
                    if len(self._derived) >= 2 * MAX_DERIVATIONS:   # at most 8 in all (README item 18)
                        return False
                    self._derived[params] = seed_keypair(argon2id(self.cred.value, *params))
                self.run.add(params)
                pk = self._derived[params][0]
                if any(hmac.compare_digest(pk, named) for named in names[params]):
                    return True
            return False

        first = pick(reversed(keyrings), set())
        self.chosen = set(first)
        if run(first):
            return
        second = pick(keyrings, set(first))
        self.chosen |= set(second)
        run(second)

    def _pair(self, slot, kr):
        """keys.md §2.3 steps 1–2: the key pair to try, or None."""
        ops, mem = slot.get("opsLimit"), slot.get("memLimit")
        if not (KDF_OPS[0] <= ops <= KDF_OPS[1] and KDF_MEM[0] <= mem <= KDF_MEM[1]):
            if kr not in self.refused:                              # step 1
                self.refused.append(kr)
            return None
        params = (slot.get("salt"), ops, mem)
        if params in self.run:                                      # step 2
            return self._derived[params]
        if params not in self.chosen:    # chosen but not run: an earlier passphrase's
            self.untried.add(params)
        return None

    def try_slot(self, slot, kr, vault_id: bytes):
        """§8.3 "Opening". Returns None (the slot does not open: someone
        else's), ("bad", None) (the box opens with the right length, vault id
        and epoch, but the key fails the commitment) or ("key", K)."""
        if slot.get("kind") != self.kind:
            return None                  # other kinds, unknown kinds included, are skipped
        if self.kind == "passphrase":
            pair = self._pair(slot, kr)
            if pair is None:
                return None
            pk, sk = pair
            if not hmac.compare_digest(pk, slot.get("publicKey")):   # step 3
                return None
        else:
            pk, sk = self.x_pk, self.x_sk
        m = sealed_box_open(slot.get("box"), pk, sk)
        if m is None or len(m) != 52 or m[32:48] != vault_id or m[48:52] != u32(kr.epoch):
            return None
        if key_commitment(m[:32]) != kr.key_commit:
            return ("bad", None)
        return ("key", m[:32])


# ---------------------------------------------------------------------------
# One keyring
# ---------------------------------------------------------------------------

def _role(m):
    return m.get("role", "device")


def _may_sign(m) -> bool:
    """§8.4 "Terms": role device or recovery, key type ed25519."""
    return _role(m) in ("device", "recovery") and m.get("keyType", "ed25519") == "ed25519"


@dataclass(eq=False)
class Keyring:
    frame: Frame                     # the copy used: the first intact one (§8.1)
    index: int                       # file order among the keyrings
    commit_index: int                # the commit holding that copy
    damaged: bool = False            # a frame that is not intact and no damaged copy
    # the first failure (§8.4: "each keyring is reported once, for its first failure")
    fail: str | None = None
    fail_public: bool = False        # decided without opening: always reported
    fail_detail: str = ""
    # public part (§8.2)
    P: bytes = b""
    nonce: bytes = b""
    sealed: bytes = b""
    pub: object = None
    epoch: int = 0
    key_commit: bytes = b""
    parents: list = field(default_factory=list)
    links: list = field(default_factory=list)
    escrow_free: bool = False
    required: list = field(default_factory=list)
    critical: list = field(default_factory=list)
    slots: list = field(default_factory=list)
    # what the credential did (§8.5)
    slot_reached: bool = False       # a slot's box opened (length, vault id, epoch)
    slot_bad: bool = False           # ... to a key failing the commitment (§8.3, not rule 1)
    open_tried: bool = False         # a reached key was tried on the sealed part
    opened: bool = False             # the sealed part decrypted
    key: bytes | None = None
    # inner part (records.md §6.3), once opened and checked
    content_ok: bool = False         # rules 1–3 passed once opened
    signer: bytes = b""
    content: object = None
    parent_key_mismatch: bool = False
    # trust
    in_t0: bool = False
    trusted: bool = False
    puppets: set = field(default_factory=set)   # rule 6: keys removed besides `removed`

    @property
    def offset(self):
        return self.frame.offset

    @property
    def id(self):
        return self.frame.body[-BODY_HASH:]

    @property
    def reached(self):
        return self.slot_reached or self.open_tried

    def reject(self, code, detail="", public=False):
        if self.fail is None:
            self.fail, self.fail_detail, self.fail_public = code, detail, public

    # content accessors
    def members(self):
        return self.content.get("members", [])

    def member_keys(self):
        return {m.get("key") for m in self.members()}

    def removed_keys(self):
        return {m.get("key") for m in self.content.get("removed", [])}

    def escrow_keys(self):
        return {e.get("key") for e in self.content.get("escrow", [])}

    def recovery_key(self):
        return next(m.get("key") for m in self.members() if _role(m) == "recovery")

    def signer_may_sign(self, kr) -> bool:
        """The signer of self is a member of `kr` that may sign."""
        return any(m.get("key") == self.signer and _may_sign(m) for m in kr.members())

    def signed_by_recovery(self, by_id) -> bool:
        """§8.4 "Terms": the signer is a member of role recovery of one of
        its parents (of itself, for a root)."""
        holders = [by_id[p] for p in self.parents] if self.parents else [self]
        return any(m.get("key") == self.signer and _role(m) == "recovery"
                   for h in holders for m in h.members())

    def passphrase_keys(self):
        return [s.get("publicKey") for s in self.slots if s.get("kind") == "passphrase"]

    @property
    def blob_key(self):
        return self.content.get("blobKey")

    @property
    def reason(self):
        return self.content.get("reason", "")


def _intact(f: Frame) -> bool:
    """§8.1: keeps its kind's row and its body hash matches."""
    return is_well_formed(f) and f.body_hash_ok()


def _own_key_id(f: Frame) -> bool:
    """§8.1: the frame header's key id is its public part's keyCommit[0..<6]."""
    try:
        pub = cbor.decode(cbor.decode(f.body[:-BODY_HASH]).get("public"))
        kc = pub.get("keyCommit")
        return isinstance(kc, bytes) and len(kc) == 32 and f.key_id == kc[:6]
    except Exception:
        return False


def collect(frames: list, issues: list) -> list:
    """§8.1: one Keyring per keyring id: its first intact copy whose frame
    header's key id is its keyCommit[0..<6], else its first intact copy; an
    intact frame with another key id, next to such a copy, is a damaged copy
    (thirteenth review R13-1: the id does not cover the header); a frame that
    is not intact and whose trailer, or the H256 of whose body without its
    last 32 bytes, is the id of an intact keyring is a damaged copy
    (keyring_copy_damaged, and nothing else); any other frame that is not
    intact is a keyring of its own that fails rule 1."""
    intact_ids = {f.body[-BODY_HASH:] for f, _ in frames if _intact(f)}
    own = {}
    for f, _ in frames:
        if _intact(f) and _own_key_id(f):
            own.setdefault(f.body[-BODY_HASH:], f)
    keyrings, seen = [], set()
    for f, commit_index in frames:
        if _intact(f):
            i = f.body[-BODY_HASH:]
            if i in own and own[i] is not f and not _own_key_id(f):
                issues.append(Issue("keyring_copy_damaged", f.offset))
                continue
            if i not in seen:
                seen.add(i)
                keyrings.append(Keyring(f, len(keyrings), commit_index))
        elif f.body[-BODY_HASH:] in intact_ids or h256(f.body[:-BODY_HASH]) in intact_ids:
            issues.append(Issue("keyring_copy_damaged", f.offset))
        else:
            kr = Keyring(f, len(keyrings), commit_index, damaged=True)
            kr.reject("malformed_keyring", "a damaged keyring frame", public=True)
            keyrings.append(kr)
    return keyrings


def _exact_map(v, fields: dict) -> bool:
    """`K` and `I` (§8.1): exactly these text-keyed fields, of these types."""
    return (isinstance(v, cbor.CMap) and len(v.pairs) == len(fields)
            and all(type(k) is str and k in fields and fields[k](x) for k, x in v.pairs))


def _parse_public(kr: Keyring) -> None:
    """§8.4 rule 1 before any key, then rule 2 from the public part."""
    try:
        K = cbor.decode(kr.frame.body[:-BODY_HASH])
        if not _exact_map(K, {"nonce": schema.bytes_n(24), "public": schema.is_bytes,
                              "sealed": lambda v: type(v) is bytes and len(v) >= 17}):
            raise schema.SchemaError("malformed_keyring", "K is not {nonce, public, sealed}")
        pub = cbor.decode(K.get("public"))
        schema.check_public(pub)
    except (cbor.CBORError, schema.SchemaError) as e:
        kr.reject("malformed_keyring", str(e), public=True)
        return
    kr.P, kr.nonce, kr.sealed, kr.pub = K.get("public"), K.get("nonce"), K.get("sealed"), pub
    kr.epoch = pub.get("epoch")
    kr.key_commit = pub.get("keyCommit")
    kr.parents = list(pub.get("parents", []))
    kr.links = list(pub.get("links", []))
    kr.escrow_free = pub.get("escrowFree", False)
    kr.required = list(pub.get("required", []))
    kr.critical = list(pub.get("critical", []))
    kr.slots = list(pub.get("slots", []))
    if kr.frame.key_id != kr.key_commit[:6]:
        kr.reject("malformed_keyring", "the header's key id is not keyCommit[0..<6]", public=True)
    elif len(kr.links) != len(kr.parents):
        kr.reject("malformed_keyring", "|links| ≠ |parents|", public=True)
    elif len(set(kr.parents)) != len(kr.parents):
        kr.reject("malformed_keyring", "a parent is named twice", public=True)
    elif kr.escrow_free and not all(_escrow_free_slot(s, kr.required) for s in kr.slots):
        kr.reject("escrow_forbidden", "an escrow slot, or an unknown slot not required or "
                  "naming no member, in an escrow-free keyring", public=True)


KNOWN_SLOT_KINDS = ("device", "recovery", "passphrase", "escrow")


def _escrow_free_slot(slot, required) -> bool:
    """format.md §8.4 rule 2, public check: a slot an escrow-free keyring may
    hold. An unknown kind only when `required` lists it and the slot names a
    member (`member`: bytes(32)); whose tag it is is checked once opened."""
    kind = slot.get("kind")
    if kind in ("device", "recovery", "passphrase"):
        return True
    if kind in KNOWN_SLOT_KINDS:                 # escrow
        return False
    member = slot.get("member")
    return kind in required and isinstance(member, bytes) and len(member) == 32


def _indexed_in_step_1(kr: Keyring) -> bool:
    """§8.5 step 1: a keyring whose public part decodes (the reference's
    KeyringRecord: no parent named twice, one link per parent)."""
    return (kr.pub is not None and len(kr.links) == len(kr.parents)
            and len(set(kr.parents)) == len(kr.parents))


def _passes_rule1_public(kr: Keyring) -> bool:
    # A slot that opens to a key failing the commitment is reported like a
    # public failure (always), but it is §8.3's check, not rule 1's: such a
    # keyring still passes rule 1's public checks, and it was not opened, so
    # §8.6 counts it (Python README item 19).
    return kr.pub is not None and not (kr.fail_public and kr.fail == "malformed_keyring" and not kr.slot_bad)


# ---------------------------------------------------------------------------
# All keyrings: §8.4, §8.5
# ---------------------------------------------------------------------------

@dataclass
class HeldKey:
    key: bytes
    commit: bytes
    epoch: int               # §5.1: the highest epoch of the trusted keyrings with it
    blob_key: bytes          # §7.3: the blob key of the trusted keyrings with it

    @property
    def key_id(self):
        return self.commit[:6]


@dataclass
class Keys:
    held: list                               # [HeldKey], ascending key commitment
    trusted: list                            # trusted keyrings, file order
    keyrings: list                           # every keyring, file order
    issues: list = field(default_factory=list)
    removed: bool = False                    # §8.6: the credential was removed
    behind: bool = False                     # §8.6: an authenticated newer keyring

    def candidates(self, key_id: bytes) -> list:
        """§5.1: the held keys with this key id, ascending key commitment."""
        return [h for h in self.held if h.key_id == key_id]

    def by_commit(self, commit: bytes):
        return next((h for h in self.held if h.commit == commit), None)

    def signing_members(self) -> set:
        """§9.4: keys of members that may sign of some trusted keyring."""
        return {m.get("key") for kr in self.trusted for m in kr.members() if _may_sign(m)}

    def removed_members(self) -> set:
        """§9.4 step 5: keys some trusted keyring lists in `removed`."""
        return set().union(*(kr.removed_keys() | kr.puppets for kr in self.trusted))


class _Reach:
    """§8.5 steps 2 and 3 for one look."""

    def __init__(self, keyrings, opener: SlotOpener, vault_id: bytes):
        self.keyrings = keyrings
        self.opener = opener
        self.vault_id = vault_id
        self.indexed = [kr for kr in keyrings if _passes_rule1_public(kr)]
        self.by_id = {kr.id: kr for kr in self.indexed}
        # §8.5 step 3: "names a keyring of the file" is a keyring indexed in
        # step 1, whose public part decodes, even one that then fails rule 1
        # (its frame header's key id): a parent key that does not match it
        # stops the child's parent keys (damaged-keyring-parent-fails-rule-1-
        # stops-parent-keys).
        self.named = {kr.id: kr for kr in keyrings if _indexed_in_step_1(kr)}
        self.by_commit: dict = {}
        for kr in self.indexed:
            self.by_commit.setdefault(kr.key_commit, []).append(kr)
        self.reached: dict = {}              # key commitment -> epoch key
        self._commits: dict = {}             # epoch key -> commitment (each hashed once)
        self._queue: list = []
        self._links: dict = {}               # (keyring index, parent index) -> link opens
        self.root_reached = False            # a root passing rule 4's vault id check opened
        self.trials = 0                      # keyrings whose slots were tried

    def commitment(self, key: bytes) -> bytes:
        if key not in self._commits:
            self._commits[key] = key_commitment(key)
        return self._commits[key]

    def reach(self, key: bytes, commit: bytes) -> None:
        if commit not in self.reached:
            self.reached[commit] = key
            self._queue.append(commit)

    def slots(self) -> None:
        """Step 2 (§8.5), interleaved with step 3: whose slots are tried,
        in three phases. Bootstrap: keyrings in file order until the root
        key is reached (a keyless writer's keyrings placed before the
        first one that opens for the credential are tried: position in
        the file, not time, ninth review R9-3). Gate: the newest untried
        keyring that is linked (some parent's key is reached, and every
        link whose parent's key is reached opens under it), again and
        again. Fallback, only if a linked keyring's key is
        still unreached: every other keyring, newest first. Each keyring is
        tried at most once, and not once its key is reached."""
        tried = set()

        def turn(kr) -> None:
            self.chain()
            if kr.index in tried or kr.key_commit in self.reached:
                return
            tried.add(kr.index)
            self.trials += 1
            for slot in kr.slots:
                got = self.opener.try_slot(slot, kr, self.vault_id)
                if got is None:
                    continue
                kr.slot_reached = True
                if got[0] == "bad":
                    kr.slot_bad = True
                    kr.reject("malformed_keyring", "a slot opens to a key that fails the "
                              "key commitment", public=True)
                elif kr.fail != "escrow_forbidden":
                    self.reach(got[1], kr.key_commit)
                break

        self.opener.choose(self.indexed)                         # keys.md §2.3
        for kr in self.indexed:                                  # bootstrap
            self.chain()
            if self.root_reached:
                break
            turn(kr)
        while True:                                              # gate
            self.chain()
            linked = [kr for kr in self.indexed if kr.index not in tried
                      and kr.key_commit not in self.reached and self.linked(kr)]
            if not linked:
                break
            turn(linked[-1])
        if any(kr.key_commit not in self.reached and self.linked(kr)
               for kr in self.indexed):                          # fallback
            for kr in reversed(self.indexed):
                turn(kr)
        self.chain()

    def linked(self, kr: Keyring) -> bool:
        """§8.5 step 2: a link of the keyring opens under the key of its
        parent, reached (the link key, ad_i, 96 bytes), and no link under a
        reached parent's key fails to. Only someone holding a parent's key
        can make a link that opens: a keyless writer cannot."""
        some = False
        for i, pid in enumerate(kr.parents):
            parent = self.by_id.get(pid)
            if parent is None or parent.key_commit not in self.reached:
                continue
            if (kr.index, i) not in self._links:         # each link opened once
                key = self.reached[parent.key_commit]
                ad = (b"quire-keyring-link-v2" + self.vault_id + u32(kr.epoch) + kr.key_commit
                      + pid)
                link = kr.links[i]
                pt = aead_open(subkey(key, SUBKEY_LINK), link[:24], link[24:], ad)
                self._links[(kr.index, i)] = pt is not None and len(pt) == 96
            if not self._links[(kr.index, i)]:
                return False
            some = True
        return some

    def chain(self) -> None:
        """Step 3: every keyring of each reached key is opened, once; its
        parentKeys reach its parents' keys."""
        while self._queue:
            commit = self._queue.pop(0)
            for kr in self.by_commit.get(commit, []):
                if not kr.open_tried and kr.fail is None:
                    self._open(kr, self.reached[commit])

    def _open(self, kr: Keyring, key: bytes) -> None:
        kr.open_tried, kr.key = True, key
        vid = self.vault_id
        padded = aead_open(subkey(key, SUBKEY_KEYRING), kr.nonce, kr.sealed, vid + kr.P)
        if padded is None:
            kr.reject("malformed_keyring", "the key with its commitment does not open it")
            return
        kr.opened = True
        try:
            try:
                inner = unpad(padded)
            except PayloadError:
                raise schema.SchemaError("malformed_keyring", "pad(I) is not canonical")
            I = cbor.decode(inner)
            if not _exact_map(I, {"signer": schema.bytes_n(32), "content": schema.is_bytes,
                                  "signature": schema.bytes_n(64)}):
                raise schema.SchemaError("malformed_keyring", "I is not {signer, content, signature}")
            C = cbor.decode(I.get("content"))
            schema.check_content(C)
        except (cbor.CBORError, schema.SchemaError) as e:
            kr.reject("malformed_keyring", str(e))
            return
        members = C.get("members", [])
        if len(C.get("parentKeys", [])) != len(kr.parents):
            kr.reject("malformed_keyring", "|parentKeys| ≠ |parents|")
            return
        if not all(is_valid_ed25519_public_key(m.get("key")) for m in members
                   if m.get("keyType", "ed25519") == "ed25519"):
            kr.reject("malformed_keyring", "a member key is not a valid Ed25519 public key")
            return
        if sum(1 for m in members if _role(m) == "recovery") != 1:
            kr.reject("malformed_keyring", "not exactly one recovery member")
            return
        readers = (sum(1 for m in members if _role(m) == "device") + len(C.get("escrow", []))
                   + sum(1 for s in kr.slots if s.get("kind") == "passphrase"))
        if readers > 255:                                        # rule 1: readers
            kr.reject("malformed_keyring", "more than 255 readers")
            return
        if kr.escrow_free:                                       # rule 2, once opened
            kinds = [s.get("kind") for s in kr.slots]
            ppk = [s.get("publicKey") for s in kr.slots if s.get("kind") == "passphrase"]
            # device slots by members of role device and key type ed25519 (a
            # member of another key type has slots of its own kind); each
            # unknown kind's slot names a device or recovery member by its tag
            # under the epoch key over the slot's kind, at most one slot per
            # (member, kind) (R10-4, R13-2, R14-4)
            tagged = [(s.get("member"), s.get("kind")) for s in kr.slots
                      if s.get("kind") not in KNOWN_SLOT_KINDS]
            readers = {(slot_member_tag(key, vid, m.get("key"), kind), kind)
                       for kind in {t[1] for t in tagged if isinstance(t[1], str)} for m in members
                       if _role(m) in ("device", "recovery")}
            if (kinds.count("device") != sum(1 for m in members if _role(m) == "device"
                                             and m.get("keyType", "ed25519") == "ed25519")
                    or kinds.count("recovery") != 1 or len(set(ppk)) != len(ppk)
                    or any(t not in readers for t in tagged) or len(set(tagged)) != len(tagged)):
                kr.reject("escrow_forbidden", "slots do not match the members")
                return
        signer = I.get("signer")
        msg = b"quire-keyring-v2" + vid + h256(kr.P) + kr.nonce + h256(I.get("content"))
        if not ed25519_verify(signer, msg, I.get("signature")):    # rule 3
            kr.reject("keyring_unauthenticated", "the signature does not verify")
            return
        kr.content, kr.signer, kr.content_ok = C, signer, True
        salt = C.get("vaultSalt")                # sealed in C (tenth review R10-8)
        if (not kr.parents and kr.epoch == 1 and salt is not None
                and blake2b(b"quire-vault-id-v2" + signer + kr.key_commit + salt, 16) == vid):
            self.root_reached = True             # step 2: the bootstrap ends
        for pid, pkey in zip(kr.parents, C.get("parentKeys", [])):
            parent = self.named.get(pid)         # anywhere in the file
            if parent is None:
                continue                         # rule 5.1 will reject the keyring
            c = self.commitment(pkey)
            if c != parent.key_commit:
                kr.parent_key_mismatch = True    # rule 5.2, reported after 5.1
                break
            self.reach(pkey, c)


def _link_message(kr: Keyring, vault_id: bytes) -> bytes:
    return (b"quire-keyring-link-v2" + vault_id + u32(kr.epoch) + kr.key_commit
            + h256(b"".join(kr.parents)))


def _open_link(kr: Keyring, i: int, parent_key: bytes, vault_id: bytes):
    """§8.2: links[i] under the link key of parents[i]'s epoch key; returns
    the signer when it opens to 96 bytes whose signature verifies."""
    link = kr.links[i]
    ad = (b"quire-keyring-link-v2" + vault_id + u32(kr.epoch) + kr.key_commit + kr.parents[i])
    pt = aead_open(subkey(parent_key, SUBKEY_LINK), link[:24], link[24:], ad)
    if pt is None or len(pt) != 96:
        return None
    if not ed25519_verify(pt[:32], _link_message(kr, vault_id), pt[32:]):
        return None
    return pt[:32]


def _child_rules(kr: Keyring, by_id: dict, anc: dict, vault_id: bytes):
    """§8.4 rule 5.1–5.11 in order: None, or (code, detail) of the first
    failure. `anc` holds the ancestor sets of the keyrings already in T0."""
    parents = []
    for pid in kr.parents:                                               # 5.1
        p = by_id.get(pid)
        if p is None or not p.in_t0:
            return "keyring_unauthenticated", "a parent is missing or not trusted"
        parents.append(p)
    if kr.parent_key_mismatch:                                           # 5.2
        return "malformed_keyring", "a parent key does not match its parent"
    ancestors = set(parents).union(*(anc[p] for p in parents))
    ancestor_removed = set().union(*(a.removed_keys() for a in ancestors))
    if not any(kr.signer_may_sign(p) for p in parents) or \
            kr.signer in ancestor_removed:                               # 5.3
        return "keyring_unauthenticated", "the signer is not a member of a parent that may sign"
    answers = [] if kr.signed_by_recovery(by_id) else kr.content.get("answers", [])
    for aid in answers:                                                  # 5.3, answers
        a = by_id.get(aid)
        if a is not None and a.content_ok and not a.parent_key_mismatch \
                and kr.signer in a.removed_keys():
            return "keyring_unauthenticated", "it answers a keyring that removed its signer"
    top = max(p.epoch for p in parents)                                  # 5.4
    if kr.epoch == top:
        if not any(p.epoch == top and p.key_commit == kr.key_commit for p in parents):
            return "keyring_unauthenticated", "the same epoch with another key"
    elif kr.epoch != top + 1:
        return "keyring_unauthenticated", "the epoch is not the parents' or one more"
    elif any(a.key_commit == kr.key_commit for a in ancestors):
        return "keyring_unauthenticated", "a new epoch with an ancestor's key"
    same = [p for p in parents if p.key_commit == kr.key_commit]         # 5.5
    if same:
        if any(p.blob_key != kr.blob_key for p in same):
            return "keyring_unauthenticated", "the blob key differs from its parent's with the same key"
    elif kr.reason != "rekey" and kr.blob_key not in {p.blob_key for p in parents}:
        return "keyring_unauthenticated", "the blob key changed without a rekey"
    # 5.6: a keyring the recovery key signs may drop them (R12-1).
    recovery_signed = kr.signed_by_recovery(by_id)
    needed = set().union(*(p.required for p in parents))                 # 5.6
    if not recovery_signed and not needed <= set(kr.required):
        return "keyring_unauthenticated", "a required slot kind was dropped"
    if not recovery_signed and \
            not set().union(*(p.critical for p in parents)) <= set(kr.critical):
        return "keyring_unauthenticated", "a critical extension was dropped"
    if any(p.escrow_free for p in parents) and not kr.escrow_free:       # 5.7
        return "escrow_forbidden", "escrow-free is for good"
    rec = kr.recovery_key()                                              # 5.8
    parent_recs = {p.recovery_key() for p in parents}
    replaces = kr.reason == "recovery" and parent_recs <= (kr.removed_keys() | ancestor_removed)
    if rec not in parent_recs and not replaces:
        return "keyring_unauthenticated", "the recovery member is not a parent's"
    if kr.member_keys() & (kr.removed_keys() | ancestor_removed):        # 5.9
        return "removed_device_slot", "a member is listed as removed"
    removes = kr.removed_keys()                                          # 5.10
    if removes:
        members = set().union(*(p.member_keys() for p in parents))
        escrow = set().union(*(p.escrow_keys() for p in parents))
        phrases = {k for p in parents for k in p.passphrase_keys()}
        kinds = {s.get("kind") for p in parents for s in p.slots}
        new_members = kr.member_keys() - members
        if replaces and rec not in parent_recs:
            new_members.discard(rec)
        if not removes <= members:
            return "keyring_unauthenticated", "it removes a key that is no parent's member"
        if kr.epoch <= top:
            return "keyring_unauthenticated", "a removal keeps its parents' epoch"
        if not (len(removes) == 1 or removes <= parent_recs - {rec}
                or kr.signed_by_recovery(by_id)):
            return "keyring_unauthenticated", "a device's removal removes more than one"
        if (new_members or not kr.escrow_keys() <= escrow
                or not set(kr.passphrase_keys()) <= phrases
                or not {s.get("kind") for s in kr.slots} <= kinds):
            return "keyring_unauthenticated", "a removal adds a reader"
    for i, p in enumerate(parents):                                      # 5.11
        if _open_link(kr, i, p.key, vault_id) != kr.signer:
            return "keyring_unauthenticated", "a link does not open or names another signer"
    return None


def _root_rules(kr: Keyring, vault_id: bytes):
    """§8.4 rule 4: epoch 1, the vault id from signer ‖ keyCommit ‖ salt, a
    signer that may sign; then the root's own removed list: none of its
    members [removed_device_slot], and empty."""
    salt = kr.content.get("vaultSalt")           # sealed in C, never P (R10-8)
    if kr.epoch != 1:
        return "keyring_unauthenticated", "a root of an epoch other than 1"
    if salt is None:
        return "keyring_unauthenticated", "a root without vaultSalt"
    if blake2b(b"quire-vault-id-v2" + kr.signer + kr.key_commit + salt, 16) != vault_id:
        return "keyring_unauthenticated", "the signer, keyCommit and salt do not derive the vault id"
    if not kr.signer_may_sign(kr):
        return "keyring_unauthenticated", "the signer is not a member of the root that may sign"
    if kr.member_keys() & kr.removed_keys():
        return "removed_device_slot", "a member is listed as removed"
    if kr.removed_keys():
        return "keyring_unauthenticated", "a root removes a key"
    return None


def _parents_first(keyrings: list, by_id: dict) -> list:
    """§8.4: an order in which every keyring comes after its parents (the
    parent graph has no cycle: an id is a hash over the parents' ids);
    file order among keyrings that do not depend on each other."""
    order, state = [], {}
    for root in keyrings:
        stack = [(root, False)]
        while stack:
            kr, done = stack.pop()
            if done:
                if state.get(kr) != 2:
                    state[kr] = 2
                    order.append(kr)
                continue
            if kr in state:
                continue
            state[kr] = 1
            stack.append((kr, True))
            for pid in reversed(kr.parents):
                p = by_id.get(pid)
                if p is not None and p not in state:
                    stack.append((p, False))
    return order


def _rules_1_to_5(keyrings: list, by_id: dict, vault_id: bytes):
    """§8.4 rules 1–5 over the opened keyrings, each after its parents,
    wherever it stands: T0 (file order) and the ancestor sets of T0."""
    anc: dict = {}
    for kr in _parents_first(keyrings, by_id):
        if kr.fail is not None or not kr.content_ok:
            continue                                         # rejected, or rule 7
        failure = (_child_rules(kr, by_id, anc, vault_id) if kr.parents
                   else _root_rules(kr, vault_id))
        if failure:
            kr.reject(*failure)
        else:
            kr.in_t0 = True
            anc[kr] = set().union(*({by_id[p]} | anc[by_id[p]] for p in kr.parents)) \
                if kr.parents else set()
    return [kr for kr in keyrings if kr.in_t0], anc


# §8.4 "Termination": passes after the first, at most.
PASS_LIMIT = 4


def _seen_by(r, t0: list, by_id: dict, anc: dict, aos: dict, added: dict) -> set:
    """§8.4 rule 6: the keys removal `r` saw, which are never its puppets --
    those listed in `members` of `r`, of an ancestor of `r`, or of a *clean*
    descendant of `r`: one whose parents are all `r`, ancestors of `r` or
    clean, signed by a member `r` keeps or by a key a clean descendant
    enrolled (a scan in ancestor order, independent of the puppets)."""
    seen = set().union(*(x.member_keys() for x in aos[r]))
    legit = set(r.member_keys()) - set(r.removed_keys())
    clean = set()
    for d in sorted((x for x in t0 if r in anc[x]), key=lambda x: len(anc[x])):
        if d.signer in legit and all(by_id[p] in aos[r] or by_id[p] in clean for p in d.parents):
            clean.add(d)
            legit |= set(added[d])
            seen |= set(d.member_keys())
    return seen


def _rule_6(t0: list, by_id: dict, anc: dict, ties: list, mutuals: list = None) -> set:
    """§8.4 rule 6 (order-independent removal), definition by definition.
    Returns the keyrings that are cut or descend from a cut keyring; appends
    to `ties` the removals the last pass settled as a tie (removal_tie), to
    `mutuals` the removals that stand beside an answer (removal_mutual), and
    sets each removal's `puppets` (keys it removes besides its list)."""
    if mutuals is None:
        mutuals = []
    t0set = set(t0)
    # A keyring and its ancestors: *behind* looks at both (seventh review R7-1).
    aos = {k: anc[k] | {k} for k in t0}

    def concurrent(a, b):
        return a is not b and a not in anc[b] and b not in anc[a]

    rec_signed = {kr for kr in t0 if kr.signed_by_recovery(by_id)}
    by_signer: dict = {}
    for kr in t0:
        by_signer.setdefault(kr.signer, []).append(kr)
    removers: dict = {}                       # key -> keyrings that remove it
    for kr in t0:
        for key in kr.removed_keys():
            removers.setdefault(key, []).append(kr)
    holders: dict = {}                        # key -> keyrings whose recovery member it is
    for kr in t0:
        holders.setdefault(kr.recovery_key(), []).append(kr)

    # R's puppets: every key enrolled (listed by no parent) by a keyring that
    # is neither R nor an ancestor of R and whose signer R removes or is a
    # puppet of R -- a fixpoint, from the keys R lists (seventh review R7-2)
    # -- except a key *vouched for* against R: one R *saw* (listed in
    # `members` of R, of an ancestor of R, or of a clean descendant of R)
    # and does not remove, or one that a keyring outside R's ancestors
    # signed by a vouched-for key enrols (eighth review R8-1: enrolling
    # needs only a public key, so a removed member can enrol anyone's;
    # ninth review R9-1: vouching starts from the keys R keeps, never from
    # puppets, so keys a removed member made enrol each other are puppets).
    added = {}
    for kr in t0:
        if kr.parents:
            parent_keys = set().union(*(by_id[p].member_keys() for p in kr.parents))
            added[kr] = [key for key in kr.member_keys() if key not in parent_keys]
        else:
            added[kr] = []
    removes: dict = {}
    for r in t0:
        r.puppets = set()
        if not r.removed_keys():
            continue
        eff = set(r.removed_keys())
        seen = _seen_by(r, t0, by_id, anc, aos, added)
        # Vouched for (a least fixpoint that does not look at puppets, so
        # the order of the passes does not matter): the keys R saw that it
        # does not remove, and every key that a keyring outside R and its
        # ancestors, signed by a vouched-for key, enrols. The puppets: the
        # keys a keyring outside R and its ancestors enrols, signed by a key
        # R removes or a puppet, that are not vouched for.
        def close(keys, other):
            # Adds to `keys` every key a keyring outside R and its ancestors,
            # signed by one of `keys`, enrols, unless it is in `other`.
            grew = True
            while grew:
                grew = False
                for k in t0:
                    if k is r or k in anc[r] or k.signer not in keys:
                        continue
                    for key in added[k]:
                        if key not in keys and key not in other:
                            keys.add(key)
                            grew = True

        vouched = set(seen) - eff
        close(vouched, eff)
        close(eff, vouched)
        removes[r] = eff
        r.puppets = eff - set(r.removed_keys())

    # K defies R: concurrent, and R removes K's signer, or R is signed by a
    # recovery member and K removes R's signer.
    defies: dict = {kr: set() for kr in t0}
    definers: dict = {kr: set() for kr in t0}
    for r in t0:
        pairs = [k for key in r.removed_keys() for k in by_signer.get(key, [])]
        if r in rec_signed:
            pairs += removers.get(r.signer, [])
        for k in pairs:
            if concurrent(k, r):
                defies[k].add(r)
                definers[r].add(k)
    # K opposes R: K defies R, or a puppet of R's signed K, which is neither
    # R nor an ancestor of R (concurrent, or after R: rule 5.3 does not
    # know puppets).
    opposes: dict = {kr: set(defies[kr]) for kr in t0}
    opposers: dict = {kr: set(definers[kr]) for kr in t0}
    for r in t0:
        for key in r.puppets:
            for k in by_signer.get(key, []):
                if k is not r and k not in anc[r]:
                    opposes[k].add(r)
                    opposers[r].add(k)

    def mutual(k, r):
        return r in defies[k] and k in defies[r]

    mutual_with: dict = {r: {m for m in definers[r] if mutual(m, r)} for r in t0}

    def judge(behind, primary):
        """One pass of rule 6: (contested, silenced, rsf) for a
        reading of *behind* and of *primary*."""
        def against(z, r):
            return r in opposes[z] or behind(z, r)

        memo_rsf: dict = {}

        def rsf(z, r):
            """Z is recovery-signed for R."""
            if z not in rec_signed:
                return False
            if (z, r) not in memo_rsf:
                memo_rsf[(z, r)] = any(not against(y, r) for y in holders.get(z.signer, []))
            return memo_rsf[(z, r)]

        memo_contested: dict = {}

        def contested(r):
            if r not in memo_contested:
                def counts(x):
                    if behind(x, r):
                        return rsf(x, r) and not rsf(r, x)
                    return rsf(x, r) or (primary(x) and not mutual(r, x))
                memo_contested[r] = any(counts(x) for x in defies[r])
            return memo_contested[r]

        memo_silenced: dict = {}

        def silenced(r):
            if r not in memo_silenced:
                memo_silenced[r] = any(behind(r, r2) and not contested(r2) and not rsf(r, r2)
                                       for a in aos[r] for r2 in opposes[a])
            return memo_silenced[r]

        return contested, silenced, rsf

    # Z is behind R when R is primary and a keyring that opposes R without
    # being mutual with it or an ancestor of a keyring mutual with it (a
    # starter) is an ancestor of Z, or is Z itself while R opposes Z not
    # (seventh review R7-1: a removed member's own keyring lies on its
    # branch; a removal that a puppet's keyring answers does not).
    def starters_of(r):
        return {y for y in opposers[r]
                if y not in mutual_with[r] and not any(y in anc[m] for m in mutual_with[r])}
    starters = {r: starters_of(r) for r in t0}
    relevant = {kr for kr in t0 if opposes[kr] or opposers[kr]}

    def on_branch_against(z, r):
        return not anc[z].isdisjoint(starters[r]) or (z in starters[r] and z not in opposes[r])

    def passing(prim):
        def behind(z, r):
            return r in prim and on_branch_against(z, r)
        return behind, judge(behind, lambda x: x in prim)

    # Passes: the first takes every keyring as primary, each next one what
    # the pass before did not silence, until stable — at most five passes
    # (4 after the first). If the fifth is not a fixpoint, one last pass
    # (six in all): primary in either of the last two passes, and every
    # two removals the last two passes alternated on, each on a branch the
    # other's removed member started, are treated as mutual (a tie,
    # scenario 12); each removal alternated on is reported (removal_tie).
    prim = set(relevant)
    behind, (contested, silenced, rsf) = passing(prim)
    stable = False
    older = prim
    for _ in range(PASS_LIMIT + 1):
        nxt = {r for r in relevant if not silenced(r)}
        if nxt == prim:
            stable = True
            break
        older, prim = prim, nxt
        behind, (contested, silenced, rsf) = passing(prim)
    tied: list = []
    if not stable:
        tied = [r for r in t0 if r in relevant and (r in prim) != (r in older) and r.removed_keys()]

        tie_pairs = {(r, r2) for r in tied for r2 in tied
                     if r is not r2 and on_branch_against(r, r2) and on_branch_against(r2, r)}
        if tie_pairs:
            for (r, r2) in tie_pairs:
                mutual_with[r] = mutual_with[r] | {r2}
            starters = {r: starters_of(r) for r in t0}
            plain_mutual = mutual

            def mutual(k, r):
                return plain_mutual(k, r) or (k, r) in tie_pairs
        prim = prim | older
        behind, (contested, silenced, rsf) = passing(prim)
    for r in tied:
        ties.append(r)

    def cuts(r, k):
        if contested(r) or silenced(r):
            return False
        if behind(r, k) and rsf(k, r):
            return False
        if rsf(r, k):
            return True
        return not mutual(k, r) and not any(k in anc[m] for m in mutual_with[r])

    cut = {k for k in t0 if any(cuts(r, k) for r in opposes[k])}
    out = set(cut) | {kr for kr in t0 if not anc[kr].isdisjoint(cut)}
    # A removal that stands beside an answer that stands (removal_mutual).
    for r in t0:
        if r in removes and r not in out and r not in tied and any(k not in out for k in opposers[r]):
            mutuals.append(r)
    for kr in t0:
        if kr in cut:
            kr.reject("keyring_unauthenticated", "signed by a removed member, or replaces "
                      "the recovery key that signed a concurrent keyring")
        elif kr in out:
            kr.reject("keyring_unauthenticated", "a parent is not trusted")
    assert out <= t0set
    return out


def _raise_fatal(keyrings: list, opener: SlotOpener):
    """§8.5: the vault cannot be opened (no keyring is trusted)."""
    reached = [kr for kr in keyrings if kr.reached]
    if not reached:
        if opener.refused:
            raise QuireError("kdf_limits_exceeded",
                             "a passphrase slot asks for more Argon2id work than §11 allows")
        if opener.untried:
            raise QuireError("kdf_limits_exceeded",
                             "the passphrase opened no slot of the %d newest parameter "
                             "triples (the derivation budget), and %d other triple(s) were "
                             "not tried: it may be an old passphrase, or someone may have "
                             "added decoy passphrase slots; a device or the recovery key "
                             "still opens the vault"
                             % (MAX_DERIVATIONS, len(opener.untried)))
    if not any(kr.opened for kr in keyrings) and any(
            kr.fail == "malformed_keyring" for kr in reached):
        raise QuireError("malformed_keyring", "a keyring the credential reached is malformed")
    if not reached:
        # "no keyring is free of problems (every one failed rule 1, or is a
        # damaged frame)": rule 1 only. A keyring rejected by rule 2 from its
        # public part had its slots tried (step 2), and none opened: the
        # credential is wrong (error-every-keyring-escrow-forbidden). This
        # repeats the first case, raised in open_keyrings already.
        if not any(_passes_rule1_public(kr) for kr in keyrings):
            raise QuireError("malformed_keyring", "no keyring is free of problems")
        raise QuireError(WRONG_CREDENTIAL[opener.kind])
    for kr in keyrings:
        if kr.reached and kr.fail:
            raise QuireError(kr.fail, "the first rejected keyring reached, at %d: %s"
                             % (kr.offset, kr.fail_detail))
    raise QuireError("keyring_unauthenticated", "no keyring is trusted")


def _removed_or_behind(keyrings: list, trusted: list, opener: SlotOpener, vault_id: bytes, held: set,
                       reached: dict):
    """§8.6: (removed, behind). Removed: the credential's own signing key is
    listed in `removed` of a trusted keyring. Behind: an authenticated newer
    keyring — one it did not open, whatever its epoch, with a link that
    opens under a trusted parent's key and is signed by a member of that
    parent that may sign and that no trusted keyring lists as removed."""
    removed_keys = set().union(*(kr.removed_keys() | kr.puppets for kr in trusted))
    removed = opener.own_key is not None and opener.own_key in removed_keys
    trusted_by_id = {kr.id: kr for kr in trusted}
    for f in keyrings:
        # Not opened, and its key not held (no trusted keyring has its
        # keyCommit, §8.5 step 4): a copy of a genuine public part (its
        # links replayed) with another sealed part, or slots and mode changed
        # so that rule 2 rejects it, names a key the credential holds, and is
        # damage, not a keyring that leaves it out. A key only reached (the
        # parentKeys of a keyring nobody trusts) does not count: a holder of
        # it could otherwise hide F (fifteenth review R15-1).
        if not _passes_rule1_public(f) or f.opened or f.key_commit in held:
            continue
        # Its key reached, and its own sealed part does not decrypt under it
        # (a test, not an opening): a copy a writer without the key changed
        # (sixteenth review R16-1: a replay of a keyring the credential
        # opened but does not trust). A genuine F always decrypts.
        key = reached.get(f.key_commit)
        if key is not None and aead_open(subkey(key, SUBKEY_KEYRING), f.nonce, f.sealed,
                                         vault_id + f.P) is None:
            continue
        for i, pid in enumerate(f.parents):
            p = trusted_by_id.get(pid)
            if p is None:
                continue
            signer = _open_link(f, i, p.key, vault_id)
            if signer is not None and signer not in removed_keys and any(
                    m.get("key") == signer and _may_sign(m) for m in p.members()):
                return removed, True
    return removed, False


def member_made(kr: Keyring, trusted: list, vault_id: bytes) -> bool:
    """merge.md §3.2 (eighth review R8-3): a keyring the credential did not
    open that a member made — one of its links opens under a trusted
    parent's key and carries the signature of a member of that parent that
    may sign, whether a later keyring removed it or not (the check of
    format.md §8.6)."""
    if not _passes_rule1_public(kr) or kr.opened or kr.fail:
        return False
    trusted_by_id = {t.id: t for t in trusted}
    for i, pid in enumerate(kr.parents):
        p = trusted_by_id.get(pid)
        if p is None:
            continue
        signer = _open_link(kr, i, p.key, vault_id)
        if signer is not None and any(m.get("key") == signer and _may_sign(m) for m in p.members()):
            return True
    return False


def _claimed_twice(trusted: list, by_id: dict) -> list:
    """§5.1: a warning at each trusted keyring that starts a key (no parent
    carries its commitment) that another trusted keyring starts at another
    epoch; only a member reusing a key does that."""
    epochs: dict = {}
    for kr in trusted:
        epochs.setdefault(kr.key_commit, set()).add(kr.epoch)
    return [Issue("key_epoch_claimed_twice", kr.offset) for kr in trusted
            if len(epochs[kr.key_commit]) > 1
            and not any(getattr(by_id.get(p), "key_commit", None) == kr.key_commit
                            for p in kr.parents)]


def open_keyrings(frames: list, opener: SlotOpener, vault_id: bytes) -> Keys:
    """§8.4 and §8.5 over the committed keyring frames: [(frame, commit
    index)] in file order."""
    if not frames:
        raise QuireError("no_keyring")
    issues: list = []
    opener.begin_look()
    keyrings = collect(frames, issues)
    for kr in keyrings:
        if not kr.damaged:
            _parse_public(kr)
    if not any(_passes_rule1_public(kr) for kr in keyrings):
        raise QuireError("malformed_keyring", "no keyring passes rule 1's public checks")

    reach = _Reach(keyrings, opener, vault_id)
    reach.slots()
    reach.chain()
    t0, anc = _rules_1_to_5(keyrings, reach.by_id, vault_id)
    ties: list = []
    mutuals: list = []
    out = _rule_6(t0, reach.by_id, anc, ties, mutuals)
    trusted = [kr for kr in t0 if kr not in out]
    for kr in trusted:
        kr.trusted = True
    if not trusted:
        _raise_fatal(keyrings, opener)

    # §5.1: a key's epoch is the highest a trusted keyring claims for it (a
    # commit's is judged by the keyring of its key on its own line, §9.3);
    # its blob key that of the first in file order (§7.3).
    held = {}
    for kr in trusted:
        h = held.get(kr.key_commit)
        if h is None:
            held[kr.key_commit] = HeldKey(kr.key, kr.key_commit, kr.epoch, kr.blob_key)
        else:
            h.epoch = max(h.epoch, kr.epoch)
    keys = Keys(sorted(held.values(), key=lambda h: h.commit), trusted, keyrings, issues)

    # §8.4 "Which issues are reported": public failures always, the others
    # for keyrings the credential reached (opened, or tried to open).
    for kr in keyrings:
        if kr.fail and (kr.fail_public or kr.reached):
            issues.append(Issue(kr.fail, kr.offset))
    # §8.5: passphrase slots refused for their cost, a warning per keyring.
    issues += [Issue("kdf_limits_exceeded", kr.offset) for kr in opener.refused]
    issues += [Issue("removal_tie", kr.offset) for kr in ties]
    issues += [Issue("removal_mutual", kr.offset) for kr in mutuals]
    issues += _claimed_twice(trusted, reach.by_id)
    keys.removed, keys.behind = _removed_or_behind(keyrings, trusted, opener, vault_id,
                                                   {t.key_commit for t in trusted}, reach.reached)
    return keys
