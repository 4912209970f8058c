import MessagesModel
import EventStore
import Foundation
import Interchange
import Projections
import Recorder
import Replay
import Simulation
import Games
import GameKit
import TestSupport
import Testing

@Suite struct ExportImportTests {
    func export(_ store: EventStore, streams: Set<UUID>? = nil, redact: Bool = false) throws -> String {
        var text = ""
        _ = try Interchange.export(from: store, streams: streams, redact: redact) { text += $0 + "\n" }
        return text
    }

    func finalStates(_ store: EventStore) throws -> [String: ConversationState] {
        let catalog = try GameCatalog(store: store, games: .standard)
        var out: [String: ConversationState] = [:]
        for (conversation, streams) in catalog.streams {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, games: .standard)
            out[conversation.uuid.uuidString] = try replayer.state(at: replayer.stepCount)
        }
        return out
    }

    @Test func exportThenImportGivesIdenticalProjectionsAndChain() throws {
        let folder = try TemporaryFolder()
        let original = try EventStore(path: folder.path("original.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: original, clock: FixedClock(), seed: 12), games: .standard, seed: 12, noise: 0.2)
        for n in 0..<8 { try simulator.play(n.isMultiple(of: 2) ? "battleship" : "tictactoe") }
        let text = try export(original)

        let copy = try EventStore(path: folder.path("copy.sqlite"))
        let events = try Interchange.read(text, file: "export.jsonl")
        #expect(try Interchange.import(events, into: copy) == Int(try original.count().events))
        #expect(try Interchange.import(events, into: copy) == 0) // twice adds nothing
        #expect(try copy.headHash() == (try original.headHash()))
        #expect(try finalStates(copy) == (try finalStates(original)))
    }

    /// A device's log keeps tiles once its tree passes 256 leaves; a whole export of it
    /// still carries every head the device signed, as docs/FORMAT.md says, not only the last.
    @Test func aWholeExportCarriesEveryHeadOfATreeWithTiles() throws {
        let folder = try TemporaryFolder()
        let original = try EventStore(path: folder.path("original.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: original, clock: FixedClock(), seed: 21), games: .standard, seed: 21)
        for n in 0..<12 { try simulator.play(n.isMultiple(of: 2) ? "battleship" : "tictactoe") }
        let trees = try original.deviceTrees()
        #expect(trees.contains { $0.size > MerkleTree.tileSize && $0.heads.count > 1 }, "a tree with tiles and several heads")
        let text = try export(original)
        for tree in trees {
            let key = Hex.string(tree.owner.publicKey)
            let lines = text.split(separator: "\n").filter { $0.hasPrefix(#"{"head":"#) && $0.contains(key) }
            #expect(lines.count == tree.heads.count, "device \(tree.owner.device): \(lines.count) head lines, \(tree.heads.count) heads")
        }
        let copy = try EventStore(path: folder.path("copy.sqlite"))
        let summary = try Interchange.import(files: [ExportFile(name: "export.jsonl", contents: Data(text.utf8))], into: copy)
        let total = Int(try original.count().events)
        #expect(summary.unsigned == 0 && summary.stored == total)
        #expect(try copy.deviceTrees().map { $0.heads.map(\.note) } == trees.map { $0.heads.map(\.note) })
        // Exporting the copy gives the same lines.
        #expect(try export(copy) == text)
    }

    /// One phone's log holds the arrivals of the other phone's messages but not their
    /// sends: that is the replayer's order already, so the pass folds it as it reads it,
    /// and each conversation equals what the replayer rebuilds.
    @Test func onePhonesLogIsFoldedInItsOwnOrder() throws {
        let folder = try TemporaryFolder()
        let original = try EventStore(path: folder.path("original.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: original, clock: FixedClock(), seed: 19), games: .standard, seed: 19, noise: 0.2)
        for n in 0..<6 { try simulator.play(n.isMultiple(of: 2) ? "tictactoe" : "battleship") }
        var streamsOfA = Set<UUID>()
        for event in try original.events(EventQuery(types: ["recording.started"]))
        where String(decoding: event.payload, as: UTF8.self).contains(#""device":"A""#) {
            streamsOfA.insert(event.stream)
        }
        let phone = try EventStore(path: folder.path("a.sqlite"))
        try Interchange.import(try Interchange.read(try export(original, streams: streamsOfA), file: "a.jsonl"), into: phone)
        var arrivals = 0, compared = 0
        for event in try phone.events(EventQuery(types: ["transcript.arrived"])) where !event.payload.isEmpty { arrivals += 1 }
        let replayed = try finalStates(phone)
        let statistics = try FullReplay.run(store: phone, lanes: 2, chunkSize: 64, games: .standard) { done in
            #expect(done.state == replayed[done.state.conversation.uuid.uuidString])
            compared += 1
        }
        #expect(arrivals > 0 && compared == replayed.count && compared > 0)
        #expect(statistics.reorderedConversations == 0 && statistics.rereadConversations == 0)
    }

    @Test func devicesLogsMergeIntoOneDatabase() throws {
        let folder = try TemporaryFolder()
        let original = try EventStore(path: folder.path("original.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: original, clock: FixedClock(), seed: 13), games: .standard, seed: 13, noise: 0.2)
        for n in 0..<6 { try simulator.play(n.isMultiple(of: 2) ? "tictactoe" : "battleship") }
        // Split the log by device, as two phones would have recorded it.
        var byDevice: [String: Set<UUID>] = [:]
        for event in try original.events(EventQuery(types: ["recording.started"])) {
            let device = String(decoding: event.payload, as: UTF8.self).contains(#""device":"A""#) ? "A" : "B"
            byDevice[device, default: []].insert(event.stream)
        }
        let a = try Interchange.read(try export(original, streams: byDevice["A"]), file: "a.jsonl")
        let b = try Interchange.read(try export(original, streams: byDevice["B"]), file: "b.jsonl")
        // One device's log after the other: positions differ, what was shown does not.
        let merged = try EventStore(path: folder.path("merged.sqlite"))
        try Interchange.import(b, into: merged)
        try Interchange.import(a, into: merged)
        #expect(try merged.count().events == (try original.count().events))
        #expect(try merged.verifyIntegrity().isSound)
        let mergedStates = try finalStates(merged), originalStates = try finalStates(original)
        #expect(mergedStates.keys.sorted() == originalStates.keys.sorted())
        for (conversation, state) in originalStates {
            let other = try #require(mergedStates[conversation])
            #expect(other.devices == state.devices)
            #expect(other.orderedGames.map(\.status) == state.orderedGames.map(\.status))
            #expect(other.orderedGames.map(\.board) == state.orderedGames.map(\.board))
            #expect(other.orderedGames.map(\.messages) == state.orderedGames.map(\.messages))
        }
        // The one-pass catalog folds the merged log's out-of-order conversations again
        // in time order: the same games as the original's, positions aside.
        let mergedCatalog = try GameCatalog(store: merged, games: .standard), originalCatalog = try GameCatalog(store: original, games: .standard)
        #expect(mergedCatalog.reorderedConversations > 0)
        #expect(originalCatalog.reorderedConversations == 0)
        func outcome(_ g: GameSummary) -> [String] { [g.id, g.kind, g.status, g.result, String(g.events), g.startedAt, g.endedAt] }
        let mergedGames: [[String]] = mergedCatalog.games.map(outcome).sorted { $0[0] < $1[0] }
        let originalGames: [[String]] = originalCatalog.games.map(outcome).sorted { $0[0] < $1[0] }
        #expect(mergedGames == originalGames)
        // Folded again from the events the pass kept, or read again from the store once its
        // budget for them ran out: the same conversations either way.
        struct Done: Equatable {
            let state: ConversationState
            let counts: [Int64]
            let streams: Set<UUID>
        }
        func finished(keepingAtMost budget: Int) throws -> ([ConversationID: Done], FullReplay.Statistics) {
            var out: [ConversationID: Done] = [:]
            let statistics = try FullReplay.run(store: merged, keepingAtMost: budget, games: .standard) { done in
                out[done.state.conversation] = Done(state: done.state, counts: [Int64(done.events), done.span.first, done.span.last],
                                                    streams: done.streams)
            }
            return (out, statistics)
        }
        let (fromKept, keptRun) = try finished(keepingAtMost: 50_000), (reread, rereadRun) = try finished(keepingAtMost: 0)
        #expect(keptRun.reorderedConversations > 0 && keptRun.reorderedConversations == rereadRun.reorderedConversations)
        #expect(keptRun.rereadConversations == 0 && rereadRun.rereadConversations == rereadRun.reorderedConversations)
        #expect(!fromKept.isEmpty && fromKept == reread)
        // Both logs in one import interleave by time: the very same log.
        let together = try EventStore(path: folder.path("together.sqlite"))
        try Interchange.import(a + b, into: together)
        #expect(try together.headHash() == (try original.headHash()))
    }

    @Test func aGapInAStreamIsRefusedAndNothingIsImported() throws {
        let folder = try TemporaryFolder()
        let original = try EventStore(path: folder.path("original.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: original, clock: FixedClock(), seed: 14), games: .standard, seed: 14)
        try simulator.play("tictactoe")
        var events = try Interchange.read(try export(original), file: "x.jsonl")
        events.remove(at: 5)
        let target = try EventStore(path: folder.path("target.sqlite"))
        #expect(throws: InterchangeError.self) { try Interchange.import(events, into: target) }
        #expect(try target.count().events == 0)
        #expect(throws: InterchangeError.self) { try Interchange.read("{\"id\": 3}\n", file: "bad.jsonl") }
    }

    @Test func redactionReplacesIdentifiersAndNamesConsistently() throws {
        let folder = try TemporaryFolder()
        let original = try EventStore(path: folder.path("original.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: original, clock: FixedClock(), seed: 15), games: .standard, seed: 15)
        try simulator.play("battleship")
        let plain = try export(original)
        let redacted = try export(original, redact: true)
        #expect(plain.contains("Alice") && !redacted.contains("Alice") && !redacted.contains("\"Bob\""))
        #expect(redacted.contains("Player 1"))
        let states = try finalStates(original)
        for state in states.values {
            for view in state.devices.values {
                let id = try #require(view.localParticipant).uuid.uuidString
                #expect(plain.contains(id) && !redacted.contains(id))
            }
        }
        // Still a complete, importable log, with captions naming the same placeholder.
        let target = try EventStore(path: folder.path("redacted.sqlite"))
        try Interchange.import(try Interchange.read(redacted, file: "r.jsonl"), into: target)
        let captions = try finalStates(target).values.flatMap { $0.devices.values.flatMap { $0.transcript.map(\.shown) } }
        #expect(captions.contains { $0.contains("Player") })
    }
}

@Suite struct ImportErrorWordingTests {
    @Test func importErrorsSayWhatALineLacksInWordsNotSwiftTypes() {
        let id = "019B76DA-B7A0-713A-A801-BFDBCCEA01A7"
        let cases: [(String, String)] = [
            (#"{"id":"\#(id)","payload":"{}","position":1,"recordedAt":5,"streamVersion":1,"type":"input.expand","typeVersion":1}"#,
             "it lacks the field stream"),
            (#"{"id":"\#(id)","payload":"{}","position":"one","recordedAt":5,"stream":"\#(id)","streamVersion":1,"type":"input.expand","typeVersion":1}"#,
             "the field position is not a number"),
            (#"{"id":"\#(id)","payload":"{}","position":1,"recordedAt":5,"stream":"\#(id)","streamVersion":1,"type":"input.expand","typeVersion":1}"#,
             "it lacks the field body"),
            ("{not json", "it is not valid JSON"),
        ]
        var checked = 0
        for (line, words) in cases {
            do {
                _ = try Interchange.read(line, file: "x.jsonl")
                Issue.record("accepted: \(line)")
            } catch {
                let text = String(describing: error)
                #expect(text.contains("x.jsonl:1") && text.contains(words), "\(text)")
                #expect(!text.contains("CodingKeys") && !text.contains("DecodingError"), "\(text)")
                checked += 1
            }
        }
        #expect(checked == cases.count)
    }
}
