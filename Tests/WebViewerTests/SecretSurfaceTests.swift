import BattleshipGame
import EventStore
import Foundation
import GameKit
import Games
import Hummingbird
import HummingbirdTesting
import MessagesModel
import Projections
import Recorder
import Replay
import Simulation
import TestSupport
import Testing
import WebViewer

/// No page or API answer shows the guesser any ship it has not hit, at any step of random
/// Battleship games: the game's page as B (board, phones, payload panel, diff) and the
/// step API as B.
@Suite struct SecretSurfaceTests {
    @Test func theGuessersPagesNeverShowAnUnhitShipBeforeTheEnd() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("secrets.sqlite")
        try recordGames("battleship", count: 3, at: path, seed: 77, noise: 0.1)
        let model = try ViewerModel(path: path, games: .standard)
        let app = Application(router: WebViewer.router(model))
        let store = try EventStore(path: path, access: .readOnly)
        let index = try GameIndex(store: store)
        // What to look for at each step of each game: the URL items of the ships B has not hit.
        var plan: [(game: String, step: Int, secrets: [String])] = []
        for summary in try model.summaries() where summary.kind == "battleship" {
            let index = try index.resolve(summary.id)
            let replayer = try Replayer(store: store, conversation: index.conversation, streams: try GameIndex(store: store).streams(of: index.conversation),
                                        games: .standard)
            // B's view steps through B's own events: step n is B's n-th event.
            let bob = replayer.seen(by: .device("B"))
            for step in 1...bob.stepCount {
                let truth = try replayer.state(at: bob.step(step, in: replayer))
                let bob = truth.devices["B"]?.ownerName
                let secrets = truth.orderedGames.flatMap { game in truth.plugin?.secrets(of: game.board, hiddenFrom: bob) ?? [] }
                if !secrets.isEmpty { plan.append((summary.id, step, secrets)) }
            }
        }
        #expect(plan.count > 20, "\(plan.count)")
        let steps = plan
        let checks = try await app.test(.router) { client in
            var checked = 0
            for (game, step, secrets) in steps {
                for uri in ["/games/\(game)?step=\(step)&as=B", "/api/games/\(game)/steps/\(step)?as=B"] {
                    try await client.execute(uri: uri, method: .get) { response in
                        #expect(response.status == .ok, "\(uri)")
                        let body = String(buffer: response.body)
                        for secret in secrets { #expect(!body.contains(secret), "\(uri) shows \(secret)") }
                        checked += 1
                    }
                }
            }
            return checked
        }
        #expect(checks == plan.count * 2)
        // The auditor's page of the same steps does show the ships: the check looks where they would be.
        let auditorShows = try await app.test(.router) { client in
            var found = 0
            for (game, step, secrets) in steps.prefix(10) {
                try await client.execute(uri: "/games/\(game)?step=\(step)&as=auditor", method: .get) { response in
                    let body = String(buffer: response.body)
                    if secrets.contains(where: body.contains) { found += 1 }
                }
            }
            return found
        }
        #expect(auditorShows > 0)
    }
}

