import BattleshipGame
import GameKit
import MessagesHost
import MessagesModel
import TestSupport
import Testing

@Suite struct BattleshipFlowTests {
    /// Alice places ships on `ships` and sends; Bob receives and opens the message.
    func placed(_ ships: [Int]) throws -> Table {
        let t = try Table(BattleshipPlugin())
        try t.do("A", .openConversation(t.game), .openExtension)
        #expect(t.screen("A") == Screen(name: "start", labels: ["Battleship"], buttons: [.init("Start game")]))
        try t.do("A", .touch(.button("Start game")))
        #expect(t.host.activeInstance(on: "A")?.style == .expanded)
        #expect(t.screen("A")?.name == "shipPlacement")
        #expect(t.screen("A")?.labels == ["Ships to Place: 2"])
        try t.do("A", .touch(.button("Finished"))) // disabled: nothing happens
        #expect(t.staged("A") == nil)
        for ship in ships { try t.do("A", .touch(.cell(ship))) }
        #expect(t.screen("A")?.labels == ["Ships to Place: 0"])
        #expect(t.screen("A")?.buttons == [.init("Finished", isEnabled: true)])
        try t.do("A", .touch(.button("Finished")))
        let staged = try #require(t.staged("A"))
        #expect(staged.url == Battleship.GameModel(shipLocations: ships.sorted(), isComplete: false).encode())
        #expect(staged.session != nil)
        // The image is taken after the board is reset: it hides the ships.
        #expect(staged.layout?.template.image?.cells == Array(repeating: "empty", count: 9))
        #expect(t.display("A", staged) == "Alice placed their ships! Can you find them?")
        #expect(t.host.activeInstance(on: "A") == nil) // dismissed itself
        try t.do("A", .tapSend)
        t.host.deliverAll()
        try t.do("B", .openConversation(t.game), .tapMessage(t.latest("B")!.id))
        #expect(t.screen("B")?.labels == ["Hit: 0/2", "Lives: 3/3"])
        return t
    }

    @Test func guesserWins() throws {
        let t = try placed([6, 2])
        let placement = try #require(t.latest("B"))
        try t.do("B", .touch(.cell(0)), .touch(.cell(2)), .touch(.cell(2)))
        #expect(t.screen("B")?.labels == ["Hit: 1/2", "Lives: 2/3"])
        try t.do("B", .touch(.cell(6)))
        let result = try #require(t.staged("B"))
        #expect(result.session == placement.session) // the SAME session
        #expect(try Battleship.GameModel(url: result.url!) == .init(shipLocations: [2, 6], isComplete: true))
        #expect(t.display("B", result) == "Bob destroyed all the ships!")
        #expect(t.host.activeInstance(on: "B") == nil)
        try t.do("B", .tapSend)
        t.host.deliverAll()
        // One game, one session, two messages: the placement is now a summary line.
        let onA = t.host.transcript(on: "A", in: t.game)
        #expect(onA.count == 2 && onA[0].message == nil && onA[1].message?.id == result.id)
        #expect(t.display("A", t.latest("A")) == "Bob destroyed all the ships!")
        // Opening the finished game shows the alert with the board hidden.
        try t.do("A", .tapMessage(t.latest("A")!.id))
        #expect(t.screen("A")?.alert == Screen.Alert(title: "Game Complete!", message: "The game's already finished!"))
        #expect(t.screen("A")?.cells == [])
        try t.do("A", .touch(.cell(2)))
        #expect(t.staged("A") == nil)
        try t.do("A", .touch(.dismissAlert))
        #expect(t.screen("A")?.alert == nil)
    }

    @Test func guesserLosesAfterThreeMisses() throws {
        let t = try placed([0, 1])
        try t.do("B", .touch(.cell(0)), .touch(.cell(5)), .touch(.cell(6)))
        #expect(t.staged("B") == nil)
        try t.do("B", .touch(.cell(7)))
        let result = try #require(t.staged("B"))
        #expect(t.display("B", result) == "Bob lost!")
        #expect(try Battleship.GameModel(url: result.url!).isComplete)
        #expect(result.layout?.template.image?.cells == ["hit", "empty", "empty", "empty", "empty", "miss", "miss", "miss", "empty"])
    }

    @Test func nothingIsInsertedWhenTheSelectedMessageHasNoSession() throws {
        let url = Battleship.GameModel(shipLocations: [0, 1], isComplete: false).encode()
        let t = try Table(BattleshipPlugin()) { $0.device == "A" ? Forger(url: url, withSession: false) : nil }
        try t.do("A", .openConversation(t.game), .openExtension, .touch(.button("forge")), .tapSend)
        t.host.deliverAll()
        try t.do("B", .openConversation(t.game), .tapMessage(t.latest("B")!.id), .touch(.cell(0)), .touch(.cell(1)))
        #expect(t.staged("B") == nil)
        #expect(t.host.activeInstance(on: "B") == nil) // it still dismisses
    }

    @Test func unreadableURLShowsAScreenInsteadOfCrashing() throws {
        let t = try Table(BattleshipPlugin()) {
            $0.device == "A" ? Forger(url: "www.shinobicontrols.com/battleship?Ship_Location=0", withSession: true) : nil
        }
        try t.do("A", .openConversation(t.game), .openExtension, .touch(.button("forge")), .tapSend)
        t.host.deliverAll()
        try t.do("B", .openConversation(t.game), .tapMessage(t.latest("B")!.id))
        #expect(t.screen("B")?.name == "unreadable")
        #expect(t.screen("B")?.labels.first?.contains("Is_Complete") == true)
    }
}
