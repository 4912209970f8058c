import EventStore
import Foundation
import GameKit
import Games
import Hummingbird
import HummingbirdTesting
import MessagesModel
import Recorder
import Replay
import Simulation
import TestSupport
import Testing
import WebViewer
import GRDB
import Projections
import Audit

/// Every page and API route, through Hummingbird's testing client, on a real log.
@Suite struct RouteTests {
    /// A demo-like log: one Battleship game whose second device has not yet tapped
    /// the placement at step 12, and one tic-tac-toe game.
    static func log(_ folder: TemporaryFolder) throws -> String {
        let path = folder.path("viewer.sqlite")
        do {
            let simulator = Simulator(recorder: Recorder(store: try EventStore(path: path), clock: FixedClock(), seed: 2026),
                                      games: .standard, seed: 2026)
            try simulator.play("battleship") { game in
                [("A", .act(.openConversation(game))), ("A", .act(.openExtension)), ("A", .act(.touch(.button("Start game")))),
                 ("A", .act(.touch(.cell(2)))), ("A", .act(.touch(.cell(6)))), ("A", .act(.touch(.button("Finished")))),
                 ("A", .act(.tapSend)), ("B", .act(.openConversation(game))), ("B", .deliver), ("B", .tapLatestMessage),
                 ("B", .act(.touch(.cell(4)))), ("B", .act(.touch(.cell(2))))]
            }
            try simulator.play("tictactoe")
        }
        return path
    }

    func client<T: Sendable>(_ body: @escaping @Sendable (any TestClientProtocol, String) async throws -> T) async throws -> T {
        let folder = try TemporaryFolder()
        let path = try Self.log(folder)
        let model = try ViewerModel(path: path, games: .standard)
        let app = Application(router: WebViewer.router(model))
        let games = try model.summaries()
        let battleship = try #require(games.first { $0.kind == "battleship" }?.id)
        let result = try await app.test(.router) { client in try await body(client, battleship) }
        withExtendedLifetime(folder) {}
        return result
    }

    /// Issue 39, item 8: a device's view at step 0 still names its game.
    @Test func aDevicesViewAtStepZeroNamesItsGame() async throws {
        try await client { client, game in
            try await client.execute(uri: "/games/\(game)?step=0&as=B", method: .get) { response in
                #expect(response.status == .ok)
                let html = String(buffer: response.body)
                #expect(html.contains("<h1>Battleship <small>"), "\(html.prefix(1500))")
            }
        }
    }

