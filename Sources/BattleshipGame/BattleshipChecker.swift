import GameKit
import MessagesModel

/// Battleship's rules as an auditor checks them, per session: a placement of two
/// distinct ships, then one result that keeps the ships and agrees with the taps
/// that produced it, then nothing.
struct BattleshipChecker: LegalityChecker {
    struct Game {
        var ships: [Int]?
        var complete = false
    }

    private var games: [SessionID: Game] = [:]
    /// Per device: cells touched on the ship-destroy screen since it was opened.
    private var taps: [DeviceID: [Int]] = [:]
    private var destroyScreenOpen: [DeviceID: Bool] = [:]
    /// The taps that decided a result are those before it was inserted; it may be
    /// sent much later, after other screens.
    private var tapsAtInsert: [MessageID: [Int]] = [:]

    mutating func check(_ event: GameEvent) -> [RuleBreak] {
        switch event {
        case .screen(let sighting):
            // A fresh ship-destroy screen starts a fresh count of taps.
            let screen = sighting.screen, device = sighting.device
            let open = screen.name == "shipDestroy" && !screen.cells.isEmpty
            if open && (!(destroyScreenOpen[device] ?? false) || screen.cells.allSatisfy({ $0 == "empty" })) {
                taps[device] = []
            }
            destroyScreenOpen[device] = open
            return []
        case .touch(let sighting):
            if case .cell(let cell) = sighting.touch, destroyScreenOpen[sighting.device] == true {
                taps[sighting.device, default: []].append(cell)
            }
            return []
        case .message(let seen):
            if seen.route == .staged {
                tapsAtInsert[seen.message.id] = taps[seen.device] ?? []
                return []
            }
            guard seen.isAuthoritative, let session = seen.message.session else { return [] }
            return check(seen, session: session)
        }
    }

    private mutating func check(_ seen: GameMessage, session: SessionID) -> [RuleBreak] {
        var breaks: [RuleBreak] = []
        func fail(_ rule: String, expected: String, found: String) {
            breaks.append(RuleBreak(rule: rule, expected: expected, found: found, session: session, device: seen.device))
        }
        let message = seen.message
        let model: Battleship.GameModel
        do {
            model = try Battleship.GameModel(url: message.url ?? "")
        } catch {
            fail("battleship-url-decodes", expected: "a valid Battleship URL", found: error.description)
            return breaks
        }
        // The image is the seed's snapshot of the board: a placement's hides the ships,
        // a result's shows hits only on ships and misses only off them.
        if let cells = message.layout?.template.image?.cells {
            let hits = cells.indices.filter { cells[$0] == "hit" }, misses = cells.indices.filter { cells[$0] == "miss" }
            let fits = cells.count == Battleship.cellCount && (model.isComplete
                ? hits.allSatisfy(model.shipLocations.contains) && !misses.contains(where: model.shipLocations.contains)
                : hits.isEmpty && misses.isEmpty && !cells.contains("ship"))
            if !fits {
                fail("image-matches-url", expected: model.isComplete ? "hits on ships \(model.shipLocations) only" : "an image that hides the ships",
                     found: "\(cells)")
            }
        }
        var game = games[session] ?? Game()
        defer { games[session] = game }
        if game.complete {
            fail("nothing-after-completion", expected: "no message after the result",
                 found: "a message with Is_Complete=\(model.isComplete ? 1 : 0)")
            return breaks
        }
        if !model.isComplete {
            if model.shipLocations.count != Battleship.totalShipCount {
                fail("two-distinct-ships", expected: "2 distinct ships on cells 0...8",
                     found: "\(model.shipLocations.count) ships \(model.shipLocations)")
            }
            if let ships = game.ships, ships != model.shipLocations {
                fail("ships-unchanged", expected: "ships \(ships)", found: "ships \(model.shipLocations)")
            }
            game.ships = game.ships ?? model.shipLocations
            return breaks
        }
        // The result.
        game.complete = true
        guard let ships = game.ships else {
            fail("result-after-placement", expected: "a placement message first", found: "a result")
            return breaks
        }
        if ships != model.shipLocations {
            fail("ships-unchanged", expected: "ships \(ships) as placed", found: "ships \(model.shipLocations)")
        }
        // Whether the result follows from the taps needs the guesser's own recording.
        guard seen.senderRecorded else {
            breaks.append(.notCheckable("result-matches-taps", needs: "the guesser's taps", missing: seen.sender,
                                        session: session, device: seen.device))
            return breaks
        }
        let decisive = tapsAtInsert[message.id] ?? taps[seen.device] ?? []
        var hunt = Battleship.Hunt(model: Battleship.GameModel(shipLocations: ships, isComplete: false))
        for cell in decisive where hunt.outcome == nil { hunt = hunt.tapping(cell) }
        let caption = message.caption ?? ""
        let claimsWin = caption.hasSuffix("destroyed all the ships!")
        let claimsLoss = caption.hasSuffix(" lost!")
        switch hunt.outcome {
        case .won? where !claimsWin, .lost? where !claimsLoss:
            fail("result-matches-taps", expected: "a caption saying the guesser \(hunt.outcome!.rawValue)",
                 found: "\"\(caption)\" after taps \(decisive)")
        case nil:
            fail("result-matches-taps", expected: "a game decided by the recorded taps",
                 found: "Is_Complete=1 after taps \(decisive) (\(hunt.hits.count) hits, \(hunt.misses.count) misses)")
        default:
            break
        }
        return breaks
    }
}
