"""The whole read of a vault, in the order format.md §8.5 gives for errors:
the credential (recovery_code_invalid), the header (§3), the keys (§8.5),
then unknown critical kinds (§4.3); then what the vault releases.

- _look: §10 scanning (frames.py), §10.3 the committed end, §9.2 commit
  groups, §8 the key layer (keyrings.py) over the committed keyring frames;
- _recover_commit: §10.3 commit recovery (a last commit header rebuilt);
- read_vault: the above, §9.3 commits (commits.py), §4.3 critical kinds,
  §9.3 release (records.py), §7.4 attachments (attachments.py).

Entry point: read_vault(data, credential) -> Result, or raises QuireError.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .attachments import Chunk, blob_id, read_attachment, structure_ok
from .commits import ZERO_HEAD, Commit, chain_head, group_digest, verify_commits
from .errors import Issue, QuireError
from .frames import (COMMIT_BODY, FRAME_HEADER, HEADER_SIZE, KIND_CHUNK, KIND_COMMIT,
                     KIND_KEYRING, KIND_MANIFEST, KIND_REVISION, KIND_ROWS, Damaged, Frame, build_header,
                     is_commit_frame, is_critical, parse_header, scan)
from .keyrings import Credential, Keys, SlotOpener, open_keyrings
from .records import RecordError, record_payload

__all__ = ["Credential", "Result", "Released", "read_vault"]

COMMIT_FRAME = FRAME_HEADER + COMMIT_BODY        # 216


@dataclass
class Released:
    kind: int
    payload: bytes
    offset: int
    verified: bool          # False: released from a commit that is not verified (§9.3)
    attested: bool          # released from a verified commit attested by a member
    member_standing: bool = False   # ranks with a current member's standing (§9.4 step 5, R11-2)

    @property
    def standing(self):
        return 3 if self.attested or self.member_standing else 2 if self.verified else 1


@dataclass
class Result:
    issues: list = field(default_factory=list)
    records: list = field(default_factory=list)        # [Released], file order
    attachments: list = field(default_factory=list)    # [(blob id, content)], once per blob id
    trusted_keyrings: list = field(default_factory=list)
    removed: bool = False                              # §8.6
    behind: bool = False                               # §8.6
    commits: list = field(default_factory=list)        # [Commit], file order
    manifests: list = field(default_factory=list)      # [(value, content or None)], file order

    def resolve(self, blob: bytes):
        """format.md §7.3: the content `blob` resolves to, or None. Among
        the released manifests whose stream reads whole in structure (§7.4
        checks 1–6) and whose `blob` or an alias is `blob`: the highest
        standing first, then one whose `blob` it is, then file order; no
        other candidate is tried when that one does not read whole. Read
        through an alias, the content must hash to it under the blob key of
        some trusted keyring."""
        found = [(-m.standing, m.value.get("blob") != blob, i, m)
                 for i, m in enumerate(self.manifests)
                 if m.structure_ok and (m.value.get("blob") == blob
                                        or blob in m.value.get("aliases", []))]
        if not found:
            return None
        _, via_alias, _, m = min(found, key=lambda t: t[:3])
        if m.content is None:
            return None
        if via_alias and not any(blob_id(kr.blob_key, m.content) == blob
                                 for kr in self.trusted_keyrings):
            return None
        return m.content


@dataclass
class Manifest:
    value: object
    content: bytes | None                # the content, when it reads whole
    standing: int                        # its commit's (commits.Commit.standing)
    structure_ok: bool                   # §7.4 checks 1–6 pass


@dataclass
class View:
    """One look at the file: what scanning and the key layer make of it."""
    items: list
    committed: list          # items before the committed end
    committed_end: int
    commits: list            # [Commit]
    keys: Keys


def lay_out(data: bytes) -> View:
    """Scanning, the committed end and the commit groups: no key needed."""
    items = scan(data)
    last = max((i for i, it in enumerate(items) if is_commit_frame(it)), default=-1)
    committed = items[:last + 1]
    committed_end = committed[-1].end if committed else HEADER_SIZE
    commits, group, damaged = [], [], []
    for it in committed:
        if isinstance(it, Damaged):
            damaged.append(it)
            continue
        if is_commit_frame(it):
            commits.append(Commit(it, len(commits), group, damaged_regions=damaged))
            group, damaged = [], []
        else:
            group.append(it)
    return View(items, committed, committed_end, commits, None)


def _look(data: bytes, opener: SlotOpener, vault_id: bytes) -> View:
    view = lay_out(data)
    keyring_frames = [(f, c.index) for c in view.commits for f in c.covered
                      if f.kind == KIND_KEYRING]
    view.keys = open_keyrings(keyring_frames, opener, vault_id)
    return view


def open_view(data: bytes, opener: SlotOpener, vault_id: bytes):
    """The key layer's view of a file, after commit recovery (§10.3).
    Returns (view, the file as read, the offset of a rebuilt commit header
    or None)."""
    view = _look(data, opener, vault_id)
    recovered = _recover_commit(data, view, vault_id, opener)
    if recovered is None:
        return view, data, None
    at, data = recovered
    return _look(data, opener, vault_id), data, at


def _recover_commit(data: bytes, view: View, vault_id: bytes, opener: SlotOpener):
    """§10.3 commit recovery: returns the offset of the rebuilt commit header
    and the file with it in place, or None."""
    at = len(data) - COMMIT_FRAME
    if at < view.committed_end:
        return None
    frames, pos = [], view.committed_end
    for it in view.items[len(view.committed):]:
        if it.offset >= at:
            break
        if not isinstance(it, Frame) or it.offset != pos:
            return None                       # a damaged region, or a gap
        frames.append(it)
        pos = it.end
    if pos != at or not frames:
        return None
    # h_(k−1): the body's stored previous head, then the last commit's
    # stored head (§10.3, as §9.3 step 2)
    body = data[at + FRAME_HEADER:]
    prevs = [body[32:64]]
    last = view.commits[-1].stored_head if view.commits else ZERO_HEAD
    if last != prevs[0]:
        prevs.append(last)
    digest = group_digest(frames)
    stored = data[at + FRAME_HEADER:at + FRAME_HEADER + 32]
    # The held keys, and the keys of the tail's keyrings that the key layer
    # trusts once they count as committed: a commit that starts a new epoch
    # is made under the new key (§9.2, seventh review R7-3).
    held = {h.commit: h for h in view.keys.held}
    tail_rings = [(f, len(view.commits)) for f in frames if f.kind == KIND_KEYRING]
    if tail_rings:
        rings = [(f, c.index) for c in view.commits for f in c.covered if f.kind == KIND_KEYRING]
        try:
            for h in open_keyrings(rings + tail_rings, opener, vault_id).held:
                held.setdefault(h.commit, h)
        except QuireError:
            pass
    order = sorted(held.values(), key=lambda h: (-h.epoch, h.commit))
    for h in order:
        header = build_header(KIND_COMMIT, 0, h.key_id, COMMIT_BODY)
        if any(chain_head(h.key, vault_id, p, digest, header[:12], body[64:200]) == stored for p in prevs):
            return at, data[:at] + header + data[at + FRAME_HEADER:]
    return None


def _frame_issues(view: View) -> list:
    """Issues about committed frames that need no key (§10.2, §4.3). Nothing
    is reported about the tail but torn_tail (§10.3)."""
    issues = []
    for it in view.committed:
        if isinstance(it, Damaged):
            issues.append(Issue("frame_damaged", it.offset))
            continue
        if it.repaired:
            issues.append(Issue("frame_repaired", it.offset))
        if it.malformed and it.kind != KIND_KEYRING:
            # a keyring frame that breaks its row is judged by §8.1 instead
            issues.append(Issue("malformed_frame", it.offset))
    return issues


STALE = object()


def release_keys(c: Commit, f: Frame, keys: Keys):
    """§9.3 release step 2: the candidate keys a sealed frame may be tried
    with (step 3 reports unknown_key when there are none), or STALE."""
    candidates = keys.candidates(f.key_id)
    if c.stale:
        return STALE
    if c.on_chain:
        return candidates
    if not f.sealed or not candidates:
        return candidates
    current = [h for h in candidates if h.epoch >= c.floor]
    return current or STALE


def _revision_conflicts(records: list) -> list:
    """merge.md §5: frames of one revision id are one revision, the frame
    of the highest standing (then the first in file order) used; one with
    another payload is reported [revision_conflict] at the frame not used."""
    from . import cbor
    by_id: dict = {}
    for r in records:
        if r.kind == KIND_REVISION:
            by_id.setdefault(cbor.decode(r.payload).get("revision"), []).append(r)
    out = []
    for frames in by_id.values():
        used = max(frames, key=lambda r: (r.standing, -r.offset))
        out += [Issue("revision_conflict", r.offset) for r in frames
                if r is not used and r.payload != used.payload]
    return out


def read_vault(data: bytes, cred: Credential) -> Result:
    opener = SlotOpener(cred)                            # recovery_code_invalid
    issues: list = []
    vault_id = parse_header(data, issues)                # §3
    view, data, at = open_view(data, opener, vault_id)  # §10, §8.5, §10.3
    if at is not None:
        issues.append(Issue("frame_repaired", at))
    if view.committed_end < len(data):
        issues.append(Issue("torn_tail", view.committed_end))
    issues += _frame_issues(view)
    keys = view.keys
    issues += keys.issues
    verify_commits(view.commits, keys, vault_id, issues)

    # §4.3: attested by a current member, it stops the records, not the
    # keys: the keyrings above are read whatever the record kinds (tenth
    # review R10-3), and once the author is removed the commit is attested
    # by a removed member and this does not apply.
    for c in view.commits:
        if c.verified and c.attested:
            for f in c.covered:
                if f.kind not in KIND_ROWS and is_critical(f.kind):
                    raise QuireError("unknown_critical_kind",
                                     "kind %#04x at %d, in a verified and attested commit"
                                     % (f.kind, f.offset))

    result = Result(trusted_keyrings=keys.trusted, removed=keys.removed, behind=keys.behind, commits=view.commits)
    manifests = []                                       # (frame, value, HeldKey)
    streams: dict = {}                                   # stream id -> [Chunk], file order
    for c in view.commits:
        for f in c.covered:
            if f.kind == KIND_KEYRING or f.malformed:    # §8; malformed_frame (step 1)
                continue
            if f.kind not in KIND_ROWS:                  # step 1: an unknown kind
                if is_critical(f.kind) and not (c.verified and c.attested):
                    issues.append(Issue("unknown_critical_kind", f.offset))
                continue
            allowed = release_keys(c, f, keys)          # step 2
            if f.kind == KIND_CHUNK:
                if allowed is not STALE:                 # §7.4: a stale chunk is in no stream
                    chunk = Chunk(f, allowed, c.standing, vault_id)
                    streams.setdefault(chunk.stream, []).append(chunk)
                continue
            if allowed is STALE:
                issues.append(Issue("stale_epoch", f.offset))
                continue
            try:                                         # steps 3 and 4
                payload, value, held = record_payload(f, allowed, vault_id)
            except RecordError as e:
                issues.append(Issue(e.code, f.offset))
                continue
            result.records.append(Released(f.kind, payload, f.offset, c.verified,
                                           c.verified and c.attested, c.member_standing))
            if f.kind == KIND_MANIFEST:
                manifests.append((f, value, held, c.standing))

    issues += _revision_conflicts(result.records)

    # §7.4: every released manifest, in file order (a stream named by two is
    # checked for each); whole attachments once per blob id.
    whole = set()
    for f, value, held, standing in manifests:
        chunks = streams.get(value.get("stream"), [])
        content, problem = read_attachment(f.offset, value, chunks, vault_id, held.blob_key)
        result.manifests.append(Manifest(value, content, standing,
                                         structure_ok(f.offset, value, chunks)))
        if problem:
            issues.append(problem)
        elif value.get("blob") not in whole:
            whole.add(value.get("blob"))
            result.attachments.append((value.get("blob"), content))

    result.issues = issues
    return result
