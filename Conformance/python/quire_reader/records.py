"""Sealed frames (format.md §5.2) and record payloads (§6, records.md §1,
§3–§5): release steps 3 and 4 of §9.3."""

from __future__ import annotations

from . import cbor, schema
from .crypto import SUBKEY_RECORD, aead_open, subkey
from .frames import BODY_HASH, CHUNK_PUBLIC, KIND_CHUNK, NONCE, Frame
from .payload import PayloadError, decompress, unpad


class RecordError(Exception):
    def __init__(self, code: str, detail: str = ""):
        super().__init__(code + (": " + detail if detail else ""))
        self.code = code


def open_sealed(f: Frame, candidates: list, vault_id: bytes):
    """§5.2 steps 1–3: returns (plaintext, the HeldKey that opened it). A
    sealed record opens only under the key its body hash names. The
    plaintext is still padded (a chunk's is a slice of its padded stream)."""
    if not candidates:                                               # step 1
        raise RecordError("unknown_key")
    body = f.body
    if f.kind == KIND_CHUNK:
        public, sealed = body[NONCE:NONCE + CHUNK_PUBLIC], body[NONCE + CHUNK_PUBLIC:]
    else:
        named = body_hash_key(f, candidates)                        # step 2
        if named is None:
            raise RecordError("authentication_failed", "body hash")
        candidates = [named]                     # the only one step 3 tries
        public, sealed = b"", body[NONCE:-BODY_HASH]
    ad = vault_id + f.fields + public
    for h in candidates:                                             # step 3
        pt = aead_open(subkey(h.key, SUBKEY_RECORD), body[:NONCE], sealed, ad)
        if pt is not None:
            return pt, h
    raise RecordError("authentication_failed")


def body_hash_key(f: Frame, candidates: list):
    """§5.2 step 2: the candidate whose commitment the sealed frame's body
    hash names, or None."""
    return next((h for h in candidates if f.body_hash_ok(h.commit)), None)


def record_payload(f: Frame, candidates: list, vault_id: bytes):
    """§9.3 release steps 3 and 4 for a sealed record (entry revision,
    manifest, profile): returns (payload, decoded value, HeldKey)."""
    pt, held = open_sealed(f, candidates, vault_id)
    try:
        payload = unpad(pt)                                          # step 4 of §5.2
        if f.compressed:
            payload = decompress(payload)                            # step 5 of §5.2
    except PayloadError as e:
        raise RecordError(e.code, str(e))
    try:
        value = cbor.decode(payload)
        schema.check_record(f.kind, value)
    except cbor.CBORError as e:
        raise RecordError("malformed_record", str(e))
    except schema.SchemaError as e:
        raise RecordError(e.code, e.detail)
    return payload, value, held
