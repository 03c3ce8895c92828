# Quire — build, test, benchmark, vectors, fuzz.
# `make test` and `make demo` install what they need first (`make deps`).

SWIFT        ?= swift
# Debian's Python: the one that sees python3-nacl and python3-zstandard from
# `make deps`. A bare `python3` may be another (pyenv's, first on CI's PATH),
# which has neither (stop 31's CI failed on that).
PYTHON       ?= /usr/bin/python3
APT_PACKAGES := libsodium-dev libzstd-dev pkg-config libzip-dev libcairo2-dev libpango1.0-dev libcmark-gfm-dev libcmark-gfm-extensions-dev fonts-noto-core fonts-noto-cjk
# Tools the tests and the demo check exports with (epubcheck, qpdf --check, pdftoppm),
# run the conformance reader with (PyNaCl, zstandard), render the man page with
# (man, groff) and load the completions into (zsh, fish); strace, through which
# `make torture` kills quire and injects I/O errors.
TEST_PACKAGES := epubcheck default-jre-headless qpdf poppler-utils python3 python3-nacl python3-zstandard man-db groff-base zsh fish strace
# What `make bench-peers` compares quire with (keepassxc-cli, age) and
# times with (hyperfine), and the venv module that jrnl is installed into
# from PyPI: installed by that target alone, not by `make deps`.
PEER_PACKAGES := keepassxc age hyperfine python3-venv
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := fuzz-header fuzz-frames fuzz-vault fuzz-cbor fuzz-merge fuzz-keyring fuzz-commit fuzz-memory

PREFIX       ?= /usr/local
DESTDIR      ?=

.PHONY: deps build release test check example torture torture-quick test-sync vectors vectors-check conformance removal-check bench bench-compare bench-peers bench-listing \
	bench-smoke fuzz demo clean install install-files uninstall man completions-check lint api-surface doc-links

# Installs the Debian packages given, those not installed yet (apt-get,
# through sudo unless root): $(call install-missing,PACKAGES) in a recipe.
define install-missing
@missing=""; for p in $(1); do \
  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
done; \
if [ -n "$$missing" ]; then \
  echo "make $@: installing$$missing"; \
  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
  $$SUDO apt-get install -y --no-install-recommends $$missing >/dev/null 2>&1 || \
  { $$SUDO apt-get update >/dev/null && $$SUDO apt-get install -y --no-install-recommends $$missing; }; \
fi
endef

# Installs the Debian packages Quire links, only when one is missing.
deps:
	$(call install-missing,$(APT_PACKAGES) $(TEST_PACKAGES))

build: deps
	$(SWIFT) build

# The release binaries link the Swift runtime and Foundation statically
# (stop 29, issue 14): a statically linked quire starts in about a third of
# the instructions (no dynamic loader relocating 14 Swift libraries), some
# 6 ms of CPU on every command; it grows from 21 to 92 MB (ICU's data is in
# it) and still links the system's C libraries (libc, libsodium, libzstd,
# cairo…) dynamically. Built product by product: a release build of every
# target would compile QuireTestSupport, which imports Testing, absent from
# the toolchain's static folder (lib/swift_static). Every release build
# here uses these flags: a build with other flags recompiles the tree.
RELEASE_FLAGS := -c release --static-swift-stdlib
RELEASE_BIN    = $$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)

# quire and its quire-book helper (what `make install` installs).
release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product quire
	$(SWIFT) build $(RELEASE_FLAGS) --product quire-book

# Everything: every test (slow ones included), the vectors, and a quick
# torture run. Each step says what it does; tests print as they finish.
test: deps
	@echo "make test: 1/5 building the package and its tests"
	$(SWIFT) build --build-tests
	@failed=""; i=0; for t in $(TEST_TARGETS); do i=$$((i + 1)); \
	  echo "make test: 2/5 every test, slow ones too: target $$i of $(words $(TEST_TARGETS)), $$t"; \
	  set -o pipefail; $(SWIFT) test --skip-build --filter "^$$t\." 2>&1 | $(TEST_PROGRESS) || failed="$$failed $$t"; \
	done; if [ -n "$$failed" ]; then echo "make test: tests failed in:$$failed"; exit 1; fi
	@echo "make test: 3/5 the vectors"
	$(MAKE) --no-print-directory vectors-check
	@echo "make test: 4/5 the data-layer example"
	$(MAKE) --no-print-directory example
	@echo "make test: 5/5 a quick torture run"
	$(MAKE) --no-print-directory torture-quick

