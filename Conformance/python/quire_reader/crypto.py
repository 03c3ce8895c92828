"""Cryptographic primitives of format.md §1 and keys.md §0, on hashlib and
PyNaCl (libsodium).

PyNaCl binds neither crypto_kdf_derive_from_key nor keyed BLAKE2b with an
output length other than its own, so both are computed with hashlib's
BLAKE2b, which takes a key, a salt and a personalisation as libsodium does.
"""

from __future__ import annotations

import hashlib
import struct

import nacl.bindings as sodium
import nacl.exceptions

# --------------------------------------------------------------------------
# Hashes (format.md §1)
# --------------------------------------------------------------------------


def blake2b(msg: bytes, nbytes: int, key: bytes = b"") -> bytes:
    """BLAKE2b-(8*nbytes)(msg); keyed when `key` is not empty."""
    return hashlib.blake2b(msg, digest_size=nbytes, key=key).digest()


def h256(msg: bytes) -> bytes:
    return blake2b(msg, 32)


def mac256(key: bytes, msg: bytes) -> bytes:
    return blake2b(msg, 32, key=key)


def kdf(key: bytes, subkey_id: int, ctx: bytes) -> bytes:
    """libsodium crypto_kdf_derive_from_key(32, id, ctx, key): BLAKE2b-256 of
    the empty message keyed with `key`, salt = LE64(id) ‖ 0×8, personal =
    ctx (8 bytes) ‖ 0×8 (format.md §1: "the 64-bit subkey id as salt and the
    8-byte context as personalisation")."""
    assert len(ctx) == 8 and len(key) == 32
    salt = struct.pack("<Q", subkey_id) + bytes(8)
    return hashlib.blake2b(b"", digest_size=32, key=key, salt=salt,
                           person=ctx + bytes(8)).digest()


CTX_V2 = b"quire v2"
CTX_RK = b"quire rk"

SUBKEY_RECORD, SUBKEY_COMMIT, SUBKEY_KEYRING, SUBKEY_ATTESTATION, SUBKEY_LINK = 1, 2, 3, 4, 5
SUBKEY_NONCE = 6                         # format.md §5.1: a commit's synthetic nonce


def subkey(epoch_key: bytes, which: int) -> bytes:
    """format.md §5.1: every use of an epoch key goes through a subkey."""
    return kdf(epoch_key, which, CTX_V2)


def key_commitment(epoch_key: bytes) -> bytes:
    """format.md §5.1: MAC256(K, "quire-key-commitment-v2")."""
    return mac256(epoch_key, b"quire-key-commitment-v2")


def slot_member_tag(epoch_key: bytes, vault_id: bytes, member_key: bytes, kind: str) -> bytes:
    """format.md §5.1: the `member` of a slot of kind `kind` (one version 2
    does not define), MAC256(K, "quire-slot-member-v3" ‖ vault id ‖ member
    key ‖ kind), the kind's UTF-8 bytes last: keyed by the epoch key, so the
    public part shows no member's key (thirteenth review R13-2), and over the
    kind, so one member's slots of two kinds carry unrelated tags (fourteenth
    review R14-4)."""
    return mac256(epoch_key, b"quire-slot-member-v3" + vault_id + member_key + kind.encode("utf-8"))


# --------------------------------------------------------------------------
# AEAD and sealed boxes
# --------------------------------------------------------------------------


def aead_open(key: bytes, nonce: bytes, ct_and_tag: bytes, ad: bytes):
    """XChaCha20-Poly1305-IETF decryption; None when it does not authenticate."""
    if len(ct_and_tag) < 16 or len(nonce) != 24:
        return None
    try:
        return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(ct_and_tag, ad, nonce, key)
    except nacl.exceptions.CryptoError:
        return None


def sealed_box_open(box: bytes, x_pk: bytes, x_sk: bytes):
    """crypto_box_seal_open; None when the box does not open."""
    try:
        return sodium.crypto_box_seal_open(box, x_pk, x_sk)
    except (nacl.exceptions.CryptoError, ValueError, TypeError):
        return None


# --------------------------------------------------------------------------
# Key pairs (keys.md §0)
# --------------------------------------------------------------------------


def ed25519_from_seed(seed: bytes):
    """EdKeyPair(seed): (public key 32, libsodium secret key 64)."""
    return sodium.crypto_sign_seed_keypair(seed)