/// The step list beside the board: one row per step of the view, moves and findings
/// marked, the current step's row marked; a device's list holds its own steps only.
@Suite struct StepListTests {
    @Test func theStepListHasARowPerStepWithMovesMarked() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("steps.sqlite")
        try recordGames("tictactoe", count: 1, at: path, seed: 8, noise: 0)
        let model = try ViewerModel(path: path, games: .standard)
        let app = Application(router: WebViewer.router(model))
        let game = try #require(try model.summaries().first?.id)
        let (conversation, _) = try model.resolve(game)
        let all = try model.view(conversation, as: .auditor).stepCount
        let bobs = try model.view(conversation, as: .device("B")).stepCount
        try await app.test(.router) { client in
            // The whole conversation: a row per step.
            try await client.execute(uri: "/games/\(game)?step=5&whole=1", method: .get) { response in
                let html = String(buffer: response.body)
                let rows = html.matches(of: #/<li class="step /#).count
                #expect(rows == all && all > 20, "\(rows) rows, \(all) steps")
                let moves = html.matches(of: #/<li class="step [^"]*\bmove\b/#).count
                #expect(moves >= 5 && moves <= 9, "\(moves) moves") // a tic-tac-toe game sends 5 to 9 moves
                #expect(html.contains(#"current" data-step=5 id=currentStep>"#), "the current row")
                #expect(html.contains("id=onlyMoves") && html.contains("id=hideSame") && html.contains("id=help"))
            }
            // The game's page (issue 39, item 4): it opens at the game's first step and lists
            // the game's own steps, every move among them, and links to the rest.
            let own = try model.steps(ofGame: try #require(model.resolve(game).game), in: conversation, as: .auditor)
            try await client.execute(uri: "/games/\(game)", method: .get) { response in
                let html = String(buffer: response.body)
                let rows = html.matches(of: #/<li class="step /#).count, moves = html.matches(of: #/<li class="step [^"]*\bmove\b/#).count
                #expect(own.count > 5 && rows == own.count && rows < all, "\(rows) rows, \(own.count) of the game's, \(all) in all")
                #expect(moves >= 5 && html.contains("data-step=\"\(own[0])\"") && html.contains("show the whole conversation"))
            }
            // Once the game has a board: its legend, and the cells the last step changed marked.
            try await client.execute(uri: "/games/\(game)?step=\(own.last!)", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(html.contains("class=legend") && html.contains("changed by this step"))
            }
            try await client.execute(uri: "/games/\(game)?step=3&as=B&whole=1", method: .get) { response in
                let html = String(buffer: response.body)
                let rows = html.matches(of: #/<li class="step /#).count
                #expect(rows == bobs && bobs < all, "\(rows) rows as B, \(bobs) of B's steps, \(all) in all")
                #expect(!html.contains(" · A · "), "a row of A's in B's list")
            }
        }
    }
}

/// Every link the page makes opens: ids percent-encoded in links are decoded by the routes.
@Suite struct LinkTests {
    @Test func aPercentEncodedGameIdOpensTheGame() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("links.sqlite")
        try recordGames("tictactoe", count: 1, at: path, seed: 9)
        let model = try ViewerModel(path: path, games: .standard)
        let app = Application(router: WebViewer.router(model))
        let game = try #require(try model.summaries().first?.id)
        try await app.test(.router) { client in
            var links: [String] = []
            try await client.execute(uri: "/games/\(game)?step=3", method: .get) { response in
                let html = String(buffer: response.body)
                links = html.matches(of: /href="(\/games\/[^"]+)"/).map { String($0.output.1).replacingOccurrences(of: "&amp;", with: "&") }
            }
            #expect(links.count > 10)
            for link in links.prefix(40) {
                try await client.execute(uri: link, method: .get) { response in
                    #expect(response.status == .ok, "\(link)")
                }
            }
            // HEAD answers as GET, without a body; an unknown page says what the pages are.
            for uri in ["/games", "/games/\(game)?step=2", "/api/games"] {
                try await client.execute(uri: uri, method: .head) { response in
                    #expect(response.status == .ok && response.body.readableBytes == 0, "HEAD \(uri)")
                }
            }
            // The game list's API is paged; a bad page number is a 400 naming it.
            try await client.execute(uri: "/api/games?per_page=1&page=1", method: .get) { response in
                let list = try? JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [[String: Any]]
                #expect(response.status == .ok && list?.count == 1)
            }
            try await client.execute(uri: "/api/games?page=0", method: .get) { response in
                #expect(response.status == .badRequest && String(buffer: response.body).contains("page '0'"))
            }
            try await client.execute(uri: "/no/such/page", method: .get) { response in
                #expect(response.status == .notFound && String(buffer: response.body).contains("the pages are /games"))
            }
            let encoded = game.replacingOccurrences(of: "-", with: "%2D")
            try await client.execute(uri: "/games/\(encoded)?step=2", method: .get) { response in
                #expect(response.status == .ok)
            }
        }
    }
}