    @Test func pagesAnswerWithHTML() async throws {
        try await client { client, game in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .seeOther && response.headers[.location] == "/games")
            }
            try await client.execute(uri: "/games", method: .get) { response in
                #expect(response.status == .ok)
                let html = String(buffer: response.body)
                #expect(html.contains("<table id=games>") && html.contains(String(game.prefix(8))) && html.contains("Tic-tac-toe"))
                // Statuses read as words.
                #expect(html.contains("<td>in progress</td>") && !html.contains(">inProgress<"), "\(html)")
            }
            // A page number past any log's end shows the last page; it never overflows.
            for page in ["184467440737095518", "9223372036854775807"] {
                try await client.execute(uri: "/games?page=\(page)", method: .get) { response in
                    #expect(response.status == .ok && String(buffer: response.body).contains("Tic-tac-toe"), "\(page)")
                }
            }
            try await client.execute(uri: "/games?kind=tictactoe", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(!html.contains(String(game.prefix(8))) && html.contains("Tic-tac-toe"))
            }
            var last = 0
            try await client.execute(uri: "/games/\(game)?as=auditor", method: .get) { response in
                #expect(response.status == .ok)
                last = Int(String(buffer: response.body).firstMatch(of: /data-steps="(\d+)"/)?.output.1 ?? "") ?? 0
            }
            try await client.execute(uri: "/games/\(game)?step=\(last)&as=auditor", method: .get) { response in
                #expect(response.status == .ok && last > 0)
                let html = String(buffer: response.body)
                #expect(html.contains("id=slider") && html.contains("data-device=\"A\"") && html.contains("data-device=\"B\""))
                #expect(html.contains("cell ship"))
            }
            // The payload panel in the style `log --json` prints: ids in lower case, no `_0` wrappers, indented.
            try await client.execute(uri: "/games/\(game)?step=3", method: .get) { response in
                let html = String(buffer: response.body)
                let panel = try #require(html.components(separatedBy: "<pre id=payload>").dropFirst().first?.components(separatedBy: "</pre>").first)
                #expect(panel.contains("\n  &quot;") || panel.contains("\n  \""), "\(panel.prefix(300))")
                #expect(!panel.contains("_0"), "\(panel.prefix(300))")
                let uuid = try NSRegularExpression(pattern: "[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}")
                #expect(uuid.firstMatch(in: panel, range: NSRange(panel.startIndex..., in: panel)) == nil, "\(panel.prefix(300))")
                #expect(panel.contains(String(game.prefix(8)).lowercased()) || panel.range(of: "[0-9a-f]{8}-", options: .regularExpression) != nil)
            }
        }
    }

    /// As B, before the placement arrived, nothing of Alice's ships or taps shows, nor
    /// how many events Alice's phone recorded: B's steps are B's own events.
    @Test func aDevicesPageShowsOnlyWhatItSaw() async throws {
        try await client { client, game in
            var total = 0
            try await client.execute(uri: "/games/\(game)?as=auditor", method: .get) { response in
                total = Int(String(buffer: response.body).firstMatch(of: /data-steps="(\d+)"/)?.output.1 ?? "") ?? 0
            }
            try await client.execute(uri: "/games/\(game)?step=2&as=B", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok)
                #expect(!html.contains("cell ship") && !html.contains("data-device=\"A\"") && !html.contains("acted"))
                let bobs = Int(html.firstMatch(of: /data-steps="(\d+)"/)?.output.1 ?? "") ?? 0
                #expect(bobs > 2 && bobs < total, "\(bobs) of \(total)")
            }
            try await client.execute(uri: "/api/games/\(game)/steps/2?as=B", method: .get) { response in
                let text = String(buffer: response.body)
                #expect(response.status == .ok && text.contains("\"perspective\":\"device B\"") && !text.contains("\"ship\""))
            }
        }
    }

    @Test func theAPIGivesTheCommandLinesJSON() async throws {
        try await client { client, game in
            try await client.execute(uri: "/api/games", method: .get) { response in
                #expect(response.headers[.contentType] == "application/json")
                let list = try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [[String: Any]])
                #expect(list.count == 2 && list.contains { $0["id"] as? String == game })
            }
            try await client.execute(uri: "/api/games/\(game)", method: .get) { response in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any])
                #expect((object["steps"] as? Int ?? 0) > 12 && object["devices"] as? [String] == ["A", "B"])
            }
            try await client.execute(uri: "/api/verify/\(game)", method: .get) { response in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any])
                #expect(object["ok"] as? Bool == true)
            }
        }
    }

    @Test func unknownIdsBadParametersAndWritesAreRefusedAsJSON() async throws {
        try await client { client, game in
            for (uri, status) in [("/api/games/ffffffff", HTTPResponse.Status.notFound), ("/api/games/\(game)/steps/9999", .badRequest),
                                  ("/api/games/\(game)/steps/12?as=Z", .badRequest), ("/api/nothing", .notFound),
                                  ("/api/games/\(game)/steps/minus", .badRequest)] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == status, "\(uri)")
                    let object = try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any]
                    #expect(object?["error"] is String, "\(uri)")
                }
            }
            try await client.execute(uri: "/games/ffffffff", method: .get) { response in
                #expect(response.status == .notFound && String(buffer: response.body).contains("id=error"))
            }
            // Read-only on every path, routes or none: 405 with what is allowed.
            var refused = 0
            for method in [HTTPRequest.Method.post, .put, .patch, .delete] {
                for uri in ["/api/games", "/games", "/games/ffffffff", "/no/such/page", "/api/nothing", "/assets/viewer.css"] {
                    try await client.execute(uri: uri, method: method) { response in
                        #expect(response.status == .methodNotAllowed && response.headers[.allow] == "GET, HEAD", "\(method) \(uri)")
                        refused += 1
                    }
                }
            }
            #expect(refused == 24)
        }
    }
}

/// Names from a log are text on every page, whatever they hold; the headers forbid
/// inline script; a request addressed to another host gets nothing.
@Suite struct HostileNameTests {
    @Test func markupInNamesIsShownAsTextOnEveryPage() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("hostile.sqlite")
        try HostileLog.make(from: try EventStore(path: try RouteTests.log(folder), access: .readOnly), to: path)
        let model = try ViewerModel(path: path, games: .standard)
        let games = try model.summaries()
        #expect(games.count >= 2)
        let app = Application(router: WebViewer.router(model))
        let uris = ["/games"] + games.flatMap { game in
            ["/games/\(game.id)", "/games/\(game.id)?step=5", "/games/\(game.id)?step=12&as=\(HostileLog.device.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"]
        }
        let pages = try await app.test(.router) { client in
            var seen = 0
            for uri in uris {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok, "\(uri)")
                    let html = String(buffer: response.body)
                    #expect(!html.contains("<img src=x"), "\(uri)")
                    #expect(!html.contains("<script>alert"), "\(uri)")
                    #expect(!html.contains("<script>") || html.components(separatedBy: "<script").count == 2, "\(uri)")
                    #expect(response.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
                    if html.contains("&lt;img src=x onerror=alert(document.domain)&gt;") || html.contains("&lt;script&gt;alert(1)&lt;/script&gt;") { seen += 1 }
                }
            }
            return seen
        }
        // The names are there, as text.
        #expect(pages >= uris.count - 1)
        withExtendedLifetime(folder) {}
    }

    @Test func onlyRequestsAddressedToTheViewerAreAnswered() async throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        // The test client addresses every request to "localhost".
        for (hosts, status) in [(Set(["127.0.0.1", "localhost", "[::1]"]), 200), (["127.0.0.1"], 421), (["evil.example"], 421)] {
            let app = Application(router: WebViewer.router(model, hosts: hosts))
            try await app.test(.router) { client in
                try await client.execute(uri: "/api/games", method: .get) { response in
                    #expect(Int(response.status.code) == status, "\(hosts)")
                    #expect(response.headers[.contentSecurityPolicy] != nil)
                }
            }
        }
        let names = WebViewer.hostNames(listeningOn: "127.0.0.1")
        for (host, accepted) in [("127.0.0.1:8080", true), ("localhost:8080", true), ("[::1]:8080", true), ("LOCALHOST:8080", true),
                                 ("evil.example:8080", false), ("127.0.0.1:9999", false), ("127.0.0.1.evil.example", false),
                                 ("", false), ("127.0.0.1:80x", false), ("[::1", false)] {
            #expect(WebViewer.accepts(host: host, names: names, port: 8080) == accepted, "\(host)")
        }
        withExtendedLifetime(folder) {}
    }
}

