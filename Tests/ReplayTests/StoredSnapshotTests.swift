import MessagesModel
import EventStore
import Foundation
import Projections
import Recorder
import Replay
import Simulation
import Games
import GameKit
import TestSupport
import Testing

@Suite struct StoredSnapshotTests {
    func indexed(_ folder: TemporaryFolder) throws -> (EventStore, GameCatalog) {
        let store = try EventStore(path: folder.path("log.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 61), games: .standard, seed: 61, noise: 0.2)
        for n in 0..<6 { try simulator.play(n.isMultiple(of: 2) ? "tictactoe" : "battleship") }
        let catalog = try GameCatalog(store: store, games: .standard)
        for (conversation, streams) in catalog.streams {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams,
                                        snapshotInterval: 16, useStoredSnapshots: false, games: .standard)
            try store.replaceSnapshots(conversation: conversation.uuid, with: try replayer.snapshotsToStore())
        }
        return (store, catalog)
    }

    @Test func storedSnapshotsAreUsedAndGiveTheSameStates() throws {
        let folder = try TemporaryFolder()
        let (store, catalog) = try indexed(folder)
        var used = 0
        for (conversation, streams) in catalog.streams {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, snapshotInterval: 16, useStoredSnapshots: true, games: .standard)
            used += replayer.storedSnapshotsUsed
            var folded = ConversationState(conversation: conversation, games: .standard)
            for step in 0...replayer.stepCount {
                if step > 0 { folded.apply(replayer.events[step - 1]) }
                #expect(try replayer.state(at: step) == folded)
            }
        }
        #expect(used > 10)
    }

    @Test func snapshotsOfAnotherProjectionVersionAreIgnored() throws {
        let folder = try TemporaryFolder()
        let (store, catalog) = try indexed(folder)
        // There were snapshots of the running version to ignore.
        #expect((try store.snapshotCounts()[ConversationState.projectionVersion] ?? 0) > 10)
        try tamper(folder.path("log.sqlite"), "UPDATE snapshots SET projection_version = projection_version + 1")
        for (conversation, streams) in catalog.streams {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, snapshotInterval: 16, useStoredSnapshots: true, games: .standard)
            #expect(replayer.storedSnapshotsUsed == 0)
        }
    }

    @Test func aSnapshotWhoseEventChangedIsNotTrusted() throws {
        let folder = try TemporaryFolder()
        let (store, catalog) = try indexed(folder)
        // Point every snapshot at a different event hash, as after the log was rewritten.
        try tamper(folder.path("log.sqlite"), "UPDATE snapshots SET event_hash = zeroblob(32)")
        // The longest conversation: it surely has snapshots.
        let (conversation, streams) = try #require(catalog.streams.max { (catalog.eventCounts[$0.key] ?? 0) < (catalog.eventCounts[$1.key] ?? 0) })
        #expect((catalog.eventCounts[conversation] ?? 0) > 32)
        let replayer = try Replayer(store: store, conversation: conversation, streams: streams, snapshotInterval: 16, useStoredSnapshots: true, games: .standard)
        #expect(replayer.storedSnapshotsUsed == 0)
        #expect(try replayer.state(at: replayer.stepCount) == ConversationState.folding(conversation, replayer.events, games: .standard))
    }
}

import GRDB

func tamper(_ path: String, _ sql: String) throws {
    try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: sql) }
}
