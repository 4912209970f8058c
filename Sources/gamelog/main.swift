import Games
import GamelogCLI

GamelogCLI.main(games: .standard)
