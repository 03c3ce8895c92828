// quire-vectors: generates and verifies the test vectors in Vectors/.
//
//   quire-vectors generate DIR          write DIR/files/<name>.qv and DIR/merge/<name>/ (deterministic)
//   quire-vectors verify DIR            check every vector against the library
//   quire-vectors check-regenerate DIR  fail if regenerating would change a byte
//   quire-vectors worked-example [--check] FILE
//                                       write Spec/worked-example.md (or fail if it would change)
//   quire-vectors list                  print the vector names

import Foundation
import QuireVectors

func usage() -> Never {
    FileHandle.standardError.write(
        Data("usage: quire-vectors generate|verify|check-regenerate DIR | worked-example [--check] FILE | list\n".utf8))
    exit(64)
}

func generateAll() throws -> [(String, VectorFile)] {
    var out: [(String, VectorFile)] = []
    var names = Set<String>()
    for make in Catalog.all {
        let (name, vector) = try make()
        precondition(names.insert(name).inserted, "duplicate vector name \(name)")
        out.append((name, vector))
    }
    return out.sorted { $0.0 < $1.0 }
}

let args = CommandLine.arguments.dropFirst()
guard let command = args.first else { usage() }
let scratch = NSTemporaryDirectory() + "quire-vectors-check-\(getpid()).quire"

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("quire-vectors: error: \(message)\n".utf8))
    try? FileManager.default.removeItem(atPath: VectorBuilder.directory)
    exit(1)
}

do {
    switch command {
    case "list":
        for (name, _) in try generateAll() { print(name) }
    case "generate":
        guard args.count == 2 else { usage() }
        let dir = args.last! + "/files"
        try? FileManager.default.removeItem(atPath: dir)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var failures = 0
        let vectors = try generateAll()
        for (name, vector) in vectors {
            // The generator's oracle must agree with the library before a vector is written.
            if let problem = Checker.mismatch(vector, Checker.outcome(of: vector, scratch: scratch)) {
                print("MISMATCH \(name): \(problem)")
                failures += 1
            }
            try Data(vector.serialized()).write(to: URL(fileURLWithPath: dir + "/" + name + ".qv"))
        }
        print("wrote \(vectors.count) vectors to \(dir)")
        let merges = try MergeVectors.write(to: args.last!)
        let (_, mergeFailures) = try MergeVectors.verify(in: args.last!)
        for f in mergeFailures { print("MISMATCH merge \(f)") }
        print("wrote \(merges) merge vectors to \(args.last!)/merge")
        failures += mergeFailures.count
        if failures > 0 {
            print("\(failures) vectors disagree with the library")
            exit(1)
        }
    case "verify":
        guard args.count == 2 else { usage() }
        let dir = args.last! + "/files"
        guard let listing = try? FileManager.default.contentsOfDirectory(atPath: dir) else { fail("no vectors directory at \(dir)") }
        let names = listing.filter { $0.hasSuffix(".qv") }.sorted()
        var failures = 0
        var classes: [String: Int] = [:]
        var codes = Set<String>()
        for name in names {
            let vector = try VectorFile.parse(Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))))
            classes[vector.expect, default: 0] += 1
            if let e = vector.error { codes.insert(e) }
            for i in vector.issues { codes.insert(i.code) }
            if let problem = Checker.mismatch(vector, Checker.outcome(of: vector, scratch: scratch)) {
                print("FAIL \(name): \(problem)")
                failures += 1
            }
        }
        let summary = classes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        print("\(names.count - failures)/\(names.count) vectors pass (\(summary)); \(codes.count) distinct error codes covered")
        let (mergeCount, mergeFailures) = try MergeVectors.verify(in: args.last!)
        for f in mergeFailures { print("FAIL merge \(f)") }
        print("\(mergeCount - mergeFailures.count)/\(mergeCount) merge vectors pass")
        if failures > 0 || names.isEmpty || !mergeFailures.isEmpty || mergeCount == 0 { exit(1) }
    case "worked-example":
        // quire-vectors worked-example [--check] PATH
        let check = args.contains("--check")
        guard let target = args.dropFirst().last(where: { $0 != "--check" }) else { usage() }
        let text = try WorkedExample.generate()
        if check {
            let onDisk = try? String(contentsOfFile: target, encoding: .utf8)
            if onDisk != text {
                print("regenerating \(target) would change it: run `make vectors` and commit the result with the code change")
                exit(1)
            }
            print("regenerating \(target) changes nothing")
        } else {
            try text.write(toFile: target, atomically: true, encoding: .utf8)
            print("wrote \(target)")
        }
    case "check-regenerate":
        guard args.count == 2 else { usage() }
        let dir = args.last! + "/files"
        var changed: [String] = []
        let vectors = try generateAll()
        guard let listing = try? FileManager.default.contentsOfDirectory(atPath: dir) else { fail("no vectors directory at \(dir)") }
        let existing = Set(listing.filter { $0.hasSuffix(".qv") })
        for (name, vector) in vectors {
            let path = dir + "/" + name + ".qv"
            let onDisk = try? Data(contentsOf: URL(fileURLWithPath: path))
            if onDisk != Data(vector.serialized()) { changed.append(name) }
        }
        let stale = existing.subtracting(vectors.map { $0.0 + ".qv" })
        changed += try MergeVectors.changed(in: args.last!).map { "merge/" + $0 }
        if !changed.isEmpty || !stale.isEmpty {
            print(
                "regenerating would change \(changed.count) vectors and remove \(stale.count): \((changed + stale.sorted()).joined(separator: ", "))"
            )
            print("run `make vectors` and commit the result with the code change")
            exit(1)
        }
        print("regenerating \(vectors.count) vectors and the merge vectors changes nothing")
    default:
        usage()
    }
} catch {
    fail("\(error)")
}
try? FileManager.default.removeItem(atPath: VectorBuilder.directory)
