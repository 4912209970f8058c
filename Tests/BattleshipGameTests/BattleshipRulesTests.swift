import BattleshipGame
import GameKit
import Testing

@Suite struct BattleshipDecoderTests {
    @Test func decodesTheSeedURL() throws {
        let model = try Battleship.GameModel(url: "www.shinobicontrols.com/battleship?Ship_Location=0&Ship_Location=1&Is_Complete=0")
        #expect(model == Battleship.GameModel(shipLocations: [0, 1], isComplete: false))
    }

    @Test func encodesAsTheSeedDoes() throws {
        let model = Battleship.GameModel(shipLocations: [2, 7], isComplete: true)
        #expect(model.encode() == "www.shinobicontrols.com/battleship?Ship_Location=2&Ship_Location=7&Is_Complete=1")
        #expect(try Battleship.GameModel(url: model.encode()) == model)
        #expect(try Battleship.GameModel(url: "https://www.shinobicontrols.com/battleship?Ship_Location=3&Is_Complete=1").shipLocations == [3])
    }

    @Test(arguments: [
        ("www.shinobicontrols.com/battleship", Battleship.DecodeError.noQueryItems),
        ("www.shinobicontrols.com/battleship?Ship_Location=0&Ship_Location=1", .missingIsComplete),
        ("x?Ship_Location=a&Is_Complete=0", .nonNumericCell("a")),
        ("x?Ship_Location=&Is_Complete=0", .nonNumericCell("")),
        ("x?Ship_Location=9&Is_Complete=0", .cellOutOfRange(9)),
        ("x?Ship_Location=-1&Is_Complete=0", .cellOutOfRange(-1)),
        ("x?Ship_Location=4&Ship_Location=4&Is_Complete=0", .duplicateShip(4)),
        ("x?Ship_Location=4&Is_Complete=2", .invalidIsComplete("2")),
        ("x?Ship_Location=4&Is_Complete=0&Is_Complete=1", .duplicateIsComplete),
        ("x?Ship_Location=4&Is_Complete=0&Cheat=1", .unexpectedItem("Cheat")),
        ("javascript:alert(1)?Ship_Location=4&Is_Complete=0", .url(.badScheme("javascript"))),
    ])
    func refusesMalformedURLs(url: String, expected: Battleship.DecodeError) {
        #expect(throws: expected) { try Battleship.GameModel(url: url) }
    }

    @Test func refusesTooLongURLs() {
        let url = "x?Is_Complete=0" + String(repeating: "&Ship_Location=1", count: 400)
        #expect(throws: Battleship.DecodeError.url(.tooLong(url.count))) { try Battleship.GameModel(url: url) }
    }
}

@Suite struct BattleshipPlayTests {
    @Test func placementTogglesAndStopsAtTwoShips() {
        var p = Battleship.Placement()
        #expect(p.shipsLeftToPosition == 2 && !p.canFinish)
        p = p.tapping(5).tapping(1)
        #expect(p.ships == [1, 5] && p.canFinish)
        p = p.tapping(8) // ignored once both ships are placed
        #expect(p.ships == [1, 5])
        p = p.tapping(5) // a tap on a ship removes it
        #expect(p.ships == [1] && p.shipsLeftToPosition == 1)
        #expect(p.tapping(42) == p)
    }

    @Test func huntIsWonWhenBothShipsAreHitBeforeThreeMisses() {
        var hunt = Battleship.Hunt(model: .init(shipLocations: [0, 8], isComplete: false))
        hunt = hunt.tapping(4).tapping(0)
        #expect(hunt.hits == [0] && hunt.misses == [4] && hunt.livesLeft == 2 && hunt.outcome == nil)
        hunt = hunt.tapping(0).tapping(4) // re-taps change no count
        #expect(hunt.hits == [0] && hunt.misses == [4])
        hunt = hunt.tapping(8)
        #expect(hunt.outcome == .won)
        #expect(hunt.cells == ["hit", "empty", "empty", "empty", "miss", "empty", "empty", "empty", "hit"])
    }

    @Test func huntIsLostAtThreeMisses() {
        let hunt = Battleship.Hunt(model: .init(shipLocations: [0, 8], isComplete: false)).tapping(1).tapping(2).tapping(0).tapping(3)
        #expect(hunt.outcome == .lost && hunt.livesLeft == 0)
    }

    @Test func captionsMentionTheLocalParticipant() {
        #expect(Battleship.placedCaption("ID") == "$ID placed their ships! Can you find them?")
        #expect(Battleship.wonCaption("ID") == "$ID destroyed all the ships!")
        #expect(Battleship.lostCaption("ID") == "$ID lost!")
    }
}
