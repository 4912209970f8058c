import Foundation
import GameRules
import MessagesModel
import Projections
import RecordedEvents

/// Game legality, per session, from the messages devices sent and the taps that
/// produced them. Feed it a conversation's events in the order they happened.
public struct GameChecker {
    struct BattleshipGame {
        var ships: [Int]?
        var complete = false
    }

    struct TicTacToeGame {
        var cells = Array(repeating: 0, count: 9)
        var lastMover: Int?
        var finished = false
    }

    private var kind = ""
    private var battleship: [SessionID: BattleshipGame] = [:]
    private var tictactoe: [SessionID: TicTacToeGame] = [:]
    /// Per device: cells touched on the ship-destroy screen since it was opened.
    private var taps: [String: [Int]] = [:]
    private var destroyScreenOpen: [String: Bool] = [:]
    private var tapsAtInsert: [MessageID: [Int]] = [:]
    public private(set) var findings: [Finding] = []

    public init() {}

    private mutating func fail(_ e: ReplayEvent, _ session: SessionID?, _ device: String, _ rule: String,
                               expected: String, found: String) {
        findings.append(Finding(.error, .legality, position: e.position, game: session?.uuid.uuidString, device: device,
                                rule: rule, expected: expected, found: found))
    }

    public mutating func check(_ e: ReplayEvent) {
        switch e.event {
        case .recordingStarted(let info):
            kind = info.kind
        case .screen(let screen, let context):
            // A fresh ship-destroy screen starts a fresh count of taps.
            let open = screen.name == "shipDestroy" && !screen.cells.isEmpty
            if open && (!(destroyScreenOpen[context.device.name] ?? false) || screen.cells.allSatisfy({ $0 == "empty" })) {
                taps[context.device.name] = []
            }
            destroyScreenOpen[context.device.name] = open
        case .action(let record, let context):
            // The taps that decided a result are those before it was inserted; it may be
            // sent much later, after other screens.
            if case .insert(let message) = record.action, record.error == nil {
                tapsAtInsert[message.id] = taps[context.device.name] ?? []
            }
        case .input(.touch(.cell(let cell)), let context):
            if destroyScreenOpen[context.device.name] == true { taps[context.device.name, default: []].append(cell) }
        case .transcript(.sent(.message(let message)), let context):
            guard let session = message.session else { return }
            switch kind {
            case "battleship": checkBattleship(message, session: session, device: context.device.name, e)
            case "tictactoe": checkTicTacToe(message, session: session, device: context.device.name, e)
            default: break
            }
        default:
            break
        }
    }

    private mutating func checkBattleship(_ message: Message, session: SessionID, device: String, _ e: ReplayEvent) {
        let model: Battleship.GameModel
        do {
            model = try Battleship.GameModel(url: message.url ?? "")
        } catch {
            fail(e, session, device, "battleship-url-decodes", expected: "a valid Battleship URL", found: error.description)
            return
        }
        var game = battleship[session] ?? BattleshipGame()
        defer { battleship[session] = game }
        if game.complete {
            fail(e, session, device, "nothing-after-completion", expected: "no message after the result",
                 found: "a message with Is_Complete=\(model.isComplete ? 1 : 0)")
            return
        }
        if !model.isComplete {
            if model.shipLocations.count != Battleship.totalShipCount {
                fail(e, session, device, "two-distinct-ships", expected: "2 distinct ships on cells 0...8",
                     found: "\(model.shipLocations.count) ships \(model.shipLocations)")
            }
            if let ships = game.ships, ships != model.shipLocations {
                fail(e, session, device, "ships-unchanged", expected: "ships \(ships)", found: "ships \(model.shipLocations)")
            }
            game.ships = game.ships ?? model.shipLocations
            return
        }
        // The result.
        game.complete = true
        guard let ships = game.ships else {
            fail(e, session, device, "result-after-placement", expected: "a placement message first", found: "a result")
            return
        }
        if ships != model.shipLocations {
            fail(e, session, device, "ships-unchanged", expected: "ships \(ships) as placed", found: "ships \(model.shipLocations)")
        }
        let decisive = tapsAtInsert[message.id] ?? taps[device] ?? []
        var hunt = Battleship.Hunt(model: Battleship.GameModel(shipLocations: ships, isComplete: false))
        for cell in decisive where hunt.outcome == nil { hunt = hunt.tapping(cell) }
        let caption = message.caption ?? ""
        let claimsWin = caption.hasSuffix("destroyed all the ships!")
        let claimsLoss = caption.hasSuffix(" lost!")
        switch hunt.outcome {
        case .won? where !claimsWin, .lost? where !claimsLoss:
            fail(e, session, device, "result-matches-taps", expected: "a caption saying the guesser \(hunt.outcome!.rawValue)",
                 found: "\"\(caption)\" after taps \(decisive)")
        case nil:
            fail(e, session, device, "result-matches-taps", expected: "a game decided by the recorded taps",
                 found: "Is_Complete=1 after taps \(decisive) (\(hunt.hits.count) hits, \(hunt.misses.count) misses)")
        default:
            break
        }
    }

    private mutating func checkTicTacToe(_ message: Message, session: SessionID, device: String, _ e: ReplayEvent) {
        let state: TicTacToe.GameState
        do {
            state = try TicTacToe.GameState(url: message.url)
        } catch {
            fail(e, session, device, "tictactoe-url-decodes", expected: "a valid tic-tac-toe URL", found: error.description)
            return
        }
        var game = tictactoe[session] ?? TicTacToeGame()
        defer { tictactoe[session] = game }
        if game.finished {
            fail(e, session, device, "no-move-after-win", expected: "no move after the game was won", found: "another message")
        }
        let added = (0..<9).filter { game.cells[$0] == 0 && state.cells[$0] != 0 }
        let changed = (0..<9).filter { game.cells[$0] != 0 && state.cells[$0] != game.cells[$0] }
        if added.count != 1 || !changed.isEmpty {
            fail(e, session, device, "one-mark-per-message", expected: "exactly one new mark",
                 found: "\(added.count) new marks\(changed.isEmpty ? "" : ", \(changed.count) changed")")
        }
        let expectedMover = game.lastMover.map { -$0 } ?? TicTacToe.x
        if state.lastMover != expectedMover {
            fail(e, session, device, "players-alternate", expected: "\(expectedMover == 1 ? "X" : "O") to move",
                 found: "\(state.lastMover == 1 ? "X" : "O") moved")
        }
        if let cell = added.first, added.count == 1, state.cells[cell] != state.lastMover {
            fail(e, session, device, "trailing-item-names-mover", expected: "the mover \(state.cells[cell])",
                 found: "trailing item \(state.lastMover ?? 0)")
        }
        let expectedCaption = state.winner != 0 ? "Game Over" : "Game On"
        if message.caption != expectedCaption {
            fail(e, session, device, "caption-matches-board", expected: "\"\(expectedCaption)\"", found: "\"\(message.caption ?? "")\"")
        }
        game.cells = state.cells
        game.lastMover = state.lastMover
        game.finished = state.winner != 0
    }
}
