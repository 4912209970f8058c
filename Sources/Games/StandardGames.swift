import APITourGame
import BattleshipGame
import ConnectFourGame
import GameKit
import StickerGame
import TicTacToeGame

extension GameRegistry {
    /// The games gamelog ships: the seeds' Battleship and Tic-tac-toe, seed 004's
    /// sticker extension (no board), Connect Four, the example of a game added through
    /// the public protocol, and the API tour (seed 004 carried on to the rest of the
    /// Messages API, no board). Add your own with ``GameRegistry/adding(_:)``.
    public static let standard = GameRegistry([
        BattleshipPlugin(), TicTacToePlugin(), ConnectFourPlugin(), StickerPlugin(), APITourPlugin(),
    ])
}
