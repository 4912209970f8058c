import StoredEvents
import Audit
import BattleshipGame
import EventStore
import Foundation
import GameKit
import Games
import MessagesHost
import MessagesModel
import Projections
import RecordedEvents
import Recorder
import Replay
import Rerun
import Simulation
import TestSupport
import Testing

/// A Battleship whose guesser screen counts a re-tap as another shot: the kind of
/// change a developer makes, to be found by `rerun` at its first effect.
final class RetapCountingBattleship: MessagesAppExtension {
    let inner = BattleshipExtension()
    var kind: String { inner.kind }
    private var tapped: Set<Int> = []
    private var retapHits = 0, retapMisses = 0

    func attach(to host: any ExtensionHost) { inner.attach(to: host) }
    func willBecomeActive(with c: Conversation) { tapped = []; retapHits = 0; retapMisses = 0; inner.willBecomeActive(with: c) }
    func didBecomeActive(with c: Conversation) { inner.didBecomeActive(with: c) }
    func willResignActive(with c: Conversation) { inner.willResignActive(with: c) }
    func didResignActive(with c: Conversation) { inner.didResignActive(with: c) }
    func willSelect(_ m: Message, conversation c: Conversation) { inner.willSelect(m, conversation: c) }
    func didSelect(_ m: Message, conversation c: Conversation) { inner.didSelect(m, conversation: c) }
    func didReceive(_ m: Message, conversation c: Conversation) { inner.didReceive(m, conversation: c) }
    func didStartSending(_ m: Message, conversation c: Conversation) { inner.didStartSending(m, conversation: c) }
    func didCancelSending(_ m: Message, conversation c: Conversation) { inner.didCancelSending(m, conversation: c) }
    func willTransition(to s: PresentationStyle) { inner.willTransition(to: s) }
    func didTransition(to s: PresentationStyle) { inner.didTransition(to: s) }
    func contentSizeThatFits(_ size: ContentSize) -> ContentSize { inner.contentSizeThatFits(size) }

    func handle(_ touch: Touch) {
        if case .cell(let cell) = touch, inner.screen.name == "shipDestroy", inner.screen.cells.count == 9 {
            if tapped.contains(cell) {
                if inner.screen.cells[cell] == "hit" { retapHits += 1 } else { retapMisses += 1 }
            }
            tapped.insert(cell)
        }
        inner.handle(touch)
    }

    var screen: Screen {
        var screen = inner.screen
        guard screen.name == "shipDestroy", screen.labels.count == 2, retapHits + retapMisses > 0 else { return screen }
        let hits = screen.cells.filter { $0 == "hit" }.count + retapHits
        let misses = screen.cells.filter { $0 == "miss" }.count + retapMisses
        screen.labels = ["Hit: \(hits)/2", "Lives: \(3 - misses)/3"]
        return screen
    }
}

/// The shipped Battleship plug-in with the variant extension.
struct VariantBattleship: WrappedBattleship {
    let base = BattleshipPlugin()
    func makeExtension() -> any MessagesAppExtension { RetapCountingBattleship() }
    func playerView(of message: Message, in sight: MessageSight<BattleshipBoard>) -> Message { base.playerView(of: message, in: sight) }
}

@Suite struct RerunTests {
    /// On the hostile network too: what the network did to messages is what the
    /// extensions were given, so a re-run gives the same outputs.
    @Test(arguments: [NetworkProfile.ideal, .hostile])
    func hundredsOfNoisyGamesRerunWithoutADivergence(_ network: NetworkProfile) throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("log.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 12), games: .standard, seed: 12, noise: 0.3)
        simulator.network = network
        let played = network == .ideal ? 200 : 100
        for n in 0..<played { try simulator.play(simulator.mixedKind(n)) }
        let results = try Rerunner(games: .standard).rerun(store: store)
        #expect(results.count > played * 3)
        #expect(results.allSatisfy { $0.outcome == .matched }, "\(results.first { $0.outcome != .matched }.map { "\($0.divergence!)" } ?? "")")
        #expect(results.reduce(0) { $0 + $1.events } == Int(try store.count().events))
        // A registry without a game skips its recordings: they are not passed.
        let skipped = try Rerunner(games: GameRegistry([BattleshipPlugin()])).rerun(store: store)
        #expect(skipped.contains { $0.outcome == .skipped && $0.kind == "tictactoe" })
        #expect(!skipped.contains { $0.outcome == .matched && $0.kind == "tictactoe" })
    }

    @Test func aChangedExtensionDivergesAtTheFirstRetapAndNowhereBefore() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("retap.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 31), games: .standard, seed: 31)
        let report = try simulator.play("battleship") { game in
            [("A", .act(.openConversation(game))), ("A", .act(.openExtension)), ("A", .act(.touch(.button("Start game")))),
             ("A", .act(.touch(.cell(2)))), ("A", .act(.touch(.cell(6)))), ("A", .act(.touch(.button("Finished")))),
             ("A", .act(.tapSend)), ("B", .act(.openConversation(game))), ("B", .deliver), ("B", .tapLatestMessage),
             ("B", .act(.touch(.cell(4)))), ("B", .act(.touch(.cell(2)))), ("B", .act(.touch(.cell(2)))),
             ("B", .act(.touch(.cell(0)))), ("B", .act(.touch(.cell(6)))), ("B", .act(.tapSend))]
        }
        #expect(try Rerunner(games: .standard).rerun(store: store).allSatisfy { $0.outcome == .matched })
        let variant = try Rerunner(games: GameRegistry.standard.adding(VariantBattleship())).rerun(store: store)
        let diverged = variant.filter { $0.outcome == .diverged }
        #expect(diverged.map(\.device) == ["B"])
        // The second touch of cell 2 on B: the first re-tap.
        var decoder = StreamDecoder(store: store)
        let touches = try store.events(EventQuery(types: ["input.touch"])).filter { event in
            guard case .input(.touch(.cell(2)), let context) = try decoder.decode(stream: event.stream, type: event.type,
                                                                                   typeVersion: event.typeVersion,
                                                                                   payload: event.payload) else { return false }
            return context.device == "B"
        }
        #expect(touches.count == 2)
        let divergence = try #require(diverged.first?.divergence)
        #expect(divergence.position == touches[1].position)
        #expect(divergence.recorded == nil && divergence.now?.contains("Hit: 2/2") == true, "\(divergence)")
        #expect(report.conversation.uuid == diverged.first?.conversation)
    }