# The tests without those tagged .slow (QUIRE_SKIP_SLOW_TESTS=1, read by
# the .enabled(if: runsSlowTests) trait each slow suite carries): under
# 3 minutes after a build on 2 cores. Run 'make test' before pushing.
check: deps
	$(SWIFT) build --build-tests
	set -o pipefail; QUIRE_SKIP_SLOW_TESTS=1 $(SWIFT) test --skip-build 2>&1 | $(TEST_PROGRESS)
	$(MAKE) --no-print-directory example

# The data-layer example (Sources/quire-example-app, issue 13): a diary
# app's timeline, a photo, search, a second process appending, a conflict
# shown and resolved, observation; it checks every value and exits non-zero
# on a mismatch. Seconds; a temporary QUIRE_HOME; no network.
example: deps
	$(SWIFT) build --product quire-example-app
	@home=$$(mktemp -d); QUIRE_HOME="$$home" "$$($(SWIFT) build --show-bin-path)/quire-example-app"; status=$$?; rm -rf "$$home"; exit $$status

# swift format (.swift-format, 140 columns) over every module and tool in
# Sources/ (the tools joined at stop 23; the tests are not linted yet).
LINT_PATHS := Sources
lint: api-surface doc-links
	$(SWIFT) format lint --strict -r $(LINT_PATHS)

