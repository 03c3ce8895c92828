"""quire_reader: an independent reader of the Quire vault format, version 2,
written from Spec/format.md, Spec/records.md, Spec/keys.md, Spec/merge.md,
Spec/threat-model.md and Vectors/README.md alone. It reads and verifies; it
never writes a vault.

Modules, by spec section:
  frames.py       format.md §3 header, §4 frames, §10.1–10.3 scanning and repair
  payload.py      format.md §6 zstd and Padmé padding
  crypto.py       format.md §1, keys.md §0 primitives (libsodium via PyNaCl, hashlib)
  cbor.py         records.md §1.1 deterministic CBOR
  schema.py       records.md §3–§6 record and keyring schemas
  recovery.py     records.md §6.4 recovery codes
  keyrings.py     format.md §8, keys.md §2 and §5: keyrings, credentials, trust
  commits.py      format.md §9.2–9.4: the chain, verifying commits, attestation
  records.py      format.md §5.2, §6: sealed frames and record payloads
  attachments.py  format.md §7: streams, chunks, blob ids
  reader.py       the whole read: §10.3 commit recovery, §9.3 release, error order
  errors.py       format.md §12 codes

Use: quire_reader.reader.read_vault(data, Credential...) -> Result.
"""