/// The viewer's verdict on a game is `verify GAME`'s, signatures included.
@Suite struct ViewerVerdictTests {
    @Test func anEditedGameWithItsSignaturesInPlaceIsAnErrorOnItsPageAndInTheAPI() async throws {
        let folder = try TemporaryFolder()
        let path = try RouteTests.log(folder)
        let store = try EventStore(path: path, access: .readOnly)
        let insert = try #require(try store.events(EventQuery(types: ["action.insert"])).last)
        try LogForger(path: path).rewrite(position: insert.position) {
            $0.replacingOccurrences(of: "\"isPending\":false", with: "\"isPending\":true")
        }
        let model = try ViewerModel(path: path, games: .standard)
        let game = try #require(try model.summaries().first { $0.kind == "tictactoe" }?.id)
        let (conversation, _) = try model.resolve(game)
        let finding = try #require(try model.findings(conversation).first { $0.rule == "changedEvent" })
        let position = try #require(finding.position)
        let owner = try #require(try store.event(at: position, verify: false)?.stream)
        let ownerDevice = try #require(try model.replayer(conversation).events.first { $0.stream == owner }?.device?.name)
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            try await client.execute(uri: "/api/verify/\(game)", method: .get) { response in
                let body = String(buffer: response.body)
                #expect(body.contains("\"ok\":false") && body.contains("changedEvent"), "\(body.prefix(400))")
            }
            try await client.execute(uri: "/games/\(game)", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(html.contains("class=bad>verify:"))
                // The findings as a list, each with its step.
                #expect(html.contains("id=findings") && html.contains("class=\"finding error") && html.contains("changedEvent"), "\(html.suffix(2000))")
            }
            // As each device: the finding is listed only where its event is that device's own.
            var views = 0
            for device in ["A", "B"] {
                try await client.execute(uri: "/games/\(game)?as=\(device)", method: .get) { response in
                    let html = String(buffer: response.body)
                    #expect(html.contains("changedEvent") == (device == ownerDevice), "\(device)")
                }
                views += 1
            }
            #expect(views == 2)
        }
    }
}

/// One damaged event costs the answers that need it, not the whole viewer.
@Suite struct DamagedLogTests {
    @Test func oneDamagedEventLeavesTheOtherGamesListedAndItsOwnPageSaysWhy() async throws {
        let folder = try TemporaryFolder()
        let path = try RouteTests.log(folder)
        let model0 = try ViewerModel(path: path, games: .standard)
        let games = try model0.summaries()
        let tictactoe = try #require(games.first { $0.kind == "tictactoe" })
        let battleship = try #require(games.first { $0.kind == "battleship" })
        // An event of the tic-tac-toe game whose payload is no longer JSON.
        try BlockSurgery.garble(path, position: tictactoe.firstPosition + 3)
        let model = try ViewerModel(path: path, games: .standard)
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            try await client.execute(uri: "/games", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.contains(String(battleship.id.prefix(8))) && html.contains("id=damaged"), "\(html.prefix(300))")
            }
            try await client.execute(uri: "/api/games", method: .get) { response in
                #expect(response.status == .ok && String(buffer: response.body).contains(battleship.id))
            }
            try await client.execute(uri: "/games/\(battleship.id)", method: .get) { response in
                #expect(response.status == .ok)
            }
            // The damaged game's own page still shows, with the damage named: where it is,
            // and whether the step shown comes after it.
            try await client.execute(uri: "/games/\(tictactoe.id)?step=\(try model.replayer(try model.resolve(tictactoe.id).conversation).stepCount)",
                                     method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.contains("id=damaged") && html.contains("gamelog verify"), "\(response.status)")
                #expect(html.contains("this step comes after it") && html.contains("id=stepList"))
            }
            try await client.execute(uri: "/games/\(tictactoe.id)?step=1", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.contains("this step comes before it"), "\(response.status)")
            }
        }
    }
}
