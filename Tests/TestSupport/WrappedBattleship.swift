import BattleshipGame
import GameKit
import MessagesModel

/// A test's variant of the shipped Battleship: everything forwarded to the shipped plug-in
/// but what the variant itself implements. The message view is not forwarded, so a variant
/// that declares none gets GameKit's default (what a game written against the older API gets).
public protocol WrappedBattleship: GamePlugin where Board == BattleshipBoard {
    var base: BattleshipPlugin { get }
}

extension WrappedBattleship {
    public var kind: String { base.kind }
    public var title: String { base.title }
    public var boardColumns: Int { base.boardColumns }
    public func makeExtension() -> any MessagesAppExtension { base.makeExtension() }
    public func isGameMessage(_ message: Message) -> Bool { base.isGameMessage(message) }
    public func newBoard() -> BattleshipBoard { base.newBoard() }
    public func reduce(_ board: inout BattleshipBoard, _ event: GameEvent) { base.reduce(&board, event) }
    public func progress(of board: BattleshipBoard) -> GameProgress { base.progress(of: board) }
    public func playerView(of board: BattleshipBoard, for player: String?) -> BattleshipBoard { base.playerView(of: board, for: player) }
    public func secrets(of board: BattleshipBoard, hiddenFrom player: String?) -> [String] { base.secrets(of: board, hiddenFrom: player) }
    public func picture(of board: BattleshipBoard) -> BoardPicture { base.picture(of: board) }
    public func result(of board: BattleshipBoard) -> String { base.result(of: board) }
    public func makeChecker() -> any LegalityChecker { base.makeChecker() }
    public func makeStrategy(players: [DeviceID], conversation: ConversationID) -> any GameStrategy {
        base.makeStrategy(players: players, conversation: conversation)
    }
}
