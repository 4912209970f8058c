import EventStore
import Foundation
import Games
import GRDB
import Hummingbird
import HummingbirdTesting
import MessagesModel
import Replay
import TestSupport
import Testing
import WebViewer

/// `serve --follow` (issue 39, item 5): a viewer of a log another writer appends to sees
/// the new games, and tells whoever listens that the log grew.
@Suite struct FollowTests {
    /// Two games in a log a writer goes on appending to, and a viewer that may follow it.
    func growingLog(_ folder: TemporaryFolder, seed: UInt64) throws -> (path: String, writer: EventStore, model: ViewerModel) {
        let path = folder.path("growing.sqlite")
        let writer = try EventStore(path: path)
        try playMixedGames(2, into: writer, seed: seed)
        return (path, writer, try ViewerModel(path: path, games: .standard, followingAppends: true))
    }

    @Test func aFollowingViewerSeesGamesAppendedAfterItOpened() async throws {
        let folder = try TemporaryFolder()
        let (_, writer, model) = try growingLog(folder, seed: 5)
        let before = try model.page(offset: 0, limit: 50).total
        #expect(before >= 2)
        try model.follow(every: .milliseconds(50))
        #expect(model.isFollowing)
        var changes = model.changes().makeAsyncIterator()
        #expect(await changes.next() == 0)

        try playMixedGames(3, into: writer, seed: 6)
        let grown = await changes.next()
        #expect((grown ?? 0) >= 1)
        // The list and a new game's page answer from the grown log.
        let after = try model.page(offset: 0, limit: 50)
        #expect(after.total > before)
        let newest = try #require(after.games.max { $0.firstPosition < $1.firstPosition })
        let (conversation, _) = try model.resolve(newest.id)
        #expect(try model.replayer(conversation).stepCount > 0)

        // The stream a page listens to, through the routes: the game's step count.
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            try await client.execute(uri: "/games/nonesuch/follow", method: .get) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    /// A whole id is resolved once (its catalog rows checked against their events, or
    /// where the list pass found it) and kept only until the log grows: then resolved
    /// again, where the pass over the grown log finds it; a catalog row added since cannot
    /// send it elsewhere, and is checked (and refused) where the catalog is read.
    @Test func anIdResolvedBeforeTheLogGrewIsResolvedAgainAfter() async throws {
        let folder = try TemporaryFolder()
        let (path, writer, model) = try growingLog(folder, seed: 8)
        let game = try #require(try model.summaries().first)
        let first = try model.resolve(game.id)
        #expect(first.conversation.uuid.uuidString.lowercased() == game.conversation)
        #expect(try model.resolve(game.id.uppercased()) == first)
        try model.follow(every: .milliseconds(50))
        var changes = model.changes().makeAsyncIterator()
        #expect(await changes.next() == 0)

        // The log grows, and a forger adds a catalog row saying a new recording names the
        // game at an event that does not.
        try playMixedGames(1, into: writer, seed: 9)
        #expect((await changes.next() ?? 0) >= 1)
        try await BackgroundTests.waitUntil { model.list().isComplete }
        let key = try #require(UUID(uuidString: game.id)).bytes
        try await DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: """
                INSERT INTO catalog (kind, key, stream_id, position)
                SELECT 2, ?, stream_id, last_position FROM block_streams ORDER BY last_position DESC LIMIT 1
                """, arguments: [Data(key)])
        }
        #expect(try model.resolve(game.id) == first)
        // A prefix is resolved through the catalog, whose new row does not check.
        #expect(throws: ReplayError.self) { try model.resolve(String(game.id.prefix(13))) }
    }

    @Test func aViewerThatReadsItsFileAsUnchangingRefusesToFollowIt() throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        #expect(throws: ViewerFollowError.readsAsUnchanging(location: model.location)) { try model.follow() }
        #expect(!model.isFollowing)
    }

    @Test func theFollowRoutesAreNotThereWithoutFollowing() async throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        let game = try #require(try model.summaries().first?.id)
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            for uri in ["/games/\(game)/follow", "/follow"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .notFound && String(buffer: response.body).contains("serve --follow"), "\(uri)")
                }
            }
        }
    }
}
