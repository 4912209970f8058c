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
    let store: EventStore
    let replayer: Replayer
    let session: SessionID?
    /// Where the game was forked from, if it is a fork.
    let origin: ForkOrigin?

    init(options: GlobalOptions, id: String) throws {
        try self.init(store: try options.openForReading(), id: id)
    }

    init(store: EventStore, id: String) throws {
        self.store = store
        let index = try GameIndex(store: store)
        let (conversation, session) = try index.resolve(id)
        self.session = session
        replayer = try Replayer(store: store, conversation: conversation, streams: try index.streams(of: conversation),
                                games: GamelogCLI.games)
        origin = try store.forkOrigins()[conversation.uuid]
    }

    private init(store: EventStore, replayer: Replayer, session: SessionID?, origin: ForkOrigin?) {
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
