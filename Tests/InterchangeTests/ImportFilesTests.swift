import EventStore
import Foundation
@testable import Interchange
import MessagesModel
import Recorder
import Simulation
import Games
import GameKit
import TestSupport
import Testing

/// Imports from files: the fast line reader against its reference (`JSONDecoder`),
/// and the mapped, two-pass import against the in-memory one.
@Suite struct ImportFilesTests {
    func simulated(_ folder: TemporaryFolder, seed: UInt64, games: Int) throws -> EventStore {
        let store = try EventStore(path: folder.path("original-\(seed).sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: seed), games: .standard, seed: seed, noise: 0.2)
        for n in 0..<games { try simulator.play(n.isMultiple(of: 2) ? "battleship" : "tictactoe") }
        return store
    }

    /// Every line of an export: events, then their devices' tree and head lines.
    func allLines(_ store: EventStore, streams: Set<UUID>? = nil) throws -> [String] {
        var out: [String] = []
        _ = try Interchange.export(from: store, streams: streams) { out.append($0) }
        return out
    }

    func lines(_ store: EventStore, streams: Set<UUID>? = nil) throws -> [String] {
        var out: [String] = []
        _ = try Interchange.export(from: store, streams: streams) { out.append($0) }
        // Event lines only: tree and head lines are read by JSONDecoder alone.
        let events = out.filter { !$0.hasPrefix(#"{"head":"#) && !$0.hasPrefix(#"{"tree":"#) }
        #expect(events.count < out.count)
        return events
    }

    func reference(_ line: [UInt8]) -> ExportLine.Fields? {
        guard let e = try? JSONDecoder().decode(ExportedEvent.self, from: Data(line)) else { return nil }
        var hash: Hash32?
        if let text = e.streamHash {
            guard text.count == 64 else { return nil }
            let bytes = stride(from: 0, to: 64, by: 2).compactMap { UInt8(String(Array(text)[$0..<($0 + 2)]), radix: 16) }
            guard bytes.count == 32 else { return nil }
            hash = Hash32(bytes)
        }
        return ExportLine.Fields(id: e.id, payload: Array(e.payload.utf8), position: e.position, recordedAt: e.recordedAt,
                                 stream: e.stream, streamHash: hash, streamVersion: e.streamVersion, type: e.type,
                                 typeVersion: e.typeVersion, leaf: e.leaf)
    }

    /// Type names met before, shared by every line a test reads (as a check's lines share them).
    let names = ExportLine.TypeNames()

    /// The fast reader, with and without the names met before: the two must read alike.
    func fast(_ line: [UInt8]) -> ExportLine.Fields? {
        let alone = line.withUnsafeBytes { ExportLine.parse($0) }
        let withNames = line.withUnsafeBytes { ExportLine.parse($0, names: names) }
        #expect(alone == withNames, "\(String(decoding: line, as: UTF8.self).prefix(200))")
        return alone
    }

    /// Names that land on one slot replace each other and are still each read as written.
    @Test func typeNamesAreReadAsWrittenWhateverSlotTheyShare() {
        let names = ExportLine.TypeNames()
        let written = (0..<500).map { "type.number\($0)" } + ["a", "", "callback.willBecomeActive", "callback.willBecomeActivf"]
        var read = 0
        for round in 0..<3 {
            for name in (round == 1 ? written.reversed() : written) {
                let bytes = Array(name.utf8)
                #expect(bytes.withUnsafeBytes { names.name($0) } == name)
                read += 1
            }
        }
        #expect(read == 3 * written.count)
    }

    /// Lines end at each newline, wherever it falls in a vector's width, and the last at
    /// the end of the bytes with or without one.
    @Test func linesEndAtTheirNewlineWhereverItFalls() {
        var checked = 0
        for length in 0..<70 {
            for newlineAt in [nil] + (0..<length).map(Optional.some) {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                if let newlineAt { bytes[newlineAt] = 0x0A }
                bytes.withUnsafeBytes { raw in
                    for start in 0...length {
                        let expected = newlineAt.flatMap { $0 >= start ? $0 : nil } ?? length
                        #expect(Interchange.lineEnd(raw, from: start) == expected, "length \(length), newline \(String(describing: newlineAt)), from \(start)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 70_000)
        #expect(Interchange.lineEnd(UnsafeRawBufferPointer(start: nil, count: 0), from: 0) == 0)
    }

    @Test func everyExportedLineTakesTheFastPathAndReadsAsJSONDecoderReadsIt() throws {
        let folder = try TemporaryFolder()
        var all = try lines(try simulated(folder, seed: 21, games: 6))
        // Payload characters an encoder must escape, and some it must not.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for payload in [#"{"caption":"\"quoted\" \\ back/slash"}"#, "tab\tnew\nline\r\u{1}\u{1F}", "Zoë 🚢 日本", ""] {
            let event = ExportedEvent(id: UUID(), stream: UUID(), streamVersion: 3, type: "input.touch", typeVersion: 1,
                                      recordedAt: -5, payload: payload, position: 0)
            all.append(String(decoding: try encoder.encode(event), as: UTF8.self))
        }
        // Stream hashes as exports do not write them but JSON allows: upper-case digits,
        // digits escaped (read past the in-place path, by the string reader).
        let hashed = try #require(all.first { $0.contains(#""streamHash":""#) })
        let digits = try #require(hashed.range(of: #"(?<="streamHash":")[0-9a-f]{64}"#, options: .regularExpression))
        let escaped = hashed[digits].replacingOccurrences(of: "0", with: #"\u0030"#).replacingOccurrences(of: "a", with: #"\u0061"#)
        #expect(escaped.contains(#"\u"#))
        all.append(hashed.replacingCharacters(in: digits, with: hashed[digits].uppercased()))
        all.append(hashed.replacingCharacters(in: digits, with: escaped))
        // Ids and types as exports do not write them: lower case, escaped (read past the
        // in-place path), and a type that is not ASCII.
        let id = try #require(hashed.range(of: #"(?<="id":")[0-9A-F-]{36}"#, options: .regularExpression))
        all.append(hashed.replacingCharacters(in: id, with: hashed[id].lowercased()))
        all.append(hashed.replacingCharacters(in: id, with: hashed[id].replacingOccurrences(of: "-", with: #"\u002D"#)))
        let type = try #require(hashed.range(of: #"(?<="type":")[a-zA-Z.]+"#, options: .regularExpression))
        all.append(hashed.replacingCharacters(in: type, with: hashed[type].replacingOccurrences(of: ".", with: #"\u002e"#)))
        all.append(hashed.replacingCharacters(in: type, with: "input.tap\u{00E9}"))
        all.append(hashed.replacingCharacters(in: type, with: #"input.tap\u00e9"#))
        for line in all {
            let bytes = Array(line.utf8)
            let read = try #require(fast(bytes), "\(line.prefix(120))")
            #expect(read == reference(bytes))
        }
        // A digit short, or one not a digit: refused by both.
        for bad in [hashed.replacingCharacters(in: digits, with: hashed[digits].dropLast()),
                    hashed.replacingCharacters(in: digits, with: "g" + hashed[digits].dropFirst())] {
            #expect(fast(Array(bad.utf8)) == nil && reference(Array(bad.utf8)) == nil)
        }
    }

    @Test func damagedLinesAreNeverReadDifferentlyThanByTheReference() throws {
        let folder = try TemporaryFolder()
        let sample = try lines(try simulated(folder, seed: 22, games: 2)).prefix(60).map { Array($0.utf8) }
        var generator = SeededGenerator(seed: 22)  // seeded: a failing mutation replays
        var acceptedByFast = 0
        for round in 0..<6_000 {
            var line = sample[round % sample.count]
            let at = Int(generator.next() % UInt64(line.count))
            switch generator.next() % 4 {
            case 0: line[at] ^= UInt8(truncatingIfNeeded: 1 << (generator.next() % 8))
            case 1: line.remove(at: at)
            case 2: line.insert(Array(#" "\{}:,-0u9aZ"#.utf8)[Int(generator.next() % 13)], at: at)
            default: line = Array(line[..<at])
            }
            // Whatever the fast reader accepts, the reference reads the same way.
            if let read = fast(line) {
                acceptedByFast += 1
                #expect(read == reference(line), "\(String(decoding: line, as: UTF8.self).prefix(200))")
            }
        }
        #expect(acceptedByFast > 0)
    }

    @Test func filesFromTwoDevicesImportAsTheVerySameLog() throws {
        let folder = try TemporaryFolder()
        let original = try simulated(folder, seed: 23, games: 6)
        var byDevice: [String: Set<UUID>] = [:]
        for event in try original.events(EventQuery(types: ["recording.started"])) {
            let device = String(decoding: event.payload, as: UTF8.self).contains(#""device":"A""#) ? "A" : "B"
            byDevice[device, default: []].insert(event.stream)
        }
        // Device A's file as written; device B's with CRLF line ends and blank lines.
        let a = try allLines(original, streams: byDevice["A"]).joined(separator: "\n") + "\n"
        let b = "\r\n" + (try allLines(original, streams: byDevice["B"]).joined(separator: "\r\n\r\n")) + "\r\n"
        try Data(a.utf8).write(to: URL(fileURLWithPath: folder.path("a.jsonl")))
        try Data(b.utf8).write(to: URL(fileURLWithPath: folder.path("b.jsonl")))
        let files = try [folder.path("b.jsonl"), folder.path("a.jsonl")].map { try ExportFile(path: $0) }

        let merged = try EventStore(path: folder.path("merged.sqlite"))
        var stages: [ImportStage] = []
        let first = try Interchange.import(files: files, into: merged, batchSize: 97) { stage, _, _ in
            if stages.last != stage { stages.append(stage) }
        }
        let total = Int(try original.count().events)
        #expect(first == ImportSummary(read: total, stored: total, unsigned: 0))
        #expect(stages == [.checking, .storing])
        #expect(try merged.headHash() == (try original.headHash()))
        // Twice adds nothing.
        #expect(try Interchange.import(files: files, into: merged) == ImportSummary(read: total, stored: 0, unsigned: 0))
        #expect(try merged.count().events == Int64(total))
    }

    /// The check hands the append each line's recording hash, leaf hash and catalog tags;
    /// the log stored with them is the one stored without them, and hashes handed over
    /// for another place in a recording (here every line's neighbour's) are not used.
    @Test func whatTheCheckWorkedOutStoresTheVerySameLog() throws {
        let folder = try TemporaryFolder()
        let original = try simulated(folder, seed: 25, games: 4)
        let text = try allLines(original).joined(separator: "\n") + "\n"
        let plan = try Interchange.check(files: [ExportFile(name: "all", contents: Data(text.utf8))])
        let streams = Set(try original.events(EventQuery(types: ["recording.started"])).map(\.stream))
        let checked = try #require(plan.checked)
        #expect(checked.count == plan.count && plan.count > 100)
        #expect(checked.filter { $0.hashes.recording?.leafHash != nil && $0.tags != nil }.count == plan.count)
        #expect(checked.contains { !($0.tags ?? []).isEmpty })

        var without = plan
        without.checked = nil
        var shifted = plan
        shifted.checked = checked.indices.map { index in
            var line = checked[index]
            line.hashes = checked[(index + 1) % checked.count].hashes
            return line
        }
        var logs: [String: EventStore] = [:]
        for (name, variant) in [("with", plan), ("without", without), ("shifted", shifted)] {
            let store = try EventStore(path: folder.path("\(name).sqlite"))
            let summary = try Interchange.import(variant, into: store, batchSize: 113)
            #expect(summary.stored == plan.count, "\(name)")
            logs[name] = store
        }
        for (name, store) in logs {
            #expect(try store.headHash() == (try original.headHash()), "\(name)")
            #expect(try store.verifyIntegrity().isSound, "\(name)")
            #expect(try store.verifyProofs().problems.isEmpty, "\(name)")
            #expect(try allLines(store) == (try allLines(original)), "\(name)")
            #expect(try store.catalogIsComplete(), "\(name)")
            var entries = 0
            for stream in streams {
                let stored = try store.catalogEntries(ofStream: stream)
                #expect(Set(stored) == Set(try original.catalogEntries(ofStream: stream)), "\(name)")
                entries += stored.count
            }
            #expect(entries > 0)
        }
    }

    /// The check works a recording's digests out side by side, in batches; what it refuses,
    /// and at which line, is what a check of one line after another refuses: an edited
    /// line is named wherever it falls in a batch, before any error of a later line, and
    /// lines that carry no stream hash (older exports) are chained from what was worked out.
    @Test func anEditIsNamedAtItsLineWhereverItFallsInABatchOfDigests() throws {
        let folder = try TemporaryFolder()
        let all = try allLines(try simulated(folder, seed: 26, games: 3))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func event(_ line: String) -> ExportedEvent? { try? JSONDecoder().decode(ExportedEvent.self, from: Data(line.utf8)) }
        func line(_ event: ExportedEvent) throws -> String { String(decoding: try encoder.encode(event), as: UTF8.self) }
        func refusal(_ lines: [String]) -> InterchangeError? {
            do {
                _ = try Interchange.check(files: [ExportFile(name: "f", contents: Data((lines.joined(separator: "\n") + "\n").utf8))])
                return nil
            } catch {
                return error as? InterchangeError
            }
        }
        // The longest recording's lines (they come in its order), well past a batch.
        let byStream = Dictionary(grouping: all.indices.filter { event(all[$0]) != nil }) { event(all[$0])!.stream }
        let indices = try #require(byStream.values.max { $0.count < $1.count })
        #expect(indices.count > 100)
        #expect(refusal(all) == nil)
        // Older exports: every third line of it without its stream hash.
        var older = all
        for (n, index) in indices.enumerated() where n % 3 == 1 {
            var e = try #require(event(all[index]))
            e.streamHash = nil
            older[index] = try line(e)
        }
        #expect(refusal(older) == nil)

        var named = 0
        for k in [1, 2, 31, 32, 33, 63, 64, 65, indices.count - 2, indices.count - 1] {
            for base in [all, older] {
                var edited = base
                var e = try #require(event(base[indices[k]]))
                e.recordedAt += 1
                edited[indices[k]] = try line(e)
                // Named at the first line from the edit on that carries a stream hash to compare.
                guard let first = indices[k...].first(where: { event(base[$0])?.streamHash != nil }) else { continue }
                let expected = first + 1
                guard case .editedLine("f", expected, let detail)? = refusal(edited) else {
                    Issue.record("edit at \(k): \(String(describing: refusal(edited))), expected line \(expected)")
                    continue
                }
                #expect(detail.contains("does not give the stream hash it carries"))
                named += 1
                // A later line that conflicts (another event at the same version) does not
                // go first.
                if k + 3 < indices.count {
                    var other = try #require(event(base[indices[k + 3]]))
                    other.id = UUID()
                    var both = edited
                    both.insert(try line(other), at: indices[k + 3] + 1)
                    guard case .editedLine("f", expected, _)? = refusal(both) else {
                        Issue.record("edit at \(k) and a conflict after it: \(String(describing: refusal(both)))")
                        continue
                    }
                    named += 1
                }
            }
        }
        #expect(named >= 30)
        // The conflict alone is named as one.
        var other = try #require(event(all[indices[40]]))
        other.id = UUID()
        var conflicting = all
        conflicting.insert(try line(other), at: indices[40] + 1)
        guard case .conflict("f", let at, _, _)? = refusal(conflicting) else {
            Issue.record("a conflict alone: \(String(describing: refusal(conflicting)))")
            return
        }
        #expect(at == indices[40] + 2)
    }

    @Test func aBadLineNamesItsFileAndLineAndNothingIsStored() throws {
        let folder = try TemporaryFolder()
        let original = try simulated(folder, seed: 24, games: 1)
        var text = try lines(original)
        text[3] = String(text[3].dropLast(7))
        try Data(text.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: folder.path("cut.jsonl")))
        let target = try EventStore(path: folder.path("target.sqlite"))
        let file = try ExportFile(path: folder.path("cut.jsonl"))
        #expect {
            try Interchange.import(files: [file], into: target)
        } throws: { error in
            guard case InterchangeError.malformedLine(let name, 4, _)? = error as? InterchangeError else { return false }
            return name == folder.path("cut.jsonl")
        }
        #expect(try target.count().events == 0)
        #expect(throws: InterchangeError.self) { try ExportFile(path: folder.path("missing.jsonl")) }
    }
}