# The public names an app sees through `import Quire` (issue 13, need 7):
# Scripts/public-surface.sh counts them from the symbol graph and fails
# above this ceiling, or when one has no doc comment. What the CLI, the
# vectors, the benchmarks, the fuzzers and the tests use beyond that is
# `package`, or @_spi(Format) (format, keys and sync internals) and
# @_spi(Crypto) (the primitives). Lower the ceiling when the surface
# shrinks; raise it only with a reason. `--list` shows every name.
# 776 (from 772): KeyError.removalMutual, the warning of format.md §8.4
# rule 6 (seventh review); AttachmentReference(_:mediaType:fileName:), the
# reference whose id the library makes (issue 13: callers no longer invent
# ids); DeviceIdentity(seed:name:created:) and secretSeed(), so an app can
# keep the key in its keychain.
# 777 (from 776): SyncError.behindNewerKeyring, the refusal of merge.md
# §3.3 and §6 when a merge or compaction would commit a keyring it cannot
# open above its write key's epoch (eighth review R8-3).
# 779 (from 777): FoldReport.Copy.setAsideAs and
# FoldReport.KeptReason.notAConflictCopy: a fold sets a damaged conflict
# copy aside and never merges a copy a sync tool did not name, and an app
# must be able to say both (merge.md §4, trial 25 F6 and F7).
# 780 (from 779): KeyError.keyEpochClaimedTwice, the warning of format.md
# §5.1 that names the signer of a keyring claiming a key another keyring
# claims at another epoch (ninth review R9-4).
# 676 (from 777): format internals behind @_spi(Format) (iOS review 25 group
# D): CBOR, CBORMap and every raw extra/unknownFields field, the ids' bytes,
# byte counts and unchecked inits, KeyID's value, UncommittedTail,
# EscrowRecipient.
# 643 (from 676): CLI-only names behind @_spi(Format) (group C): SyncTool,
# VaultObserver, DeviceCode's raw forms, FileDeviceKeyStore's paths,
# KeyState's detail.
# 595 (from 643): key-layer detail behind SPI (group F): the
# PrivacyStatement model (text stays), KeysChange's epochs and heads,
# KeyringMember's raw fields, the raw forms of SecureBytes and RecoveryKey.
# 555 (from 595): report detail behind @_spi(Format) (group H): frame
# counts, offsets and per-step counters of verify, unread records, merge,
# fold and compaction.
# 557 (from 555): the two names of the merged branches that stay public:
# FoldReport.Copy.setAsideAs and KeyError.keyEpochClaimedTwice (KeptReason
# is behind @_spi(Format) with the rest of the fold detail).
# 802 (from 777, iOS review 25): the async forms of the reading and key
# operations (21: entries, deletedEntries, revisions, attachment, profile,
# unreadRecords, conflictCopies, remember, keyState, privacyStatement,
# enrollDevice, removeDevice x2, recoveryReplacements, lockDown,
# rotateKeys, setPassphrase, acceptRollback, acceptTampered,
# recoveryKeyChoices, keepRecoveryKey); VaultTransaction.delete/restore
# (2); DeviceKeyStore.keepsMemoryPerPath (requirement and default) and
# FileDeviceKeyStore's (3); VaultSetup.created (1); less the default of
# DeviceKeyStore.indexCacheFolder (now required) and VaultSetup.now (now
# @_spi(Format)) (-2).
# 582 (557 + the 25 names above): the surface cut and the app data layer
# merged.
# 583 (from 582): SyncError.unknownCriticalKind, the refusal of merge.md
# §3.1 while an unknown critical kind is fatal in the vault or the copy,
# naming the member that attested it (eleventh review R11-3).
# 482: one public QuireError at the facade; the layers' error cases behind
# @_spi(Format) (issue 13).
# 448 (from 482): the blocking twins of the async Vault calls behind
# @_spi(Format) (iOS review 27 A1).
# 431 (from 448): VaultMemory's fields, nested types, memberwise init and
# remembered(_:) behind @_spi(Format): a store files the value by vaultID
# and path and round-trips encoded()/init?(decoding:) (A3).
# 424 (from 431): WriteOptions, Vault.writeOptions and
# Vault.retainsEntryBodies behind @_spi(Format); async open and create
# take that tuning in an SPI overload (A6).
# 408 (from 424): format and key details an app never calls behind
# @_spi(Format) (A10): KeyID, KeyringID, VaultSetup's Argon2id limits,
# DeviceIdentity.generate (loadOrCreate makes the key), the raw keys of
# RecoveryKeyReplacement and EntrySnapshot.attestedBy*, the inits of
# RecoveryKeyChoice and EntryChange, the report records' description.
# 404 (from 408): events() returns AsyncStream<VaultEvent>, not a
# VaultEvents wrapper of its own (A11).
# 399 (from 404): changes() and VaultChanges behind @_spi(Format): an app
# observes with events(), which shares the same refresh log (A7).
# 395 (from 399): MemoryByteSource and StoredBlob's cases behind
# @_spi(Format); tx.storeAttachment(_:mediaType:) takes the bytes (A12).
# 401 (from 395): what an app needs to throw and show QuireError itself
# (iOS review 27 §1.3, §1.7): init(category:code:message:),
# errorDescription (LocalizedError), sourceFailed(_:) for a ByteSource,
# keyStoreUnavailable(_:) for a Keychain store, underlyingError for an
# app's error wrapped by commit, and the explicit == (QuireError now holds
# its layer's error behind a package protocol). Making the layer error
# types @_spi (review §2.2 A4, about -26) is the next cut.
# 375 (from 401): the layer error types behind SPI (iOS review 27 A4):
# FormatError, FrameLocation, KeyError and SyncError @_spi(Format),
# CryptoError @_spi(Crypto). A QuireError carries them; no public API
# throws or returns one.
# 366 (from 375): emergency key administration behind @_spi(Format) (B1):
# lockDown, rotateKeys, recoveryReplacements, RecoveryKeyReplacement and
# RecoveryReplacementOwner. removeDevice(named:now:) and
# removeDevice(publicKey:now:) stay public; the `replacement:` form (a
# recovery key a thief replaced) is an SPI overload.
# 359 (from 366): CompactionOptions and CompactionReport.rekeyedEpoch
# behind @_spi(Format) (B5): an app calls compact(); the CLI's
# compact(_:now:) keeps history, the tombstone horizon, rekey and
# dropUnverified.
# -14 more: key-material plumbing behind @_spi(Crypto) (A8):
# SecureBytes' count, init(copying:), withUnsafeBytes, == and description,
# RandomSource, SystemRandom and Argon2id. An app passes a passphrase as a
# String (Credential.passphrase(_:), VaultSetup.passphrase,
# setPassphrase(_:now:)) and makes keys with RecoveryKey() and
# loadOrCreate(name:); every random: parameter is in an SPI overload.
# The facade rows (counts on their own branch, from 401):
# (branch) 396: Vault.add/edit/restore/delete behind @_spi(Format) (A2, -5).
# (branch) 391: Vault.entries() (the whole journal), reload(), remember(in:),
# waitingConflictCopies() and author behind @_spi(Format) (B3, -5).
# (branch) 390: removeDevice(named:) async behind @_spi(Format): an app removes a
# member by key, removeDevice(publicKey:) (A9, -1).
# (branch) 384: EntryChange.State (4), before and after behind @_spi(Format);
# kind and conflict stored (B2, -6).
# (branch) 379: EntryCursor opaque (its init, date and entryID behind @_spi;
# Codable, +2), VaultSetup.device/.created, AttachmentReference.id and
# DeviceIdentity.id behind @_spi(Format) (B6, -5).
# (branch) 375: EntryBody.Mood a plain enum, its integer form behind @_spi
# (A5 in part, -4).
# (branch) 378: EntryQuery, its Order and Day Codable: their synthesized
# init(from:) are public (§3.6, +3; EntrySnapshot and EntryPage Equatable
# cost nothing).
# (branch) 373: EntryBody's wire forms (created/modified milliseconds, the zone
# name, utcOffsetSeconds, the mood integer, the Int64 initialiser) behind
# @_spi; the Date/TimeZone/Mood forms take the names (A5, -6 +1).
# 317 (stop 29, all of the above merged): Quire 153 (+3 compiler-made),
# QuireCrypto 26, QuireFormat 63, QuireKeys 58, QuireSync 14.
# 319: AttachmentReference.link and EntryBody.attachment(forLink:) (+2): an
# app links a photo in an entry's text now that the reference's id is SPI.
# 309 (from 319): dead names behind @_spi(Format) or package (iOS review 29
# §2, -10): DeviceStoreError (7: no public API throws it; a store
# throws QuireError), DeviceID (nothing public holds one), QuireError.offset
# (package), VaultChangeSet.fileReplaced. BlobReader.readAll goes with
# BlobReader when that is @_spi (s30-ios-b).
# 311 (from 309): EntryCursor(before:) and EntryCursor(after:), cursors at
# a row (iOS review 29 §4 item 3): an app opens the timeline at an entry
# (a notification, a search hit, a widget's link) and pages either way.
# 318 (from 311): EntryVersion (id, body, isDeleted, modified,
# deviceName) and Vault.versions(of:) (iOS review 29 §2 item 7, §4 item
# 5): a conflict screen shows "iPhone's version, 10:32" without the SPI
# attestation keys.
# 316 (from 318): Vault.openAttachment and BlobReader (manifest, read, readAll) behind
# @_spi(Format): they block the caller (-5); the async forms an app uses
# instead: VaultTransaction.storeAttachment(contentsOf:), Vault.attachmentStream
# (an opaque AsyncSequence<[UInt8], QuireError>: its type costs no name) and
# Vault.writeAttachment(_:to:) (+3; iOS review 29 §2 item 6).
# 325 (from 316): KeychainDeviceKeyStore, its init(service:accessGroup:
# indexCacheFolder:), load, create, memory(of:path:), remember and
# indexCacheFolder (issue 13: the device key store an iOS app uses, in the
# Keychain; keepsMemoryPerPath is the protocol's default); the async
# devicesEnrolled(by:) and removeDevice(publicKey:keepingEnrolled:now:)
# (issue 12, an app asks which devices a lockdown keeps).
# 314 (from 325): the key stores' own copies of DeviceKeyStore's
# requirements behind @_spi(Format) (issue 13 need 7, -11):
# FileDeviceKeyStore's load, create, memory(of:path:), remember,
# indexCacheFolder and keepsMemoryPerPath, KeychainDeviceKeyStore's load,
# create, memory(of:path:), remember and indexCacheFolder. An app calls
# them as DeviceKeyStore's (the names and docs it already sees); what
# each store does differently is in its type's comment.
# 302 (from 314): members that only witness a standard protocol behind
# @_spi(Format) (-12): ByteIdentifier's description, <, init(from:) and
# encode(to:); EntryCursor's init(from:) and encode(to:); QuireError's
# ==, description and errorDescription; RecoveryKey's and
# DeviceIdentity's description; EntryQuery.Day's <. The conformances
# (Comparable, Codable, CustomStringConvertible, Equatable,
# LocalizedError) stay public and an app calls the same members through
# them; what they print or compare is in each type's comment.
# 293 (from 302): one way each to store and to read an attachment behind
# @_spi(Format) (issue 13 need 7, -9): storeAttachment(fromFile:) (an app
# passes the file URL a picker gave, storeAttachment(contentsOf:
# mediaType:)); Vault.attachmentBytes (an app collects attachmentStream,
# or decrypts to a file with writeAttachment); Vault.attachment and
# BlobManifest with its blob, byteCount and mediaType (the entry's
# AttachmentReference has the media type and name, and no screen shows a
# manifest); StoredBlob's blob and byteCount (an app hands the value to
# AttachmentReference(_:mediaType:fileName:) and reads the blob there).
# 289 (from 293): an entry's history behind @_spi(Format) (-4):
# Vault.revisions(of:) (every revision, superseded ones too: the CLI's
# history; a diary app shows an entry and, in a conflict, its versions,
# versions(of:)), EntryRevision.body and .isDeleted (the same as the
# EntrySnapshot's or EntryVersion's it came with; an app keeps a revision
# only for its entryID and revisionID) and EntrySnapshot.revisionCount.
# 284 (from 289): per-change detail said twice, behind @_spi(Format) (-5):
# EntryChange.conflict and its Conflict enum (appeared, resolved): an app
# reads the same from VaultChangeSet.conflictsAppeared and
# .conflictsResolved; QuireError.entryID: an app knows the entry it asked
# for, and category and code say what became of it (the CLI names it).
# 280 (from 284): second ways to say the same, behind @_spi(Format) (-4):
# Vault.removeDevice(publicKey:now:), which is
# removeDevice(publicKey:keepingEnrolled:now:) keeping none (an app says
# which devices a lost one enrolled it keeps, [] for none); KeyState.members
# (the devices plus the recovery key: a devices screen lists
# KeyState.devices); VaultSetup.name and .recoveryKey (an app gives both
# to init(name:recoveryKey:), which now documents them).
# 277 (from 280): per-record detail of two reports behind @_spi(Format)
# (-3): VerifyReport.Issue.isDamage (an app shows isIntact and each
# issue's message; the CLI splits warnings from damage) and
# UnreadRecords.isEmpty and .notReadableWithThisKey (an app shows count
# beside what it lists, and a removed device through removedFromVault).
# 276 (from 277): EntryBody.init(text:created:timeZone:) behind
# @_spi(Format) (-1), a convenience initialiser: an app writes
# EntryBody(created: Date(), text: …), the one public initialiser, whose
# other fields default (the README's lines and the app tests do).
# 279 (from 276): Vault.revisions(of:), EntryRevision.body and .isDeleted
# public again (+3; the 289 step above moved them too far): an entry
# deleted here or on another device has an empty tombstone as its
# snapshot and its only version, so a "Recently deleted" screen reads the
# text it shows, and tx.restore the body it restores, from the last
# revision before the deletion (iOS trial of stop 40, finding 1).
# EntrySnapshot.revisionCount stays behind @_spi(Format).
# 280 (from 279): KeyringMember.fingerprint (+1): KeyState.devices is
# documented as what a devices screen lists by name and fingerprint, and
# the fingerprint of a member's key had no public form (iOS trial of stop
# 40, finding 4).
# 282 (from 280): Vault.tagCounts() and Vault.journalCounts(), async (+2;
# their blocking twins are @_spi(Format)): a sidebar's live entries per
# tag and per journal, read from the entry summaries, without paging the
# vault (issue 13, an iOS trial's finding).
# 291 (from 282): FoldReport.Copy.keptBecause and FoldReport.KeptReason
# (the enum, its 6 cases and its init(rawValue:), +9): a fold never merges
# iCloud Drive's "Journal 2.quire" (a name a backup may have), and only the
# reason told an app "it holds entries the journal lacks: ask the person
# whether to merge it" from "nothing to merge" or a failure (iOS trial of
# session 41, finding 1).
# 292 (from 291): UnreadRecords.records (+1): the public code and message
# of UnreadRecords.Record were unreachable without it (iOS trial of
# session 41, finding 4).
# 290 (from 292): two names that say again what another public name says,
# behind @_spi(Format) (issue 13 need 7, -2): UnreadRecords.count (an app
# reads records.count, since UnreadRecords.records went public) and
# FoldReport.Copy.deleted (true exactly when keptBecause is nil, which an
# app reads to choose what to ask). The CLI, the demo and the sync tests
# import them with @_spi(Format).
# 296 (from 290): DeletedEntry (the type, id, body, deletion, deleted)
# and VaultTransaction.restore(_:) (+6): deletedEntries() rows carried the
# tombstone's empty body, and restoring a row's body restored an empty
# entry that a compaction made final (third iOS trial, defect 1); a row
# now shows the entry as it was, and restore(_:) brings that back.
API_SURFACE_MAX := 296
api-surface:
	SWIFT=$(SWIFT) Scripts/public-surface.sh --undocumented --max $(API_SURFACE_MAX)

