// A gamelog built by a developer's own package, with only the games it registers: here
// Tic-tac-toe alone, so the other kinds in a log are games this build does not know.
import GameKit
import GamelogCLI
import TicTacToeGame

GamelogCLI.main(games: GameRegistry([TicTacToePlugin()]))
