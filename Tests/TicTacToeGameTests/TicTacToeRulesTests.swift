import GameKit
import TicTacToeGame
import Testing

@Suite struct TicTacToeDecoderTests {
    @Test func decodesTheSeedExample() throws {
        let state = try TicTacToe.GameState(url: "?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0")
        #expect(state.cells == [0, 0, 0, 0, 1, 0, 0, 0, 0])
        #expect(state.lastMover == 1 && state.player == -1)
    }

    @Test func noURLOrNoItemsIsANewGameWithXToMove() throws {
        #expect(try TicTacToe.GameState(url: nil) == TicTacToe.GameState())
        #expect(try TicTacToe.GameState(url: "") == TicTacToe.GameState())
        #expect(TicTacToe.GameState().player == TicTacToe.x)
    }

    @Test func encodesAsTheSeedDoes() throws {
        let next = TicTacToe.GameState().placing(at: 4)!
        #expect(next.encode(mover: 1) == "?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0")
        let o = try TicTacToe.GameState(url: next.encode(mover: 1)).placing(at: 0)!
        #expect(o.encode(mover: -1) == "?-1=-1&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&-1=0")
    }

    @Test(arguments: [
        ("?0=0&0=0&1=0", TicTacToe.DecodeError.wrongItemCount(3)),
        ("?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0&0=0", .wrongItemCount(11)),
        ("?a=a&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0", .nonNumericItem(index: 0)),
        ("?0=0&2=2&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0", .invalidMark(index: 1, value: 2)),
        ("?0=0&0=0&1=-1&0=0&1=1&0=0&0=0&0=0&0=0&1=0", .nameValueMismatch(index: 2)),
        ("?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=1", .invalidTrailingItem("1=1")),
        ("?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&0=0", .invalidTrailingItem("0=0")),
        ("ftp://host/?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0", .url(.badScheme("ftp"))),
    ])
    func refusesMalformedURLs(url: String, expected: TicTacToe.DecodeError) {
        #expect(throws: expected) { try TicTacToe.GameState(url: url) }
    }

    @Test func refusesTooLongURLs() {
        let url = "?" + String(repeating: "0=0&", count: 1_300)
        #expect(throws: TicTacToe.DecodeError.url(.tooLong(url.count))) { try TicTacToe.GameState(url: url) }
    }
}

@Suite struct TicTacToeRulesTests {
    func board(_ marks: [Int]) -> TicTacToe.GameState { TicTacToe.GameState(cells: marks, player: 1, lastMover: -1) }

    @Test func everyLineWins() {
        for line in TicTacToe.lines {
            var cells = Array(repeating: 0, count: 9)
            for i in line { cells[i] = -1 }
            #expect(board(cells).winner == TicTacToe.o)
            for i in line { cells[i] = 1 }
            #expect(board(cells).winner == TicTacToe.x)
            #expect(board(cells).caption == "Game Over")
        }
    }

    @Test func aFullBoardWithoutWinnerIsADraw() {
        let full = board([1, -1, 1, 1, -1, -1, -1, 1, 1])
        #expect(full.winner == 0 && full.isDraw && full.caption == "Game On")
        #expect(!board([1, -1, 1, 1, -1, -1, -1, 1, 0]).isDraw)
    }

    @Test func movesOnlyOnEmptyCellsAndNotAfterAWin() {
        let state = TicTacToe.GameState().placing(at: 0)!
        #expect(state.placing(at: 0) == nil)
        #expect(state.placing(at: 9) == nil)
        let won = board([1, 1, 1, -1, -1, 0, 0, 0, 0])
        #expect(won.placing(at: 5) == nil)
    }
}
