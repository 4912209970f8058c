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

/// The viewer on a shared store read as it is: pages answer from PostgreSQL before any
/// copy exists, and the signatures, which are checked on the audit's copy, are said to be
/// unchecked until it is made, then checked as on the SQLite log.
@Suite(.serialized) struct NativeViewerTests {
    final class Made: @unchecked Sendable {
        private let lock = NSLock()
        private var copies: [LocalCopy] = []
        func keep(_ copy: LocalCopy) { lock.withLock { copies.append(copy) } }
        var count: Int { lock.withLock { copies.count } }
        deinit { copies.forEach { $0.release() } }
    }

    @Test func pagesAnswerFromTheStoreAndSignaturesWaitForTheAuditsCopy() async throws {
        let log = try LogReaderTests.Log.get()
        let gate = DispatchSemaphore(value: 0), made = Made()
        let shared = log.shared
        let model = try ViewerModel(location: shared.location.description, games: .standard, reader: { shared.reader() }, auditCopy: {
            _ = gate.wait(timeout: .now() + 120)
            let copy = try SharedStore.wait { try await shared.localCopy(fresh: true) }
            made.keep(copy)
            return copy.path
        })
        let file = try ViewerModel(path: log.original.path, games: .standard)

        // The list and a game answer with nothing copied.
        let page = try model.page(offset: 0, limit: 6), filePage = try file.page(offset: 0, limit: 6)
        #expect(page.games.count == 6 && page.games == filePage.games)
        let game = page.games[1]
        let conversation = ConversationID(try #require(UUID(uuidString: game.conversation)))
        let unchecked = try model.findings(conversation)
        #expect(unchecked.contains { $0.rule == "signatures-checked" && $0.severity == .notCheckable })
        #expect(model.verdict(of: game)?.isWhole == false)
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            try await client.execute(uri: "/games", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.contains(shared.location.description) && html.contains(String(game.id.prefix(8))))
            }
            try await client.execute(uri: "/games/\(game.id)", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.contains("not checked yet"), "\(html.prefix(2000))")
            }
        }
        #expect(made.count == 0)

        // The background list grows page by page from the store; the audit makes its copy once.
        model.listInBackground()
        model.auditInBackground()
        gate.signal()
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline && !(model.list().isComplete && model.auditProgress.logWideDone) { try await Task.sleep(for: .milliseconds(50)) }
        #expect(model.list().isComplete && model.auditProgress.logWideDone)
        let everyGame = try file.summaries()
        #expect(model.list().games == everyGame)
        #expect(made.count == 1)

        // Now the signatures are checked, on the copy, as on the SQLite log.
        let checked = try model.findings(conversation)
        #expect(!checked.contains { $0.rule == "signatures-checked" })
        let onTheFile = try file.findings(conversation)
        #expect(checked == onTheFile)
        #expect(model.verdict(of: game)?.isWhole == true)
    }
}
