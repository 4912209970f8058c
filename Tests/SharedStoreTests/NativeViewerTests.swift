import Audit
import EventStore
import Foundation
import Games
import Hummingbird
import HummingbirdTesting
import MessagesModel
import Replay
import SharedStore
import TestSupport
import Testing
import WebViewer

/// The viewer on a shared store read as it is: pages, the list, a game's findings and
/// the whole log's audit answer from PostgreSQL with nothing copied, and agree with the
/// same log's viewer on a SQLite file.
@Suite(.serialized) struct NativeViewerTests {
    @Test func pagesAndTheAuditAnswerFromTheStoreWithNothingCopied() async throws {
        let log = try await LogReaderTests.Log.get()
        // The same store through a cache folder of its own, which must stay absent.
        let folder = try TemporaryFolder()
        let cache = folder.url.appending(path: "cache")
        let shared = try SharedStore(url: log.url, cacheFolder: cache)
        let model = try ViewerModel(location: shared.location.description, games: .standard, reader: { shared.reader() })
        let file = try ViewerModel(path: log.original.path, games: .standard)

        // The list and a game answer, its signatures checked at once.
        let page = try model.page(offset: 0, limit: 6), filePage = try file.page(offset: 0, limit: 6)
        #expect(page.games.count == 6 && page.games == filePage.games)
        let game = page.games[1]
        let conversation = ConversationID(try #require(UUID(uuidString: game.conversation)))
        let findings = try model.findings(conversation)
        #expect(findings == (try file.findings(conversation)))
        #expect(!findings.contains { $0.severity == .notCheckable && $0.check == .signature })
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            try await client.execute(uri: "/games", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.contains(shared.location.description) && html.contains(String(game.id.prefix(8))))
            }
            try await client.execute(uri: "/games/\(game.id)", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && !html.contains("not checked yet") && html.contains(String(game.id.prefix(8))), "\(html.prefix(2000))")
            }
        }

        // The background list grows page by page from the store; the whole log's audit reads it too.
        model.listInBackground()
        model.auditInBackground()
        file.auditInBackground()
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline && !(model.list().isComplete && model.auditProgress.logWideDone && file.auditProgress.logWideDone) {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(model.list().isComplete && model.auditProgress.logWideDone)
        let everyGame = try file.summaries()
        let summaries = try model.summaries()
        #expect(!everyGame.isEmpty && model.list().games == everyGame && summaries == everyGame)
        var compared = 0
        for summary in everyGame {
            let id = ConversationID(try #require(UUID(uuidString: summary.conversation)))
            #expect(try model.findings(id) == (try file.findings(id)), "\(summary.id)")
            #expect(model.verdict(of: summary)?.isWhole == true)
            compared += 1
        }
        #expect(compared == everyGame.count)
        #expect(!FileManager.default.fileExists(atPath: cache.path), "the viewer copied the store")
    }
}
