import BattleshipGame
import Foundation
import GameKit
import MessagesModel
#if canImport(Glibc)
import Glibc
#endif

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

/// The shipped Battleship, noting the scheduling priority (`nice`, Linux) of every thread
/// that folds one of its events, beside the process's main thread's: what a test of who
/// folds at which priority reads.
public struct PriorityNotingBattleship: WrappedBattleship {
    public let base = BattleshipPlugin()
    public let notes = PriorityNotes()
    public init() {}
    public func reduce(_ board: inout BattleshipBoard, _ event: GameEvent) {
        notes.noteCallingThread()
        base.reduce(&board, event)
    }
}

/// What ``PriorityNotingBattleship`` noted: for each fold, whether its thread ran below the
/// process's main thread.
public final class PriorityNotes: @unchecked Sendable {
    private let lock = NSLock()
    private var lowered = 0, normal = 0, lowest = 0

    public init() {}

    func noteCallingThread() {
        #if canImport(Glibc)
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        let mine = getpriority(which, 0)
        let below = mine > getpriority(which, id_t(getpid()))
        #else
        let mine: Int32 = 0, below = false
        #endif
        lock.withLock {
            if below { lowered += 1 } else { normal += 1 }
            if mine == 19 { lowest += 1 }
        }
    }

    /// The folds noted so far, below the main thread's priority and at it, and of those
    /// below it the ones at the lowest (`nice` 19); and starts again.
    public func take() -> (lowered: Int, normal: Int, lowest: Int) {
        lock.withLock {
            defer { lowered = 0; normal = 0; lowest = 0 }
            return (lowered, normal, lowest)
        }
    }
}
