// Benchmark: the device-local index cache (Spec/index-cache.md) on its own:
// sealing and writing the summaries and search index of a synthetic vault,
// and loading them back, as a cold open would before reading the tail.

@_spi(Format) import Quire
@_spi(Crypto) import QuireCrypto
@_spi(Format) import QuireFormat
@_spi(Format) import QuireKeys
import QuireSystem

enum IndexCacheBenchmark {
    static let repetitions = 7

    static func run(_ shared: SharedFixtures) throws -> Section {
        var section = Section(name: "cache", title: "Device-local index cache (issue 13 need 4)")
        section.explanation = [
            "Summaries of a synthetic vault (the query benchmark's generator: 500–2,000 bytes of English text, 0–3 tags of 20, "
                + "five time zones) are made directly, with the search index built from their text; no vault file is involved. "
                + "*Seal* encodes and seals them (XChaCha20-Poly1305, Padmé); *write* adds the 0600 temporary file, fsync and rename. "
                + "*Load summaries* reads the file, checks the header, opens the body and decodes the summaries (search index "
                + "left encoded); *+ table* also builds the date-ordered summary table queries scan. *Load with search* also "
                + "decodes the postings and rebuilds the in-memory search index. Medians of \(repetitions) runs."
        ]
        let sizes = shared.quick ? [2_000, 10_000] : [10_000, 50_000]
        var table = Table(["measure"] + sizes.map { "\(grouped($0)) entries" })
        var columns: [[String: Double]] = []
        var notes: [String] = []
        let device = try DeviceIdentity.generate(name: "bench", now: 1_700_000_000_000, using: SeededRandom(label: "cache bench device"))
        let vaultID = VaultID(unchecked: Array(repeating: 7, count: 16))
        let key = try IndexCacheKey(device: device, vaultID: vaultID)
        for n in sizes {
            var m: [String: Double] = [:]
            let (contents, buildNs) = synthesise(count: n, vaultID: vaultID)
            m["search index build from text (once)"] = Double(buildNs) / 1e6
            var seal = Samples()
            var sealedCount = 0
            for _ in 0..<repetitions {
                let (bytes, ns) = timed { IndexCache.seal(contents, key: key) }
                seal.add(ns)
                sealedCount = bytes.count
            }
            m["seal (encode + pad + AEAD)"] = seal.median / 1e6
            let folder = shared.workspace.file("cache-\(n)")
            var write = Samples()
            for _ in 0..<3 {
                let (_, ns) = try timed { try IndexCache.write(contents, key: key, folder: folder) }
                write.add(ns)
            }
            m["seal + write (fsync, rename)"] = write.median / 1e6
            let size = try FileSystem.size(folder + "/" + key.fileName)
            m["file size (KiB)"] = Double(size) / 1024
            var light = Samples()
            var lightTable = Samples()
            var full = Samples()
            var tableOnly = Samples()
            for _ in 0..<repetitions {
                let (loaded, ns) = timed { IndexCache.load(folder: folder, key: key, vaultID: vaultID, search: false) { _ in nil } }
                guard case .loaded(let c) = loaded, c.entryCount == n else { throw BenchError("cache discarded") }
                light.add(ns)
                let (rows, ns2) = timed { c.tableRowCount() }
                guard rows == n else { throw BenchError("table of \(rows ?? -1) rows") }
                lightTable.add(ns + ns2)
                tableOnly.add(ns2)
                let (withSearch, ns3) = timed {
                    guard case .loaded(let c) = IndexCache.load(folder: folder, key: key, vaultID: vaultID, check: { _ in nil }) else {
                        return [Int32]?.none
                    }
                    return c.positions(matching: "bridge")
                }
                guard let hits = withSearch, !hits.isEmpty else { throw BenchError("search after load found nothing") }
                full.add(ns3)
            }
            m["load summaries (read + open + decode)"] = light.median / 1e6
            m["load summaries + table"] = lightTable.median / 1e6
            m["(of which the table)"] = tableOnly.median / 1e6
            m["load with search + first search"] = full.median / 1e6
            columns.append(m)
            if let s = contents.search {
                notes.append(
                    "\(grouped(n)) entries: \(grouped(sealedCount)) bytes sealed, \(grouped(s.terms.count)) terms, "
                        + "\(grouped(s.postings.reduce(0) { $0 + $1.count })) postings")
            }
        }
        let order = [
            "search index build from text (once)", "seal (encode + pad + AEAD)", "seal + write (fsync, rename)", "file size (KiB)",
            "load summaries (read + open + decode)", "load summaries + table", "(of which the table)", "load with search + first search",
        ]
        for name in order {
            let unit = name.hasSuffix("(KiB)") ? "" : " ms"
            table.row([name] + columns.map { $0[name].map { fmt($0, $0 < 1 ? 3 : 1) + unit } ?? "–" })
        }
        section.tables.append(("", table))
        let big = columns.last!
        let load = big["load summaries + table"] ?? .nan
        section.targets.append(
            Target(
                what: "load \(grouped(sizes.last!)) summaries from the cache and build the table", target: "≤ 50 ms",
                measured: fmt(load, 1) + " ms", met: shared.quick ? nil : load <= 50))
        if let small = columns.first?["load summaries + table"] {
            section.notes.append("load summaries + table, \(grouped(sizes.last!)) vs \(grouped(sizes[0])): \(ratio(load / small))")
        }
        section.notes += notes
        return section
    }

    /// Cache contents for `count` generated entries, and the time the search
    /// index took to build from their text.
    static func synthesise(count: Int, vaultID: VaultID) -> (IndexCache.Contents, UInt64) {
        var generator = EntryGenerator(seed: 21)
        let ids = SeededRandom(label: "cache bench ids")
        var entries: [IndexCache.Entry] = []
        var documents: [(position: Int32, text: String, tags: [String])] = []
        entries.reserveCapacity(count)
        var offsets = [String: Int32]()
        for i in 0..<count {
            let body = generator.body()
            let zone = body.timeZoneIdentifier
            let offset = offsets[zone] ?? Int32((zone.utf8.count % 5) * 3600 - 7200)
            offsets[zone] = offset
            let summary = EntrySummary(
                id: EntryID(unchecked: ids.bytes(16)), created: body.createdMilliseconds, utcOffsetSeconds: offset,
                tags: body.tags.map { $0.lowercased() }, journal: "", isStarred: i % 17 == 0, hasAttachments: i % 9 == 0,
                hasPhotos: i % 9 == 0, isDeleted: i % 50 == 0, hasConflict: false, standing: 2, frame: 2 * i + 3)
            entries.append(
                IndexCache.Entry(
                    summary: summary, revision: RevisionID(unchecked: ids.bytes(16)), frameOffset: UInt64(i) * 1400 + 4096,
                    clock: UInt64(body.createdMilliseconds) << 16))
            if !summary.isDeleted { documents.append((Int32(i), body.text, body.tags)) }
        }
        let identity = IndexCache.Identity(
            committedLength: UInt64(count) * 1400 + 4096, frameCount: 2 * count + 4, chainHead: Array(repeating: 1, count: 32),
            keyringHeads: [KeyringID(unchecked: Array(repeating: 2, count: 32))])
        return timed { IndexCache.Contents(vaultID: vaultID, identity: identity, entries: entries, documents: documents) }
    }
}