# The doc comments of the public names link (``Name``) only to names an app
# sees: Scripts/doc-links.sh resolves each link in the symbol graph that
# `make api-surface` reads and fails on one to an @_spi, package, internal
# or private declaration (DocC shows it as a broken link, Quick Help as a
# name the app cannot write; iOS review 27 §1.5), and on an async form
# whose comment sends the reader to its @_spi blocking twin of the same
# name. `make lint` runs it.
doc-links:
	SWIFT=$(SWIFT) Scripts/doc-links.sh

# The test targets, run one at a time by make test so that it says where
# it is (Swift Testing starts every test of a run at once, so completions
# come late and together).
TEST_TARGETS := QuireCryptoTests QuireFormatTests QuireKeysTests QuireSyncTests QuireTests QuireImportTests QuireExportTests QuireMarkdownTests QuirePDFTests QuireCLITests

# Swift Testing prints a line when each test starts and ends; this keeps
# the ends and failures (with a running count), so a long run shows where
# it is without flooding the terminal. pipefail keeps swift test's status.
SHELL := /bin/bash
TEST_PROGRESS := awk '/Test run with|recorded an issue|error:|Fatal error/ { print; fflush(); next } /^(✔|✘|􁁛|􀢄) Test .* (passed|failed)/ { n++; if ($$0 ~ /failed|✘|􀢄/ || n % 25 == 0) { print "  [" n " tests finished] " $$0; fflush() } }'

