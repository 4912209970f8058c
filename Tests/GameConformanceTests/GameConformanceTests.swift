import BattleshipGame
import ConnectFourGame
import GameKit
import GameKitTesting
import MessagesModel
import TestSupport
import Testing
import TicTacToeGame

/// Every game gamelog ships passes the conformance kit a developer's own game runs.
@Suite struct GameConformanceTests {
    @Test(arguments: [BattleshipPlugin() as any GamePlugin, TicTacToePlugin(), ConnectFourPlugin()] as [any GamePlugin])
    func shippedGameConforms(_ plugin: any GamePlugin) throws {
        let report = try GameConformance.check(plugin, games: 8, seed: 5)
        #expect(report.games == 8 && report.recordings > 0 && report.viewsCompared > 0, "\(report)")
        #expect(report.passed, "\(report)")
    }

    /// Battleship hides the placer's ships from the guesser: the kit looked for them.
    @Test func battleshipSecretsAreLookedFor() throws {
        let report = try GameConformance.check(BattleshipPlugin(), games: 4, seed: 9)
        #expect(report.secretChecks > 0 && report.surfacesSearched >= report.secretChecks, "\(report)")
        #expect(report.passed, "\(report)")
    }
}

/// Issue 41, item 1: a game written against the older API, whose message view was
/// `playerView(of: Message, for:)` (nothing calls it any more), with its secrets declared.
struct OlderAPIBattleship: WrappedBattleship {
    let base = BattleshipPlugin()
    /// The older API's view: never called now.
    func playerView(of message: Message, for player: String?) -> Message { message }
}

@Suite struct OlderAPIGameTests {
    /// It compiles; the default view hides what it declares secret, on every surface the kit searches.
    @Test func aGameWrittenAgainstTheOlderAPIStillHidesItsDeclaredSecrets() throws {
        let report = try GameConformance.check(OlderAPIBattleship(), games: 6, seed: 9)
        #expect(report.secretChecks > 0 && report.surfacesSearched >= report.secretChecks, "\(report)")
        #expect(report.passed, "\(report)")
    }
}
