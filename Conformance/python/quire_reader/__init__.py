"""quire_reader: an independent reader of the Quire vault format, version 1,
written from Spec/format.md, Spec/records.md, Spec/keys.md,
Spec/threat-model.md and Vectors/README.md alone. It reads and verifies; it never writes.

Modules, by spec section:
  frames.py    format.md §3 header, §4 frames, §10 scanning and repair
  payload.py   format.md §6 zstd and Padmé padding
  crypto.py    format.md §1 primitives (libsodium via PyNaCl, hashlib)
  cbor.py      records.md §1.1 deterministic CBOR
  schema.py    records.md §3-§6 record schemas
  recovery.py  records.md §6.4 recovery codes
  keyrings.py  format.md §8, keys.md §2 keyrings, credentials, trust
  reader.py    format.md §5.2, §7, §9, §10.3: release, commits, attachments
  errors.py    format.md §12 codes

Use: quire_reader.reader.read_vault(data, Credential...) -> Result.
"""
