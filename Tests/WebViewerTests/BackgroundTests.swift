import Audit
import EventStore
import Foundation
import GRDB
import Hummingbird
import MessagesModel
import Projections
import HummingbirdTesting
import Replay
import GameKit
import Games
import TestSupport
import Testing
@testable import WebViewer

/// The viewer answers at once while it reads the log and audits it in the background,
/// and what it shows fills in as those passes go.
@Suite struct BackgroundTests {
    /// Waits (at most 60 s) until `done` holds.
    static func waitUntil(_ done: () -> Bool) async throws {
        for _ in 0..<600 where !done() { try await Task.sleep(for: .milliseconds(100)) }
        #expect(done(), "the background pass did not finish within 60 s")
    }

    @Test func filtersAnswerBeforeTheListIsReadAndExactlyAfter() async throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            // Nothing read yet: the filter answers, and says its list is partial.
            try await client.execute(uri: "/games?kind=tictactoe", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.contains("id=partial") && html.contains("Still reading the log"), "\(html.prefix(400))")
            }
            // The unfiltered list pages through the catalog meanwhile: both games.
            try await client.execute(uri: "/games", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.components(separatedBy: "<tr data-game=").count - 1 == 2, "\(html.prefix(400))")
            }
            model.listInBackground()
            try await Self.waitUntil { model.list().isComplete }
            try await client.execute(uri: "/games?kind=tictactoe", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && !html.contains("id=partial"))
                #expect(html.components(separatedBy: "<tr data-game=").count - 1 == 1, "\(html)")
                #expect(html.contains("Tic-tac-toe"))
            }
        }
    }

    /// The background list and audit fold below the pages' priority (the threads that
    /// answer requests keep theirs): on a fresh server of a big log they took most of the
    /// cores from the pages they were meant to give way to.
    @Test func backgroundPassesFoldBelowThePagesPriority() async throws {
        #if canImport(Glibc)
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        try recordGames("battleship", count: 3, at: path, seed: 5)
        let plugin = PriorityNotingBattleship()
        let model = try ViewerModel(path: path, games: GameRegistry([plugin]))
        _ = plugin.notes.take()
        model.listInBackground()
        try await Self.waitUntil { model.list().isComplete }
        let listed = plugin.notes.take()
        #expect(listed.lowered > 0 && listed.normal == 0, "\(listed)")
        // A small log's list pass folds on its own thread: as low as a thread goes, since
        // no request waits for it.
        #expect(listed.lowest > 0, "\(listed)")
        model.auditInBackground()
        try await Self.waitUntil { model.auditProgress.logWideDone }
        let audited = plugin.notes.take()
        #expect(audited.lowered > 0 && audited.normal == 0, "\(audited)")

        // A page folds at the priority of the threads that answer requests.
        let game = try #require(model.list().games.first)
        let conversation = try model.resolve(game.id).conversation
        let last = try model.outline(of: conversation).steps
        _ = try await model.work { try model.state(conversation, at: last, as: .auditor) }
        let page = plugin.notes.take()
        #expect(page.normal > 0 && page.lowered == 0, "\(page)")
        #endif
    }

    /// Conversations that hold no game (the sticker extension's) are reached through
    /// their kind's filter, and open step by step like a game.
    @Test func conversationsWithNoGameAreListedUnderTheirKind() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("stickers.sqlite")
        try recordGames("stickers", count: 3, at: path, seed: 4)
        let model = try ViewerModel(path: path, games: .standard)
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            model.listInBackground()
            try await Self.waitUntil { model.list().isComplete }
            var links: [String] = []
            try await client.execute(uri: "/games?kind=stickers", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.contains("Conversations with no game"), "\(html.prefix(600))")
                links = html.components(separatedBy: "<tr data-conversation=\"").dropFirst().map { String($0.prefix(36)) }
            }
            #expect(links.count == 3)
            for id in links {
                try await client.execute(uri: "/games/\(id)", method: .get) { response in
                    let html = String(buffer: response.body)
                    #expect(response.status == .ok && html.contains("class=phones"), "\(id): \(html.prefix(300))")
                }
            }
            // Another kind's filter does not list them.
            try await client.execute(uri: "/games?kind=tictactoe", method: .get) { response in
                #expect(!String(buffer: response.body).contains("Conversations with no game"))
            }
        }
    }

    @Test func verdictsFillInGameByGameAndTheAuditFilterSelectsThem() async throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        let games = try model.summaries()
        #expect(games.count == 2)
        #expect(games.allSatisfy { model.verdict(of: $0) == nil })
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            try await client.execute(uri: "/games", method: .get) { response in
                #expect(String(buffer: response.body).contains("checking…"))
            }
            try await client.execute(uri: "/games?audit=maybe", method: .get) { response in
                #expect(response.status == .badRequest && String(buffer: response.body).contains("maybe") && String(buffer: response.body).contains("is not one of ok, errors, warnings, checking"))
            }
            try await client.execute(uri: "/games?audit=checking", method: .get) { response in
                #expect(String(buffer: response.body).components(separatedBy: "<tr data-game=").count - 1 == 2)
            }
            model.auditInBackground()
            try await Self.waitUntil { model.auditProgress.logWideDone }
            #expect(model.auditProgress.checked == model.auditProgress.of && model.auditProgress.checked > 0)
            for game in games {
                let verdict = model.verdict(of: game)
                #expect(verdict?.errors == 0 && verdict?.isWhole == true && verdict?.damaged == [], "\(game.id)")
            }
            try await client.execute(uri: "/games", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(!html.contains("checking…") && html.contains("the whole log's chain, signatures and catalog: no errors"), "\(html.prefix(600))")
            }
            try await client.execute(uri: "/games?audit=ok", method: .get) { response in
                #expect(String(buffer: response.body).components(separatedBy: "<tr data-game=").count - 1 == 2)
            }
            try await client.execute(uri: "/games?audit=errors", method: .get) { response in
                #expect(String(buffer: response.body).contains("No game matches."))
            }
        }
    }

    /// A game page's findings give its game a verdict at once, and leave the others'
    /// (kept) verdicts as they were: verdicts are kept per conversation.
    @Test func aGamesFindingsGiveItsVerdictAndNoOtherGames() throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        let games = try model.summaries()
        #expect(games.count == 2 && games[0].conversation != games[1].conversation)
        #expect(games.allSatisfy { model.verdict(of: $0) == nil })
        let conversation = ConversationID(try #require(UUID(uuidString: games[0].conversation)))
        #expect(try model.findings(conversation).filter { $0.severity == .error }.isEmpty)
        let verdict = try #require(model.verdict(of: games[0]))
        #expect(verdict.errors == 0 && verdict.damaged.isEmpty)
        #expect(model.verdict(of: games[1]) == nil)
    }

    /// Once the list pass has folded the whole log, the ids it lists resolve where the
    /// catalog resolves them, and their games open with the recordings the catalog names
    /// (without reading the catalog's events again).
    @Test func idsTheListPassFoundResolveAsTheCatalogResolvesThem() async throws {
        let folder = try TemporaryFolder()
        let path = try RouteTests.log(folder)
        let model = try ViewerModel(path: path, games: .standard)
        model.listInBackground()
        try await Self.waitUntil { model.list().isComplete }
        let games = model.list().games
        let index = try GameIndex(store: try EventStore(path: path, access: .readOnly))
        var compared = 0
        for id in games.map(\.id) + games.map(\.conversation) + games.map({ $0.id.uppercased() }) {
            let fromModel = try model.resolve(id), fromCatalog = try index.resolve(id)
            #expect(fromModel.conversation == fromCatalog.conversation && fromModel.game == fromCatalog.game, "\(id)")
            compared += 1
        }
        #expect(compared == 6)
        #expect(throws: (any Error).self) { try model.resolve(UUID().uuidString) }
        // ... and a game opens with the recordings the catalog names.
        for game in games {
            let conversation = ConversationID(try #require(UUID(uuidString: game.conversation)))
            let opened = try model.replayer(conversation)
            let fromCatalog = try Replayer(store: try EventStore(path: path, access: .readOnly), conversation: conversation,
                                           streams: try index.streams(of: conversation), games: .standard)
            #expect(opened.stepCount > 0 && opened.events.map(\.position) == fromCatalog.events.map(\.position))
        }
    }

    /// The filters' table of every listed game's verdict follows a conversation's new
    /// findings (kept between requests, brought up to date game by game).
    @Test func theListsVerdictsFollowAConversationsFindings() throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        let games = try model.summaries()
        #expect(games.count == 2)
        let before = model.listWithVerdicts()
        #expect(before.listing.games == games && before.verdicts.count == 2 && before.verdicts.allSatisfy { $0 == nil })
        let conversation = ConversationID(try #require(UUID(uuidString: games[1].conversation)))
        _ = try model.findings(conversation)
        let after = model.listWithVerdicts()
        #expect(after.verdicts[1] != nil && after.verdicts[0] == nil)
        #expect(after.verdicts == games.map { model.verdict(of: $0) })
        model.auditInBackground()
        var waited = 0
        while !model.auditProgress.logWideDone, waited < 600 {
            Thread.sleep(forTimeInterval: 0.05)
            waited += 1
        }
        let audited = model.listWithVerdicts()
        #expect(audited.verdicts.allSatisfy { $0?.isWhole == true && $0?.errors == 0 })
        #expect(audited.verdicts == games.map { model.verdict(of: $0) })
    }

    /// While the background audit checks the whole log's signatures, a game page names
    /// its conversation's as not checked yet rather than checking them itself; asked for
    /// outright (the verify API), they are checked; nothing pending is kept.
    @Test func aGamePageLeavesItsSignaturesToTheWholeLogsCheckUnderWay() async throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        let game = try #require(try model.summaries().first)
        let conversation = ConversationID(try #require(UUID(uuidString: game.conversation)))
        model.auditRunning = true
        let pending = try model.findings(conversation, waitingForTheWholeLog: true)
        let unchecked = pending.filter { $0.severity == .notCheckable && $0.check == .signature }
        #expect(unchecked.count == 1 && unchecked[0].found.contains("background audit"))
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            try await client.execute(uri: "/games/\(game.id)", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(response.status == .ok && html.contains("id=unchecked") && html.contains("background audit"), "\(html.prefix(400))")
            }
        }
        let outright = try model.findings(conversation)
        #expect(!outright.contains { $0.severity == .notCheckable && $0.check == .signature })
        model.auditRunning = false
        #expect(try model.findings(conversation, waitingForTheWholeLog: true) == outright)
    }

    @Test func aDamagedGamesVerdictNamesTheDamageAndTheOthersStayOK() async throws {
        let folder = try TemporaryFolder()
        let path = try RouteTests.log(folder)
        let games = try ViewerModel(path: path, games: .standard).summaries()
        let tictactoe = try #require(games.first { $0.kind == "tictactoe" })
        let battleship = try #require(games.first { $0.kind == "battleship" })
        let damaged = tictactoe.firstPosition + 3
        try BlockSurgery.garble(path, position: damaged)
        let model = try ViewerModel(path: path, games: .standard)
        model.listInBackground()
        model.auditInBackground()
        try await Self.waitUntil { model.auditProgress.logWideDone && model.list().isComplete }
        let verdict = try #require(model.verdict(of: tictactoe))
        #expect(verdict.damaged == [damaged] && verdict.errors >= 1, "\(verdict)")
        #expect(model.verdict(of: battleship)?.errors == 0 && model.verdict(of: battleship)?.damaged == [])
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            try await client.execute(uri: "/games?audit=errors", method: .get) { response in
                let html = String(buffer: response.body)
                #expect(html.contains("damaged at position \(damaged)") && html.contains(String(tictactoe.id.prefix(8))), "\(html.prefix(800))")
                #expect(!html.contains(String(battleship.id.prefix(8))))
            }
        }
    }

    /// The whole game list is kept with the audit: the next start on the same file shows
    /// it at once, the same list, without reading the log again; a changed file reads it.
    @Test func theGameListIsKeptWithTheAuditForTheSameFile() async throws {
        let folder = try TemporaryFolder()
        let path = try RouteTests.log(folder)
        let kept = URL(fileURLWithPath: folder.path("kept"))
        func started() async throws -> ViewerModel {
            let model = try ViewerModel(path: path, games: .standard, keepingResultsIn: kept, build: "test build")
            model.listInBackground()
            model.auditInBackground()
            try await Self.waitUntil { model.auditProgress.logWideDone && model.list().isComplete }
            return model
        }
        let first = try await started()
        #expect(!first.listWasKept && first.list().games.count == 2)
        // Kept once both passes ended, whichever ended first.
        try await Self.waitUntil {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: kept.path)) ?? []
            return files.count == 1 && (try? Data(contentsOf: kept.appending(path: files[0])))
                .flatMap { try? JSONDecoder().decode(KeptResults.Results.self, from: $0) }?.list != nil
        }
        let second = try await started()
        #expect(second.listWasKept && second.auditWasKept)
        #expect(second.list().games == first.list().games)
        #expect(second.list().games.allSatisfy { second.verdict(of: $0) == first.verdict(of: $0) })

        // One event's time changed in place: the list is read from the file again.
        let game = try #require(first.list().games.first)
        try BlockSurgery.alter(path, position: game.firstPosition + 2) { $0.recordedAt += 1 }
        let third = try await started()
        #expect(!third.listWasKept && third.list().games.map(\.id) == first.list().games.map(\.id))
    }

    /// A finished audit is kept for the file's exact content: the next start on the same
    /// file shows every verdict at once; a changed byte, or another build, audits again.
    @Test func aFinishedAuditIsKeptForTheSameFileAndNotForAChangedOne() async throws {
        let folder = try TemporaryFolder()
        let path = try RouteTests.log(folder)
        let kept = URL(fileURLWithPath: folder.path("kept"))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        func audited(build: String = "test build") async throws -> ViewerModel {
            let model = try ViewerModel(path: path, games: .standard, keepingResultsIn: kept, build: build)
            model.auditInBackground()
            try await Self.waitUntil { model.auditProgress.logWideDone }
            return model
        }
        let first = try await audited()
        #expect(!first.auditWasKept)
        let files = try FileManager.default.contentsOfDirectory(atPath: kept.path)
        #expect(files.count == 1 && files[0].hasPrefix("audit-"), "\(files)")
        // Nothing written to the log.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let second = try await audited()
        #expect(second.auditWasKept)
        let games = try second.summaries()
        #expect(games.count == 2)
        for game in games { #expect(second.verdict(of: game) == first.verdict(of: game) && second.verdict(of: game) != nil) }
        #expect(second.logWideFindings == first.logWideFindings)
        #expect(try !(await audited(build: "another build")).auditWasKept)

        // One event's content changed in place: its hash no longer matches, and the kept
        // "no errors" must not be shown for it.
        let game = try #require(games.first { $0.kind == "tictactoe" })
        try BlockSurgery.alter(path, position: game.firstPosition + 2) { $0.recordedAt += 1 }
        let changed = try await audited()
        #expect(!changed.auditWasKept)
        #expect((changed.verdict(of: game)?.errors ?? 0) > 0 || (changed.logWideFindings ?? []).contains { $0.severity == .error },
                "\(String(describing: changed.verdict(of: game)))")
    }

    /// Requests for different games overlap: many at once all answer, each with its own game.
    @Test func manyRequestsAtOnceEachGetTheirOwnAnswer() async throws {
        let folder = try TemporaryFolder()
        let model = try ViewerModel(path: try RouteTests.log(folder), games: .standard)
        let games = try model.summaries()
        var steps: [String: Int] = [:]
        for game in games {
            let (conversation, _) = try model.resolve(game.id)
            steps[game.id] = try model.replayer(conversation).stepCount
        }
        #expect(Set(steps.values).count == 2, "the two games' conversations differ in length: \(steps)")
        let expected = steps
        let app = Application(router: WebViewer.router(model))
        try await app.test(.router) { client in
            let answers = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for round in 0..<40 {
                    let game = games[round % games.count]
                    group.addTask {
                        try await client.execute(uri: "/api/games/\(game.id)/steps/\(round % 5)", method: .get) { response in
                            let object = try? JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any]
                            return (game.id, response.status == .ok && object?["stepCount"] as? Int == expected[game.id]
                                        && object?["step"] as? Int == round % 5)
                        }
                    }
                }
                return try await group.reduce(into: [(String, Bool)]()) { $0.append($1) }
            }
            #expect(answers.count == 40 && answers.allSatisfy(\.1), "\(answers.filter { !$0.1 })")
        }
    }
}

/// Every page is built from `HTML`: the escape works on UTF-8 bytes, so it must leave
/// every other scalar as it is, whatever its length in bytes.
@Suite struct HTMLEscapeTests {
    @Test func escapesTheFiveAndKeepsEveryOtherScalar() {
        #expect(HTML.escape(#"<a href="x">Tom & Jerry's</a>"#) == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;")
        #expect(HTML.escape("é😀\u{0301}<ü>") == "é😀\u{0301}&lt;ü&gt;")
        #expect(HTML.escape("plain") == "plain")
        #expect(HTML.escape("") == "")
        let html: HTML = "<b>\("<script>")</b>"
        #expect(html.description == "<b>&lt;script&gt;</b>")
    }
}
