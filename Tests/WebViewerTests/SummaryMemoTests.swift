import EventStore
import Foundation
import GRDB
import Games
import MessagesModel
import Replay
import TestSupport
import Testing
@testable import WebViewer

/// The viewer folds each conversation's games once (for a page, the list pass or
/// `/api/games/ID`) and answers from that afterwards: what it answers is what a fold of
/// the conversation gives, whichever of them folded it first.
@Suite struct SummaryMemoTests {
    @Test func aGamesSummariesAreTheFoldsWhicheverPathFoldedThemFirst() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        try playMixedGames(6, into: store, seed: 21)
        let expected = try GameCatalog.page(store: store, games: .standard, offset: 0, limit: 100).games
        #expect(expected.count >= 3)
        let conversations = Set(expected.map(\.conversation)).compactMap { UUID(uuidString: $0).map(ConversationID.init) }
        var compared = 0
        // A page first, then each conversation's games; the list pass first; a game's own route first.
        for first in ["page", "list", "game"] {
            let model = try ViewerModel(path: path, games: .standard)
            switch first {
            case "page":
                #expect(try model.page(offset: 0, limit: 100).games == expected)
            case "list":
                model.listInBackground()
                try await BackgroundTests.waitUntil { model.list().isComplete }
            default:
                break
            }
            for conversation in conversations {
                let theirs = expected.filter { $0.conversation == conversation.uuid.uuidString.lowercased() }
                #expect(try model.summaries(of: conversation) == theirs, "\(first) first")
                // The steps and devices a page's fold kept are the replayer's.
                let replayer = try Replayer(store: store, conversation: conversation, streams: try GameIndex(store: store).streams(of: conversation),
                                            skippingDamaged: true, games: .standard)
                let outline = try model.outline(of: conversation)
                #expect(outline.steps == replayer.stepCount && outline.devices == replayer.devices, "\(first) first")
                #expect(outline.steps > 10 && !outline.devices.isEmpty)
                compared += 1
            }
            #expect(try model.page(offset: 0, limit: 100).games == expected, "\(first) first")
        }
        #expect(compared == 3 * conversations.count && compared > 0)
    }

    /// A game opens with the recordings its catalog rows name, the rows checked against
    /// the events read: one moved to another conversation's recording stops that game
    /// (naming the row), and every other game opens with the events a checked read gives.
    @Test func aGameOpensOnlyWhereItsCatalogRowsAgreeWithItsEvents() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        try playMixedGames(6, into: store, seed: 8)
        let conversations = try GameIndex(store: store).conversations()
        #expect(conversations.count >= 4)
        let (victim, other) = (conversations[0], conversations[1])
        let otherStream = try #require(try GameIndex(store: store).streams(of: other).first)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE catalog SET stream_id = (SELECT id FROM streams WHERE uuid = ?) WHERE kind = 1 AND key = ? AND stream_id = (SELECT min(stream_id) FROM catalog WHERE kind = 1 AND key = ?)",
                           arguments: [Data(withUnsafeBytes(of: otherStream.uuid) { Array($0) }), Data(withUnsafeBytes(of: victim.uuid.uuid) { Array($0) }),
                                       Data(withUnsafeBytes(of: victim.uuid.uuid) { Array($0) })])
        }
        let model = try ViewerModel(path: path, games: .standard)
        #expect {
            _ = try model.replayer(victim)
        } throws: { error in
            guard case ReplayError.catalogContradictsEvents = error else { return false }
            return true
        }
        let reader = try EventStore(path: path, access: .readOnly)
        var opened = 0
        for conversation in conversations.dropFirst(2) {
            let checked = try Replayer(store: reader, conversation: conversation, streams: try GameIndex(store: reader).streams(of: conversation),
                                       skippingDamaged: true, games: .standard)
            let events = try model.replayer(conversation).events
            #expect(events == checked.events && !events.isEmpty)
            opened += 1
        }
        #expect(opened >= 2)
    }
}
