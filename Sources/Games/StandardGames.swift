import BattleshipGame
import ConnectFourGame
import GameKit
import StickerGame
import TicTacToeGame

extension GameRegistry {
    /// The games gamelog ships: the seeds' Battleship and Tic-tac-toe, seed 004's
    /// sticker extension (no board), and Connect Four, the example of a game added
    /// through the public protocol. Add your own with ``GameRegistry/adding(_:)``.
    public static let standard = GameRegistry([
        BattleshipPlugin(), TicTacToePlugin(), ConnectFourPlugin(), StickerPlugin(),
    ])
}
