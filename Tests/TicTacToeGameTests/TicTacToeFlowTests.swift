import GameKit
import TicTacToeGame
import MessagesHost
import MessagesModel
import TestSupport
import Testing

@Suite struct TicTacToeFlowTests {
    /// Plays `moves` alternately from A (X) and B (O); returns the table.
    func play(_ moves: [Int]) throws -> Table {
        let t = try Table(TicTacToePlugin())
        try t.do("A", .openConversation(t.game), .openExtension)
        #expect(t.screen("A")?.name == "placeholder")
        try t.do("A", .expand)
        #expect(t.screen("A")?.labels == ["X to move"])
        try t.do("B", .openConversation(t.game))
        for (n, cell) in moves.enumerated() {
            let device: DeviceID = n.isMultiple(of: 2) ? "A" : "B"
            if n > 0 { try t.do(device, .tapMessage(t.latest(device)!.id)) }
            try t.do(device, .touch(.cell(cell)))
            try t.do(device, .tapSend)
            t.host.deliverAll()
        }
        return t
    }

    @Test func xWinsAndEveryMessageStaysInOneSession() throws {
        let t = try play([4, 0, 2, 6, 3, 1, 5])
        let last = try #require(t.latest("B"))
        let state = try TicTacToe.GameState(url: last.url)
        #expect(state.winner == TicTacToe.x && state.lastMover == TicTacToe.x)
        #expect(last.caption == "Game Over")
        let messages = t.host.transcript(on: "B", in: t.game)
        #expect(messages.count == 7 && messages.filter { $0.message != nil }.count == 1)
        try t.do("B", .tapMessage(last.id))
        #expect(t.screen("B")?.labels == ["Game Over: X won"])
        try t.do("B", .touch(.cell(7))) // no move after a win
        #expect(t.staged("B") == nil)
    }

    @Test func oWinsSoXLoses() throws {
        let t = try play([0, 3, 1, 4, 8, 5])
        let last = try #require(t.latest("A"))
        let state = try TicTacToe.GameState(url: last.url)
        #expect(state.winner == TicTacToe.o && last.caption == "Game Over")
        try t.do("A", .tapMessage(last.id))
        #expect(t.screen("A")?.labels == ["Game Over: O won"])
    }

    @Test func aFullBoardIsReportedAsADraw() throws {
        let t = try play([0, 1, 2, 4, 3, 5, 7, 6, 8])
        let last = try #require(t.latest("B"))
        let state = try TicTacToe.GameState(url: last.url)
        #expect(state.isDraw && last.caption == "Game On") // the seed's caption
        try t.do("B", .tapMessage(last.id))
        #expect(t.screen("B")?.labels == ["Game Over: draw"])
    }

    @Test func oneMovePerOpeningOnEmptyCellsOnly() throws {
        let t = try play([4])
        try t.do("B", .tapMessage(t.latest("B")!.id))
        try t.do("B", .touch(.cell(4))) // taken
        #expect(t.staged("B") == nil)
        #expect(t.screen("B")?.labels == ["O to move"])
        try t.do("B", .touch(.cell(0)))
        let staged = try #require(t.staged("B"))
        #expect(staged.url == "?-1=-1&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&-1=0")
        #expect(staged.session == t.latest("B")?.session)
    }

    @Test func didReceiveRequestsTheExpandedStyle() throws {
        let t = try Table(TicTacToePlugin())
        try t.do("B", .openConversation(t.game), .openExtension)
        #expect(t.host.activeInstance(on: "B")?.style == .compact)
        try t.do("A", .openConversation(t.game), .openExtension, .expand, .touch(.cell(8)), .tapSend)
        t.host.deliverAll()
        #expect(t.host.activeInstance(on: "B")?.style == .expanded)
        #expect(t.host.deliveredCallbacks[.didReceive] == 1)
    }
}