# Kills quire at random system calls and injects I/O errors (strace), for
# every write operation, then checks that nothing acknowledged is lost,
# the vault opens and verifies, and nothing is left behind; then
# concurrency mixes and a disk-full run on a small tmpfs (skipped where
# mounting is not allowed). Tests/torture/torture.py; TORTURE_SEED=N.
TORTURE_SEED ?= 15
torture: deps
	$(SWIFT) build --product quire
	$(PYTHON) Tests/torture/torture.py --quire "$$($(SWIFT) build --show-bin-path)/quire" --seed $(TORTURE_SEED)

# The same, a few trials per operation (make test and CI).
torture-quick: deps
	$(SWIFT) build --product quire
	$(PYTHON) Tests/torture/torture.py --quire "$$($(SWIFT) build --show-bin-path)/quire" --seed $(TORTURE_SEED) --quick

# One vault shared by two Syncthing instances on 127.0.0.1 (Debian package
# syncthing, installed here when missing): a forced conflict copy is folded
# back and both sides must end with byte-identical files (Spec/merge.md §4);
# then again with one side compacting with a rekey while apart (§6).
test-sync: deps
	@dpkg-query -W -f='$${Status}' syncthing 2>/dev/null | grep -q "install ok installed" || { \
	  echo "make test-sync: installing syncthing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get install -y --no-install-recommends syncthing >/dev/null 2>&1 || \
	  { $$SUDO apt-get update >/dev/null && $$SUDO apt-get install -y --no-install-recommends syncthing; }; }
	$(SWIFT) build --product quire-sync-helper
	$(PYTHON) Tests/sync/run_syncthing.py "$$($(SWIFT) build --show-bin-path)/quire-sync-helper"

# Regenerates Vectors/ and Spec/worked-example.md from seeded randomness
# (deterministic).
vectors: deps
	$(SWIFT) run quire-vectors generate Vectors
	$(SWIFT) run quire-vectors worked-example Spec/worked-example.md

# Regenerating must change nothing, and every vector must verify.
vectors-check: deps
	$(SWIFT) run quire-vectors verify Vectors
	$(SWIFT) run quire-vectors check-regenerate Vectors
	$(SWIFT) run quire-vectors worked-example --check Spec/worked-example.md

# Rule 6 (format.md §8.4) over every key graph of up to four keyrings,
# through the Python reader's removal rule: the properties of its header;
# then 3,000 random graphs of five to seven, whose known failures (the
# residual classes of format.md §8.4 Limits) are pinned, so that a new
# class shows up as a difference (eighth review R8-4); then 1,000 random
# graphs in which a removed device's fork keys enrol each other, their known
# failures pinned too (R9-5); then the named graphs of format.md §8.4
# scenarios 14 and 15, which neither random mode need reach (R9-1).
removal-check: deps
	@cd Conformance/python && $(PYTHON) check_removal_rule.py 3 && $(PYTHON) check_removal_rule.py 4 \
	  && $(PYTHON) check_removal_rule.py -3000 --expect P1=8,P1w=1 \
	  && $(PYTHON) check_removal_rule.py -1000 --cycles --expect P1=9 && $(PYTHON) check_removal_rule.py --scenarios

# The independent Python reader and merge (written from Spec/ alone) against
# every vector; PyNaCl and zstandard come from Debian (make deps). Prints the
# totals; on a failure, the failing lines, and fails.
conformance: deps
	@cd Conformance/python && for run in "run_vectors.py ../../Vectors/files" "run_merge.py ../../Vectors/merge"; do \
	  out=$$($(PYTHON) $$run 2>&1); rc=$$?; echo "$$out" | tail -n 1; \
	  if [ $$rc -ne 0 ]; then echo "$$out" | grep -v "^PASS" | tail -n 40; exit 1; fi; \
	done

bench: release
	$(SWIFT) build $(RELEASE_FLAGS) --product quire-bench
	"$(RELEASE_BIN)/quire-bench" --write BENCHMARKS.md

# Format 2 against format 1 (branch main), same machine, interleaved runs:
# prints the ratios v2/v1 for add, open, read, merge and compaction
# (BENCHMARKS.md, "Format 2 against format 1"). Builds main's quire-bench
# in /tmp/quire-v1 (or $$TMPDIR) from `git archive`; nothing on main changes.
bench-compare: release
	$(PYTHON) Scripts/bench-format-compare.py --write BENCHMARKS.md

# Quire beside jrnl, KeePassXC and age on the same synthetic journal and
# the same 64 MiB file, whole processes timed by hyperfine, in one run
# (BENCHMARKS.md, "Beside jrnl, KeePassXC and age"; about 20 minutes).
# Installs keepassxc-cli, age and hyperfine from Debian when missing, and
# jrnl from PyPI into a venv under ~/.cache/quire/bench-peers. Every tool
# runs in a scratch HOME and QUIRE_HOME: no real key store is touched.
# BENCH_PEERS_FLAGS=--quick: 1k/5k entries and 8 MiB, nothing written;
# '--sizes 10000 --write BENCHMARKS.md': the 10k journal only (a loaded
# machine); '--before OLD-QUIRE' times an older build beside it. The
# attachments run interleaved with age, round by round (--rounds N).
BENCH_PEERS_FLAGS ?= --write BENCHMARKS.md
bench-peers: deps
	$(call install-missing,$(PEER_PACKAGES))
	$(SWIFT) build $(RELEASE_FLAGS) --product quire
	nice -n 5 $(PYTHON) Scripts/bench-peers.py --quire "$(RELEASE_BIN)/quire" $(BENCH_PEERS_FLAGS)

# list, list --json, a page (-n 20), search, show and verify as whole
# processes at 1k, 10k and 50k entries (issue 14), with hyperfine from
# Debian. BENCH_LISTING_FLAGS: e.g. --before OLD-QUIRE --write BENCHMARKS.md.
bench-listing: deps
	$(call install-missing,hyperfine)
	$(SWIFT) build $(RELEASE_FLAGS) --product quire
	nice -n 5 $(PYTHON) Scripts/bench-listing.py --quire "$(RELEASE_BIN)/quire" $(BENCH_LISTING_FLAGS)

# A quick debug run of every benchmark (small sizes, nothing written): keeps
# the benchmark code working between real runs. Reports, never asserts timings.
bench-smoke: deps
	$(SWIFT) run quire-bench --quick > /dev/null
	@echo "quire-bench --quick: every benchmark ran"

# Always a clean build: an incremental fuzz build once kept a module compiled
# against an older enum layout, which crashed the fuzzer on a valid input.
fuzz: deps
	rm -rf Fuzz/.build
	cd Fuzz && $(SWIFT) build -c debug --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p Fuzz/corpus-$$t; \
	  echo "== $$t ($(FUZZ_SECONDS)s)"; \
	  SWIFT_BACKTRACE=enable=no Fuzz/.build/debug/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
	    -artifact_prefix=Fuzz/crash-$$t- Fuzz/corpus-$$t Vectors/files Fuzz/seeds/$$t || exit 1; \
	done

# The main job on a bundled real journal (Pepys's diary), step by step:
# first through the quire CLI (Scripts/demo.sh), then the library underneath
# (quire-demo: damage, a torn write, a lost phone and a rekey). Both work in
# temporary folders with their own key stores.
demo: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product quire
	$(SWIFT) build $(RELEASE_FLAGS) --product quire-book
	$(SWIFT) build $(RELEASE_FLAGS) --product quire-demo
	bash Scripts/demo.sh "$(RELEASE_BIN)/quire"
	"$(RELEASE_BIN)/quire-demo" Tests/Fixtures

# The man page, written from the command declarations: `man ./quire.1`.
man: deps
	$(SWIFT) build --product quire
	"$$($(SWIFT) build --show-bin-path)/quire" generate-manual > quire.1
	@echo "wrote quire.1 (read it with: man ./quire.1)"

# Loads the bash, zsh and fish completions into those shells and checks them.
completions-check: deps
	$(SWIFT) build --product quire
	bash Scripts/check-completions.sh "$$($(SWIFT) build --show-bin-path)/quire"

# Installs the release binary, the man page and the bash, zsh and fish
# completions under $(PREFIX) (default /usr/local; DESTDIR for packaging).
install: release
	$(MAKE) install-files QUIRE_BIN="$(RELEASE_BIN)/quire"

# The files of `make install` from an already built binary QUIRE_BIN (and
# the quire-book helper built beside it).
install-files:
	@test -x "$(QUIRE_BIN)" || { echo "make install-files: set QUIRE_BIN to a built quire binary" >&2; exit 1; }
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/man/man1" \
	  "$(DESTDIR)$(PREFIX)/share/bash-completion/completions" "$(DESTDIR)$(PREFIX)/share/zsh/site-functions" \
	  "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d"
	install -m 0755 "$(QUIRE_BIN)" "$(DESTDIR)$(PREFIX)/bin/quire"
	install -d "$(DESTDIR)$(PREFIX)/libexec/quire"
	install -m 0755 "$$(dirname "$(QUIRE_BIN)")/quire-book" "$(DESTDIR)$(PREFIX)/libexec/quire/quire-book"
	"$(QUIRE_BIN)" generate-manual > "$(DESTDIR)$(PREFIX)/share/man/man1/quire.1"
	"$(QUIRE_BIN)" completion bash > "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/quire"
	"$(QUIRE_BIN)" completion zsh > "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_quire"
	"$(QUIRE_BIN)" completion fish > "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/quire.fish"
	@echo "installed quire, its quire-book helper (PDF books), its man page and its bash, zsh and fish completions under $(DESTDIR)$(PREFIX)"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/quire" "$(DESTDIR)$(PREFIX)/libexec/quire/quire-book" "$(DESTDIR)$(PREFIX)/share/man/man1/quire.1" \
	  "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/quire" "$(DESTDIR)$(PREFIX)/share/zsh/site-functions/_quire" \
	  "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/quire.fish"

clean:
	rm -rf .build Fuzz/.build quire.1