def ed_to_x(pk: bytes, sk: bytes):
    """(EdToX_pk(pk), EdToX_sk(sk)), libsodium's conversions."""
    return (sodium.crypto_sign_ed25519_pk_to_curve25519(pk),
            sodium.crypto_sign_ed25519_sk_to_curve25519(sk))


def seed_keypair(seed: bytes):
    """SeedKeyPair(seed) = crypto_box_seed_keypair: (X25519 pk, X25519 sk)."""
    return sodium.crypto_box_seed_keypair(seed)


def is_valid_ed25519_public_key(pk) -> bool:
    """keys.md §0: 32 bytes for which EdToX_pk succeeds (on the curve, not of
    small order, in the prime-order subgroup)."""
    if type(pk) is not bytes or len(pk) != 32:
        return False
    try:
        sodium.crypto_sign_ed25519_pk_to_curve25519(pk)
        return True
    except Exception:       # libsodium refuses: CryptoError / RuntimeError
        return False


def argon2id(passphrase: bytes, salt: bytes, ops: int, mem: int) -> bytes:
    """keys.md §2.3: crypto_pwhash, ALG_ARGON2ID13, 32 bytes."""
    return sodium.crypto_pwhash_alg(32, passphrase, salt, ops, mem,
                                    sodium.crypto_pwhash_ALG_ARGON2ID13)


# --------------------------------------------------------------------------
# Ed25519 verification as libsodium 1.0.18 does it (format.md §8.1)
# --------------------------------------------------------------------------
#
# format.md §8.1 lists the checks: S < L; R and the public key not of small
# order; the public key canonically encoded; the cofactorless equation. The
# bundled libsodium may be newer than 1.0.18, so the first three are checked
# here, from the text, and libsodium's crypto_sign_open decides the equation
# (every libsodium version checks it cofactorless).

_P = 2 ** 255 - 19
_L = 2 ** 252 + 27742317777372353535851937790883648493
_D = (-121665 * pow(121666, _P - 2, _P)) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _decode_point(s: bytes):
    """RFC 8032 §5.1.3 decoding, with y reduced mod p (so non-canonical
    encodings decode too); returns extended coordinates or None."""
    y = int.from_bytes(s, "little") & ((1 << 255) - 1)
    sign = s[31] >> 7
    y %= _P
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    x = (u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P)) % _P
    if (v * x * x - u) % _P != 0:
        x = (x * _SQRT_M1) % _P
        if (v * x * x - u) % _P != 0:
            return None
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = _P - x
    return (x, y, 1, (x * y) % _P)


def _double(pt):
    x1, y1, z1, _ = pt
    a, b = x1 * x1 % _P, y1 * y1 % _P
    c = 2 * z1 * z1 % _P
    h = (a + b) % _P
    e = (h - (x1 + y1) * (x1 + y1)) % _P
    g = (a - b) % _P
    f = (c + g) % _P
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _has_small_order(s: bytes) -> bool:
    pt = _decode_point(s)
    if pt is None:
        return False            # not a point: libsodium rejects it elsewhere
    for _ in range(3):          # [8]P is the identity exactly for small order
        pt = _double(pt)
    x, y, z, _ = pt
    return x % _P == 0 and (y - z) % _P == 0


def _is_canonical(s: bytes) -> bool:
    return int.from_bytes(s, "little") & ((1 << 255) - 1) < _P


def ed25519_verify(pk, msg: bytes, sig) -> bool:
    if type(pk) is not bytes or type(sig) is not bytes or len(pk) != 32 or len(sig) != 64:
        return False
    if int.from_bytes(sig[32:], "little") >= _L:
        return False
    if _has_small_order(sig[:32]) or _has_small_order(pk) or not _is_canonical(pk):
        return False
    try:
        sodium.crypto_sign_open(sig + msg, pk)
        return True
    except Exception:
        return False


# --------------------------------------------------------------------------
# Sealing and signing, for the merge check (merge.md §3), which writes
# --------------------------------------------------------------------------


def aead_seal(key: bytes, nonce: bytes, plaintext: bytes, ad: bytes) -> bytes:
    return sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, ad, nonce, key)


def ed25519_sign(sk: bytes, msg: bytes) -> bytes:
    return sodium.crypto_sign(msg, sk)[:64]
