"""Record schemas of records.md §3–§6: decides "decodes under its schema".

Each check raises SchemaError(code) with code `malformed_record` or
`size_limit_exceeded` (a list or size over format.md §11). Unknown fields,
with any key type, are accepted (records.md §1.2); a defined field is always
a text key (records.md §1.1, "Keys that are not text").
"""

from __future__ import annotations

from .cbor import CMap


class SchemaError(Exception):
    def __init__(self, code: str, detail: str):
        super().__init__("%s: %s" % (code, detail))
        self.code = code
        self.detail = detail


def _bad(detail):
    raise SchemaError("malformed_record", detail)


# --- field type predicates (records.md §1.1 "Types") ------------------------

INT64 = (-(1 << 63), (1 << 63) - 1)


def is_uint(v):
    return type(v) is int and 0 <= v < (1 << 64)


def is_int(v):
    return type(v) is int and INT64[0] <= v <= INT64[1]


def is_float(v):
    # "readers also accept an integer value there"
    return type(v) is float or is_int(v)


def is_bool(v):
    return type(v) is bool


def is_text(v):
    return type(v) is str


def is_map(v):
    return isinstance(v, CMap)


def is_bytes(v):
    return type(v) is bytes


def bytes_n(n):
    return lambda v: type(v) is bytes and len(v) == n


def uint_in(lo, hi):
    return lambda v: is_uint(v) and lo <= v <= hi


def array_of(pred, limit=None, what=""):
    """[T]; a list longer than its limit is size_limit_exceeded (records.md
    §1.1). The length is checked before the elements."""
    def check(v):
        if type(v) is not list:
            return False
        if limit is not None and len(v) > limit:
            raise SchemaError("size_limit_exceeded", "%s: %d items, over %d" % (what, len(v), limit))
        return all(pred(x) for x in v)
    return check


def check_map(m, fields, required=(), what="record"):
    """fields: name -> predicate (a predicate may recurse and raise)."""
    if not is_map(m):
        _bad("%s is not a map" % what)
    for name in required:
        if name not in m:
            _bad("%s lacks its required field %r" % (what, name))
    for name, pred in fields.items():
        if name in m and not pred(m.get(name)):
            _bad("%s: field %r has the wrong type" % (what, name))
    return True


def map_with(fields, required=(), what="map"):
    return lambda v: check_map(v, fields, required, what)


# --- records.md §3 entry revision --------------------------------------------

LOCATION = {
    "latitude": is_float, "longitude": is_float, "altitude": is_float,
    "placeName": is_text, "locality": is_text, "region": is_text,
    "country": is_text, "extra": is_map,
}
WEATHER = {"temperatureC": is_float, "conditions": is_text, "extra": is_map}
ATTACHMENT_REF = {
    "id": is_bytes, "blob": bytes_n(32), "type": is_text, "name": is_text,
    "extra": is_map,
}
BODY = {
    "created": is_int, "modified": is_int, "timeZone": is_text,
    "utcOffset": is_int, "allDay": is_bool, "text": is_text,
    "tags": array_of(is_text), "mood": is_int, "starred": is_bool,
    "pinned": is_bool, "journal": is_text,
    "location": map_with(LOCATION, what="location"),
    "weather": map_with(WEATHER, what="weather"),
    "attachments": array_of(map_with(ATTACHMENT_REF, ("blob",), "attachment reference")),
    "extra": is_map,
}
REVISION = {
    "entry": bytes_n(16), "revision": bytes_n(16),
    "parents": array_of(bytes_n(16), 64, "parents"),
    "clock": is_uint, "device": bytes_n(16), "deleted": is_bool,
    "body": map_with(BODY, what="body"),
}

# --- records.md §4 manifest ----------------------------------------------------

MAX_ATTACHMENT = 1 << 40


def _size(v):
    if not is_uint(v):
        return False
    if v > MAX_ATTACHMENT:
        raise SchemaError("size_limit_exceeded", "attachment size %d over 2^40" % v)
    return True


MANIFEST = {"blob": bytes_n(32), "stream": bytes_n(16), "size": _size, "type": is_text,
            "aliases": array_of(bytes_n(32), 64, "aliases")}

# --- records.md §5 profile -----------------------------------------------------

PROFILE = {"name": is_text, "about": is_text, "settings": is_map,
           "clock": is_uint, "device": bytes_n(16)}


def check_record(kind: int, value) -> None:
    if kind == 0x10:
        check_map(value, REVISION, ("entry", "revision"), "entry revision")
    elif kind == 0x11:
        check_map(value, MANIFEST, ("blob", "stream"), "manifest")
    elif kind == 0x80:
        check_map(value, PROFILE, (), "profile")
    else:
        raise ValueError("no schema for kind %#x" % kind)


# --- records.md §6 keyring -------------------------------------------------------
# Every failure here makes the keyring malformed_keyring (records.md §1.1: "in
# a keyring, either makes the keyring malformed_keyring").

# records.md §6.2: for the four known kinds every listed field is required.
SLOT_FIELDS = {
    "device": {"box": bytes_n(100)},
    "recovery": {"box": bytes_n(100)},
    "passphrase": {"salt": bytes_n(16), "opsLimit": is_uint, "memLimit": is_uint,
                   "publicKey": bytes_n(32), "box": bytes_n(100)},
    "escrow": {"box": bytes_n(100)},
}


def _slot(v):
    # "Every slot map has kind (text)"; a slot of another kind is "still a
    # map with a text kind".
    check_map(v, {"kind": is_text}, ("kind",), "key slot")
    fields = SLOT_FIELDS.get(v.get("kind"))
    if fields is not None:
        check_map(v, fields, tuple(fields), "%s slot" % v.get("kind"))
    return True


MAX_EPOCH = (1 << 32) - 1

PUBLIC = {
    "epoch": uint_in(1, MAX_EPOCH),
    "keyCommit": bytes_n(32),
    "parents": array_of(bytes_n(32), 64, "parents"),
    "links": array_of(bytes_n(136), 64, "links"),
    "escrowFree": is_bool,
    "required": array_of(is_text, 16, "required"),
    "critical": array_of(is_text, 16, "critical"),
    "slots": array_of(_slot, 256, "slots"),
}

MEMBER = map_with({"role": is_text, "key": bytes_n(32), "keyType": is_text,
                   "name": is_text, "added": is_int}, ("key",), "member")
ESCROW = map_with({"key": bytes_n(32), "label": is_text}, ("key",), "escrow recipient")

CONTENT = {
    "members": array_of(MEMBER, 4096, "members"),
    "removed": array_of(MEMBER, 4096, "removed"),
    "escrow": array_of(ESCROW, 4096, "escrow"),
    "retired": array_of(bytes_n(32), 4096, "retired"),
    "answers": array_of(bytes_n(32), 4096, "answers"),
    "parentKeys": array_of(bytes_n(32), 64, "parentKeys"),
    "blobKey": bytes_n(32), "created": is_int, "reason": is_text,
    "vaultSalt": bytes_n(16),
}


def check_public(value) -> None:
    check_map(value, PUBLIC, ("epoch", "keyCommit"), "keyring public part")


def check_content(value) -> None:
    check_map(value, CONTENT, ("blobKey",), "keyring content")
