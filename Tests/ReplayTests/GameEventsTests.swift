import EventStore
import Foundation
import GameKit
import Games
import MessagesModel
import Projections
import RecordedEvents
import Recorder
import Presentation
import Replay
import Simulation
import Testing
import TestSupport

/// A game's events are its session's, not a window of positions: two tic-tac-toe games
/// played side by side in one conversation keep their own events.
@Suite struct GameEventsTests {
    @Test func twoOverlappingGamesKeepTheirOwnEvents() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("two.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 4), games: .standard, seed: 4, noise: 0)
        let report = try simulator.play("tictactoe") { game in
            [("A", .act(.openConversation(game))), ("A", .act(.openExtension)), ("A", .act(.expand)), ("A", .act(.touch(.cell(0)))),
             ("A", .act(.tapSend)), ("B", .act(.openConversation(game))), ("B", .deliver), ("B", .tapLatestMessage),
             ("B", .act(.touch(.cell(4)))),
             // Before B sends, A opens the drawer with nothing selected: a new board, a second game.
             ("A", .act(.openExtension)), ("A", .act(.expand)), ("A", .act(.touch(.cell(8)))), ("A", .act(.tapSend)),
             ("B", .act(.tapSend)), ("A", .deliver), ("B", .deliver)]
        }
        let catalog = try GameCatalog(store: store, games: .standard)
        let replayer = try Replayer(store: store, conversation: report.conversation, streams: catalog.streams[report.conversation] ?? [],
                                    games: .standard)
        let state = try replayer.state(at: replayer.stepCount)
        let sessions = state.gameOrder
        #expect(sessions.count == 2, "\(state.orderedGames.map(\.status))")
        guard sessions.count == 2 else { return }
        let first = replayer.positions(ofGame: sessions[0]), second = replayer.positions(ofGame: sessions[1])
        #expect(first.isDisjoint(with: second))
        // Each game's inserts are in its own list only, and the taps that made them with them.
        func inserts(of session: SessionID) -> Set<Int64> {
            Set(replayer.events.filter { event in
                if case .action(let record, _) = event.event, case .insert(let m) = record.action { return m.session == session }
                return false
            }.map(\.position))
        }
        #expect(inserts(of: sessions[0]).count == 2 && inserts(of: sessions[0]).isSubset(of: first))
        #expect(inserts(of: sessions[1]).count == 1 && inserts(of: sessions[1]).isSubset(of: second))
        let tapCell8 = replayer.events.first { event in
            if case .input(.touch(.cell(8)), _) = event.event { return true } else { return false }
        }
        #expect(tapCell8.map { second.contains($0.position) && !first.contains($0.position) } == true)
        // The window the two games span would have mixed them: it held the other game's insert.
        let window = Set(replayer.events.map(\.position).filter { $0 >= first.min()! && $0 <= first.max()! })
        #expect(!window.isDisjoint(with: inserts(of: sessions[1])))
    }

