import Codebreaker
import GamelogCLI

GamelogCLI.main(adding: Codebreaker.game)
