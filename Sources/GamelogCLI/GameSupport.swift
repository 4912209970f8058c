import RecordedEvents
import ArgumentParser
import EventStore
import Foundation
import GameKit
import Games
import Presentation
import MessagesModel
import Projections
import Replay

/// `--as TEXT`: the auditor or one of `devices`, as an argument error naming them.
func parsePerspective(_ text: String, devices: [DeviceID]) throws -> Perspective {
    do {
        return try Perspective(text, devices: devices)
    } catch {
        throw ValidationError("--as \(error.description).")
    }
}

/// Opens the log read-only and finds a game (or conversation) by id prefix.
struct OpenedGame {
    let store: any EventLogReader
    let replayer: Replayer
    let session: SessionID?
    /// Where the game was forked from, if it is a fork.
    let origin: ForkOrigin?

    init(options: GlobalOptions, id: String) async throws {
        try self.init(store: try await options.openReader(), id: id)
    }

    init(store: any EventLogReader, id: String) throws {
        self.store = store
        let index = try GameIndex(store: store)
        let (conversation, session) = try index.resolve(id)
        self.session = session
        // A damaged event is left out and named, not a reason to show nothing.
        replayer = try Replayer(store: store, conversation: conversation, streams: try index.streams(of: conversation),
                                skippingDamaged: true, games: GamelogCLI.games)
        origin = try store.forkOrigins()[conversation.uuid]
    }

    private init(store: any EventLogReader, replayer: Replayer, session: SessionID?, origin: ForkOrigin?) {
        self.store = store
        self.replayer = replayer
        self.session = session
        self.origin = origin
    }

    /// The game as `perspective` saw it: a device's own events alone, numbered as its
    /// own steps (nothing of the other devices' events shows, not even their count).
    func seen(by perspective: Perspective) -> OpenedGame {
        OpenedGame(store: store, replayer: replayer.seen(by: perspective), session: session, origin: origin)
    }

    /// Says on standard error which damaged events were left out at or before `step`
    /// (the state there may differ from what the devices showed); true if any.
    func reportDamage(through step: Int) -> Bool {
        let damage = replayer.damage(through: step)
        guard let first = damage.first else { return false }
        let positions = damage.compactMap(\.position).map(String.init)
        Terminal.standardError("warning: \(damage.count) damaged event\(damage.count == 1 ? "" : "s") of this game (position\(damage.count == 1 ? "" : "s") \(positions.prefix(5).joined(separator: ", "))) could not be read and \(damage.count == 1 ? "was" : "were") left out, so this state may differ from what the devices showed (\(String(first.description.trimmingSuffix(".")))). `gamelog verify` names every damaged event.")
        return true
    }

    func checkStep(_ step: Int) throws {
        guard (0...replayer.stepCount).contains(step) else {
            throw ValidationError("step \(step) is outside 0...\(replayer.stepCount) for this game.")
        }
    }

    /// `--as`: the auditor or one of the conversation's devices.
    func perspective(_ text: String) throws -> Perspective {
        try parsePerspective(text, devices: replayer.devices)
    }

    /// The steps of the game the id named (the whole conversation for a conversation id).
    func steps() throws -> ClosedRange<Int> {
        let final = try replayer.state(at: replayer.stepCount)
        guard let session, let game = final.games[session] else { return 1...max(1, replayer.stepCount) }
        return game.firstStep...game.lastStep
    }
}

extension String {
    /// The text without `suffix` at its end, if it ends so.
    func trimmingSuffix(_ suffix: String) -> Substring {
        hasSuffix(suffix) ? dropLast(suffix.count) : Substring(self)
    }
}