    /// "A game's events" is one number: what `games` counts (the fold's count, activations
    /// that never ended included) is what `log --game` lists (``Replayer/positions(ofGame:)``),
    /// for every kind, with players who stray, on the phone network.
    @Test func aGamesEventsAreOneNumberEverywhere() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("many.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 8), games: .standard, seed: 8, noise: 0.3)
        var played = 0
        for kind in GameRegistry.standard.kinds {
            for _ in 0..<6 { _ = try simulator.play(kind); played += 1 }
        }
        let catalog = try GameCatalog(store: store, games: .standard)
        var checked = 0, beyondTheMessages = 0
        for (conversation, streams) in catalog.streams {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, games: .standard)
            let final = try replayer.state(at: replayer.stepCount)
            for summary in catalog.games where summary.conversation == conversation.uuid.uuidString.lowercased() {
                let session = try #require(final.gameOrder.first { $0.uuid.uuidString.lowercased() == summary.id })
                let listed = replayer.positions(ofGame: session)
                #expect(summary.events == listed.count, "\(summary.kind) \(summary.id): games says \(summary.events), log --game lists \(listed.count)")
                #expect(listed.count <= replayer.stepCount)
                // The placement taps and the opening callbacks are the game's too, not only its messages.
                if listed.count > Set(final.games[session]?.messages ?? []).count { beyondTheMessages += 1 }
                checked += 1
            }
        }
        #expect(played == GameRegistry.standard.kinds.count * 6)
        #expect(checked >= played / 2 && beyondTheMessages > 0, "\(checked) games checked")
    }

    /// A walk over every step (a page's step list) notes each game's events on its way and
    /// keeps the states it passes: what the replayer answers after it is what a replayer
    /// that folded apart for each question answers, for the auditor and for each device's
    /// own view; a walk over part of the steps notes nothing it could get wrong.
    @Test func aWalkOverEveryStepListsEachGamesEventsAsItsOwnFoldDoes() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("walk-all.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 12), games: .standard, seed: 12, noise: 0.3)
        for kind in GameRegistry.standard.kinds {
            for _ in 0..<2 { _ = try simulator.play(kind) }
        }
        let catalog = try GameCatalog(store: store, games: .standard)
        var compared = 0, statesCompared = 0
        for (conversation, streams) in catalog.streams {
            let apart = try Replayer(store: store, conversation: conversation, streams: streams, snapshotInterval: 8, games: .standard)
            let walked = try Replayer(store: store, conversation: conversation, streams: streams, snapshotInterval: 8, games: .standard)
            let partly = try Replayer(store: store, conversation: conversation, streams: streams, snapshotInterval: 8, games: .standard)
            guard walked.stepCount > 2 else { continue }
            let sessions = try apart.state(at: apart.stepCount).gameOrder
            for perspective in [Perspective.auditor] + walked.devices.map(Perspective.device) {
                let (apartView, walkedView, partView) = (apart.seen(by: perspective), walked.seen(by: perspective), partly.seen(by: perspective))
                guard walkedView.stepCount > 2 else { continue }
                try walkedView.forEachStep(in: 1...walkedView.stepCount, as: perspective) { _, _, _, _ in }
                try partView.forEachStep(in: 2...partView.stepCount, as: perspective) { _, _, _, _ in }
                for session in sessions {
                    let expected = apartView.positions(ofGame: session)
                    #expect(walkedView.positions(ofGame: session) == expected, "\(perspective) \(session)")
                    #expect(partView.positions(ofGame: session) == expected, "\(perspective) \(session)")
                    compared += 1
                }
                for step in stride(from: 0, through: walkedView.stepCount, by: 3) {
                    #expect(try walkedView.state(at: step, as: perspective) == apartView.state(at: step, as: perspective), "\(perspective) step \(step)")
                    statesCompared += 1
                }
            }
        }
        #expect(compared > 20 && statesCompared > 100, "\(compared) games, \(statesCompared) states compared")
    }

    /// The fold's walk over an event's messages names what `mappingMessages` maps, for
    /// every event of games of every kind.
    @Test func walkingAnEventsMessagesNamesWhatMappingThemMaps() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("walk.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 21), games: .standard, seed: 21, noise: 0.3)
        for kind in GameRegistry.standard.kinds { _ = try simulator.play(kind) }
        var messages = 0
        for e in try Replayer.load(from: store, streams: Set(try GameCatalog(store: store, games: .standard).streams.values.flatMap { $0 })) {
            var walked: [String] = [], mapped: [String] = []
            e.event.forEachCarriedMessage { message, place in walked.append("\(message.id) \(place)") }
            _ = e.event.mappingMessages { message, place in
                mapped.append("\(message.id) \(place)")
                return message
            }
            #expect(walked == mapped, "\(e.position)")
            messages += walked.count
        }
        #expect(messages > 100)
    }

    /// A first move replaced in the input field by a second insert is "replaced", not "deleted".
    @Test func aReplacedFirstMessageIsCalledReplaced() throws {
        let folder = try TemporaryFolder()
        let store = try EventStore(path: folder.path("replaced.sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: 5), games: .standard, seed: 5, noise: 0)
        let report = try simulator.play("tictactoe") { game in
            [("A", .act(.openConversation(game))), ("A", .act(.openExtension)), ("A", .act(.expand)), ("A", .act(.touch(.cell(0)))),
             ("A", .act(.openExtension)), ("A", .act(.expand)), ("A", .act(.touch(.cell(4)))),
             ("A", .act(.openExtension)), ("A", .act(.expand)), ("A", .act(.touch(.cell(8)))), ("A", .act(.deleteStaged))]
        }
        let catalog = try GameCatalog(store: store, games: .standard)
        let results = catalog.games.filter { $0.conversation == report.conversation.uuid.uuidString.lowercased() }.map(\.result)
        #expect(results.count == 3, "\(results)")
        #expect(results.filter { $0.contains("replaced in the input field") }.count == 2, "\(results)")
        #expect(results.filter { $0.contains("deleted before it was sent") }.count == 1, "\(results)")
    }
}

/// Issue 41, item 9: what `state` prints names people, at every step and from every view:
/// Battleship's captions carry `$<uuid>` mentions of their players, and none is printed raw.
@Suite struct StateTextNamesTests {
    @Test func stateNeverPrintsARawMention() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("battleship.sqlite")
        try recordGames("battleship", count: 2, at: path, seed: 17, noise: 0.2)
        let store = try EventStore(path: path, access: .readOnly)
        let catalog = try GameCatalog(store: store, games: .standard)
        let mention = try Regex(#"\$[0-9A-Fa-f]{8}-"#)
        var checked = 0, namedInCaptions = 0
        for (conversation, streams) in catalog.streams {
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, games: .standard)
            for perspective in [Perspective.auditor] + replayer.devices.map(Perspective.device) {
                for step in 0...replayer.stepCount {
                    let state = try replayer.state(at: step, as: perspective)
                    let text = StateText.render(state, step: step, replayer: replayer, perspective: perspective, focus: nil).joined(separator: "\n")
                    #expect(text.firstMatch(of: mention) == nil, "step \(step) as \(perspective): \(text)")
                    if text.contains("placed their ships") { namedInCaptions += 1 }
                    checked += 1
                }
            }
        }
        #expect(checked > 100 && namedInCaptions > 0)
    }
}