    @Test func forgedOutputsThatBreakNoRuleAreCaughtByTheRerun() throws {
        let folder = try TemporaryFolder()
        let clean = folder.path("clean.sqlite")
        do {
            // Its own scope: the store closes (and its WAL folds into the file) before the copies.
            let simulator = Simulator(recorder: Recorder(store: try EventStore(path: clean), clock: FixedClock(), seed: 44),
                                      games: .standard, seed: 44)
            for _ in 0..<3 { try simulator.play("tictactoe") }
        }
        func events(_ path: String, _ type: String) throws -> [(StoredEvent, RecordedEvent)] {
            let store = try EventStore(path: path, access: .readOnly)
            var decoder = StreamDecoder(store: store)
            return try store.events(EventQuery(types: [type])).map {
                ($0, try decoder.decode(stream: $0.stream, type: $0.type, typeVersion: $0.typeVersion, payload: $0.payload))
            }
        }
        // 1. A touch moved to a cell that is already marked: the code makes no move there.
        let moved = folder.path("moved.sqlite")
        try FileManager.default.copyItem(atPath: clean, toPath: moved)
        var target: Int64 = 0
        for (stored, event) in try events(moved, "input.touch") {
            guard case .input(.touch(.cell(let cell)), _) = event, stored.position > 40 else { continue }
            let inserts = try events(moved, "action.insert").filter { $0.0.position > stored.position }
            guard case .action(let record, _)? = inserts.first?.1, case .insert(let message) = record.action,
                  let occupied = message.layout?.template.image?.cells.indices.first(where: {
                      $0 != cell && message.layout?.template.image?.cells[$0] != "empty" }) else { continue }
            target = stored.position
            try LogForger(path: moved).rewrite(position: stored.position) {
                $0.replacingOccurrences(of: #""cell":{"_0":\#(cell)}"#, with: #""cell":{"_0":\#(occupied)}"#)
            }
            break
        }
        #expect(target > 0)
        var auditor = Auditor(games: .standard)
        let found = try auditor.audit(try EventStore(path: moved, access: .readOnly)).filter { $0.check == .rerun }
        #expect(found.contains { ($0.position ?? 0) >= target }, "\(found)")
        // ...and without the re-run, the game rules alone see nothing wrong with it.
        auditor.rerunsExtensions = false
        #expect(try auditor.audit(try EventStore(path: moved, access: .readOnly)).filter { $0.check == .legality }.isEmpty)

        // 2. A board image with a mark on the opponent's cell, the URL untouched.
        let image = folder.path("image.sqlite")
        try FileManager.default.copyItem(atPath: clean, toPath: image)
        let insert = try #require(try events(image, "action.insert").dropFirst(2).first)
        try LogForger(path: image).rewrite(position: insert.0.position) { payload in
            guard let range = payload.range(of: #""cells":["#) else { return payload }
            var out = payload
            out.replaceSubrange(range, with: #""cells":["o","#)
            if let extra = out.range(of: #","empty""#, range: range.upperBound..<out.endIndex) { out.removeSubrange(extra) }
            return out
        }
        let imageFindings = try Auditor(games: .standard).audit(try EventStore(path: image, access: .readOnly))
        #expect(imageFindings.contains { $0.check == .rerun && $0.position == insert.0.position }, "\(imageFindings.map(\.rule))")
    }
}

/// Issue 41, item 1: a game whose view shows what it declares secret.
struct LeakyViewBattleship: WrappedBattleship {
    let base = BattleshipPlugin()
    func playerView(of message: Message, in sight: MessageSight<BattleshipBoard>) -> Message { message }
}

@Suite struct SecretViewTests {
    @Test func aViewThatShowsADeclaredSecretIsADesignFinding() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("leaky.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 14), games: .standard, seed: 14)
        for _ in 0..<3 { try simulator.play("battleship") }
        var auditor = Auditor(games: GameRegistry.standard.adding(LeakyViewBattleship()))
        auditor.rerunsExtensions = false
        let found = try auditor.audit(try EventStore(path: store.path, access: .readOnly))
        #expect(found.filter { $0.rule == "views-hide-the-secrets" && $0.severity == .design }.count >= 3, "\(found.map(\.rule))")
        // The shipped game's view hides them: no such finding.
        var shipped = Auditor(games: .standard)
        shipped.rerunsExtensions = false
        #expect(!(try shipped.audit(try EventStore(path: store.path, access: .readOnly))).contains { $0.rule == "views-hide-the-secrets" })
    }
}
