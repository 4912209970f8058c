import Foundation
import GameKit
import Games

/// The whole `gamelog` command (and its viewer) as a library, with the games you
/// register: a package with a game of its own has a three-line executable
///
///     import Codebreaker
///     import GamelogCLI
///     GamelogCLI.main(adding: Codebreaker.game)
///
/// and every command (`games`, `state`, `verify`, `rerun`, `fork`, `serve`, ...) knows its
/// game besides the ones gamelog ships (see `Examples/Codebreaker`).
public enum GamelogCLI {
    /// gamelog's version (Semantic Versioning; CHANGELOG.md says what each changed).
    public static let version = "0.49.0"

    /// The games every command knows. Set once, by ``main(games:)``, before any command is parsed.
    nonisolated(unsafe) static var games: GameRegistry = .standard

    /// Parses the process's arguments and runs the command, knowing `games`; exits.
    public static func main(games: GameRegistry) -> Never {
        Self.games = games
        // The commands are asynchronous; the main thread serves the main actor meanwhile,
        // as an `async` main would, so this entry point stays synchronous for callers.
        Task { @MainActor in await Gamelog.start() }
        dispatchMain()
    }

    /// Runs the command knowing the games gamelog ships and `games` (one of the same
    /// kind as a shipped game replaces it); exits.
    public static func main(adding games: any GamePlugin...) -> Never {
        main(games: games.reduce(GameRegistry.standard) { $0.adding($1) })
    }
}
