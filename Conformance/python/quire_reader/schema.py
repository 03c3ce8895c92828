"""Record schemas of records.md §3–§6: decides "decodes under its schema".

Each check raises SchemaError(code) with code `malformed_record` or
`size_limit_exceeded` (a count or size over format.md §11).
Unknown fields, with any key type, are accepted.
"""

from __future__ import annotations

from .cbor import CMap


class SchemaError(Exception):
    def __init__(self, code: str, detail: str):
        super().__init__("%s: %s" % (code, detail))
        self.code = code


def _bad(detail):
    raise SchemaError("malformed_record", detail)


# --- field type predicates -------------------------------------------------

def is_uint(v):
    return type(v) is int and v >= 0


INT64 = (-(1 << 63), (1 << 63) - 1)


def is_int(v):
    # records.md §1.1: major 0 or 1, a signed 64-bit value.
    return type(v) is int and INT64[0] <= v <= INT64[1]


def is_float(v):
    # records.md §1.1: "readers also accept an integer value there".
    return type(v) is float or type(v) is int


def is_bool(v):
    return type(v) is bool


def is_text(v):
    return type(v) is str


def is_map(v):
    return isinstance(v, CMap)


def bytes_n(n):
    return lambda v: type(v) is bytes and len(v) == n


def is_bytes(v):
    return type(v) is bytes


def array_of(pred, limit=None, what=""):
    def check(v):
        if type(v) is not list:
            return False
        if limit is not None and len(v) > limit:
            raise SchemaError("size_limit_exceeded", "%s: %d items over %d" % (what, len(v), limit))
        return all(pred(x) for x in v)
    return check


def check_map(m, fields, required=(), what="record"):
    """fields: name -> predicate (a predicate may recurse and raise)."""
    if not is_map(m):
        _bad("%s is not a map" % what)
    for name in required:
        if name not in m:
            _bad("%s lacks required field %r" % (what, name))
    for name, pred in fields.items():
        if name in m and not pred(m.get(name)):
            _bad("%s field %r has the wrong type" % (what, name))
    return True


def map_with(fields, required=(), what="map"):
    return lambda v: check_map(v, fields, required, what)


# --- records.md §3 entry revision ------------------------------------------

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

# --- records.md §4 manifest -------------------------------------------------

MAX_ATTACHMENT = 1 << 40


def _size(v):
    if not is_uint(v):
        return False
    if v > MAX_ATTACHMENT:
        raise SchemaError("size_limit_exceeded", "attachment size %d over 2^40" % v)
    return True


MANIFEST = {"blob": bytes_n(32), "stream": bytes_n(16), "size": _size, "type": is_text}

# --- records.md §5 profile -----------------------------------------------------

PROFILE = {"name": is_text, "about": is_text, "settings": is_map,
           "clock": is_uint, "device": bytes_n(16)}

# --- records.md §6 keyring ----------------------------------------------------

# records.md §6.2: for the four known kinds every listed field is required;
# every box is a 98-byte sealed box (keys.md §2).
SLOT_FIELDS = {
    "device": {"box": bytes_n(98)},
    "recovery": {"box": bytes_n(98)},
    "passphrase": {"salt": bytes_n(16), "opsLimit": is_uint, "memLimit": is_uint,
                   "publicKey": bytes_n(32), "box": bytes_n(98)},
    "escrow": {"box": bytes_n(98)},
}


def _slot(v):
    check_map(v, {"kind": is_text}, ("kind",), "key slot")
    kind = v.get("kind")
    fields = SLOT_FIELDS.get(kind)
    if fields is not None:
        # The cryptography needs every field of a known kind.
        check_map(v, fields, tuple(fields), "%s slot" % kind)
    return True


PUBLIC = {
    "parents": array_of(bytes_n(16), 64, "parents"),
    "escrowFree": is_bool,
    "slots": array_of(_slot, 256, "slots"),
    "vaultSalt": bytes_n(16),
}
MEMBER = map_with({"role": is_text, "key": bytes_n(32), "name": is_text, "added": is_int},
                  ("key",), "member")
ESCROW = map_with({"key": bytes_n(32), "label": is_text}, ("key",), "escrow recipient")


def _history(v):
    check_map(v, {"epoch": lambda e: is_uint(e) and 1 <= e <= 65535, "key": bytes_n(32)},
              ("epoch", "key"), "history key")
    return True


CONTENT = {
    "members": array_of(MEMBER, 4096, "members"),
    "removed": array_of(MEMBER, 4096, "removed"),
    "escrow": array_of(ESCROW, 4096, "escrow"),
    "history": array_of(_history, 4096, "history"),
    "retired": array_of(bytes_n(32), 4096, "retired"),
    "blobKey": bytes_n(32), "created": is_int, "reason": is_text,
}


def check_record(kind: int, value) -> None:
    if kind == 0x10:
        check_map(value, REVISION, ("entry", "revision"), "entry revision")
    elif kind == 0x11:
        check_map(value, MANIFEST, ("blob", "stream"), "manifest")
    elif kind == 0x80:
        check_map(value, PROFILE, (), "profile")
    else:
        raise ValueError("no schema for kind %#x" % kind)


def check_public(value) -> None:
    check_map(value, PUBLIC, (), "keyring public part")


def check_content(value) -> None:
    check_map(value, CONTENT, ("blobKey",), "keyring content")
