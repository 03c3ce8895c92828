"""Cryptographic primitives of format.md §1, on hashlib and PyNaCl (libsodium)."""

from __future__ import annotations

import hashlib
import struct

import nacl.bindings as sodium
import nacl.exceptions


def blake2b(msg: bytes, nbytes: int, key: bytes = b"") -> bytes:
    """BLAKE2b-(8*nbytes)(msg), keyed when key is non-empty."""
    return hashlib.blake2b(msg, digest_size=nbytes, key=key).digest()


def kdf(key: bytes, subkey_id: int, ctx: bytes) -> bytes:
    """libsodium crypto_kdf_derive_from_key(32, id, ctx, key):
    BLAKE2b-256 of the empty message, keyed with `key`, salt = LE64(id) ‖ 0×8,
    personal = ctx (8 bytes) ‖ 0×8."""
    assert len(ctx) == 8 and len(key) == 32
    salt = struct.pack("<Q", subkey_id) + bytes(8)
    person = ctx + bytes(8)
    return hashlib.blake2b(b"", digest_size=32, key=key, salt=salt, person=person).digest()


def aead_open(key: bytes, nonce: bytes, ct_and_tag: bytes, ad: bytes):
    """XChaCha20-Poly1305-IETF decrypt; returns None when authentication fails."""
    try:
        return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(ct_and_tag, ad, nonce, key)
    except nacl.exceptions.CryptoError:
        return None


def sealed_box_open(box: bytes, x_pk: bytes, x_sk: bytes):
    try:
        return sodium.crypto_box_seal_open(box, x_pk, x_sk)
    except nacl.exceptions.CryptoError:
        return None


def ed25519_from_seed(seed: bytes):
    """Returns (public key 32, secret key 64)."""
    return sodium.crypto_sign_seed_keypair(seed)


def ed25519_to_x25519(pk: bytes, sk: bytes):
    """keys.md §0 EdToX_pk and EdToX_sk: libsodium's conversions of an
    Ed25519 key pair (public key 32, secret key 64) to X25519."""
    return (sodium.crypto_sign_ed25519_pk_to_curve25519(pk),
            sodium.crypto_sign_ed25519_sk_to_curve25519(sk))


def is_valid_ed25519_public_key(pk: bytes) -> bool:
    """keys.md §0: a valid Ed25519 public key is 32 bytes for which
    EdToX_pk (crypto_sign_ed25519_pk_to_curve25519) succeeds."""
    if type(pk) is not bytes or len(pk) != 32:
        return False
    try:
        sodium.crypto_sign_ed25519_pk_to_curve25519(pk)
        return True
    except (nacl.exceptions.CryptoError, nacl.exceptions.RuntimeError, ValueError):
        return False


def seed_keypair(seed: bytes):
    """keys.md §0 SeedKeyPair: libsodium crypto_box_seed_keypair, returns
    (X25519 public key, X25519 secret key)."""
    return sodium.crypto_box_seed_keypair(seed)


def ed25519_verify(pk: bytes, msg: bytes, sig: bytes) -> bool:
    if len(pk) != 32 or len(sig) != 64:
        return False
    try:
        sodium.crypto_sign_open(sig + msg, pk)
        return True
    except (nacl.exceptions.BadSignatureError, nacl.exceptions.CryptoError, ValueError):
        return False


def argon2id(passphrase: bytes, salt: bytes, ops: int, mem: int) -> bytes:
    """keys.md §2.3: crypto_pwhash with ALG_ARGON2ID13, 32 bytes of output."""
    return sodium.crypto_pwhash_alg(32, passphrase, salt, ops, mem,
                                    sodium.crypto_pwhash_ALG_ARGON2ID13)
