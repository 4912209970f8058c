import Foundation
import GameKit
import Games
import Hummingbird
import HummingbirdTesting
import MessagesModel
import Projections
import Replay
import TestSupport
import Testing
import WebViewer

/// The debugger's tools (issue 39, item 5): "when did this change?" on a board's cell,
/// the changes between any two steps, and a search of the game list.
@Suite struct DebuggerToolsTests {
    @Test func aCellsLinkGoesToTheStepThatLastChangedItAndTheNextOne() async throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        let game = try #require(try model.summaries().first { $0.kind == "tictactoe" })
        let (conversation, session) = try model.resolve(game.id)
        let session_ = try #require(session)
        let replayer = try model.replayer(conversation)
        // Where each cell of the board changed, found by folding every step here.
        var changes: [Int: [Int]] = [:]
        try model.forEachStep(conversation, in: 1...replayer.stepCount, as: .auditor) { n, before, after, _ in
            guard let plugin = after.plugin, let now = after.games[session_] else { return }
            let cells = plugin.picture(of: now.board).cells
            let old = before.games[session_].map { plugin.picture(of: $0.board).cells } ?? cells.map { _ in "" }
            for index in cells.indices where old.indices.contains(index) && old[index] != cells[index] { changes[index, default: []].append(n) }
        }
        let (cell, steps) = try #require(changes.filter { $0.value.count >= 1 }.min { $0.key < $1.key })
        let last = replayer.stepCount
        #expect(try model.stepChanging(cell: cell, ofGame: session_, in: conversation, as: .auditor, from: last, forward: false) == steps.last)
        #expect(try model.stepChanging(cell: cell, ofGame: session_, in: conversation, as: .auditor, from: 0, forward: true) == steps.first)
        #expect(try model.stepChanging(cell: cell, ofGame: session_, in: conversation, as: .auditor, from: steps.first! - 1, forward: false) == nil)

        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            // The board's cells link to it; the link answers with that step's page.
            try await client.execute(uri: "/games/\(game.id)?step=\(last)", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(html.contains("/changed?cell=\(cell)&amp;game=\(game.id)&amp;step=\(last)"), "\(html.prefix(400))")
            }
            try await client.execute(uri: "/games/\(game.id)/changed?cell=\(cell)&game=\(game.id)&step=\(last)&as=auditor", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/games/\(game.id)?step=\(steps.last!)&as=auditor", "\(response.headers)")
            }
            try await client.execute(uri: "/games/\(game.id)/changed?cell=\(cell)&game=\(game.id)&step=0&as=auditor&dir=next", method: .get) { response in
                #expect(response.headers[.location] == "/games/\(game.id)?step=\(steps.first!)&as=auditor")
            }
            // Before its first change there is no such step: said, not a page of another step.
            try await client.execute(uri: "/games/\(game.id)/changed?cell=\(cell)&game=\(game.id)&step=1&as=auditor", method: .get) { response in
                #expect(response.status == .badRequest && String(buffer: response.body).contains("did not change up to step 1"))
            }
            for bad in ["cell=x&game=\(game.id)", "cell=1&game=nope", "cell=-1&game=\(game.id)"] {
                try await client.execute(uri: "/games/\(game.id)/changed?\(bad)&step=3", method: .get) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                }
            }
        }
    }

    @Test func changesBetweenAnyTwoStepsAndASearchOfTheList() async throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        let games = try model.summaries()
        let tictactoe = try #require(games.first { $0.kind == "tictactoe" })
        let battleship = try #require(games.first { $0.kind == "battleship" })
        let (conversation, _) = try model.resolve(tictactoe.id)
        let last = try model.replayer(conversation).stepCount
        let expected = ConversationState.diff(try model.state(conversation, at: 2, as: .auditor), try model.state(conversation, at: last, as: .auditor))
            .filter { !$0.isBookkeeping }
        #expect(expected.count > 3)
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            try await client.execute(uri: "/games/\(tictactoe.id)?step=\(last)&from=2", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(html.contains("<h2>changes from step 2</h2>") && html.contains("name=from") && html.contains("value=2"))
                let listed = html.components(separatedBy: "<ul class=diff>").dropFirst().first?.components(separatedBy: "</ul>").first ?? ""
                #expect(listed.components(separatedBy: "<li>").count - 1 == min(expected.count, 200), "\(listed.prefix(300))")
            }
            // The state as a tree: the auditor's, every participant named; none in a device's view.
            try await client.execute(uri: "/games/\(tictactoe.id)?step=\(last)", method: .get) { response in
                let html = String(buffer: response.body)
                let tree = html.components(separatedBy: "id=stateTree>").dropFirst().first?.components(separatedBy: "<h2>changes from step").first ?? ""
                #expect(tree.contains("<summary>games") && tree.contains("<summary>devices") && tree.contains("Alice"), "\(tree.prefix(500))")
                #expect(tree.range(of: #"\$[0-9A-Fa-f]{8}-"#, options: .regularExpression) == nil, "an unresolved mention")
            }
            try await client.execute(uri: "/games/\(tictactoe.id)?step=\(last)&as=B", method: .get) { response in
                #expect(!String(buffer: response.body).contains("id=stateTree"))
            }
            try await client.execute(uri: "/games/\(tictactoe.id)?step=3&from=99999", method: .get) { response in
                #expect(response.status == .badRequest)
            }
            // The search: an id's beginning, a device, a player; nothing else matches.
            for (search, found, missed) in [(String(tictactoe.id.prefix(6)), tictactoe, battleship), (String(battleship.id.prefix(6)), battleship, tictactoe)] {
                try await client.execute(uri: "/games?q=\(search)", method: .get) { response in
                    let html = String(buffer: response.body)
                    #expect(html.contains("data-game=\"\(found.id)\"") && !html.contains("data-game=\"\(missed.id)\""), "\(search)")
                }
            }
            try await client.execute(uri: "/games?q=alice", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(html.contains("data-game=\"\(tictactoe.id)\"") && html.contains("data-game=\"\(battleship.id)\""))
            }
            try await client.execute(uri: "/games?q=nobody-here", method: .get) { response in
                #expect(String(buffer: response.body).contains("No game matches."))
            }
            try await client.execute(uri: "/games?audit=nonsense", method: .get) { response in
                #expect(response.status == .badRequest && String(buffer: response.body).contains("warnings"))
            }
        }
    }
}
