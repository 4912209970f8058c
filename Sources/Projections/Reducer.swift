import Foundation
import GameKit
import MessagesModel
import RecordedEvents

extension ConversationState {
    /// The projection reducer: the state after one more event. Pure.
    public func applying(_ e: ReplayEvent) -> ConversationState {
        var next = self
        next.apply(e)
        return next
    }

    /// Folds events into a fresh state.
    @inlinable
    public static func folding(_ conversation: ConversationID, _ events: some Sequence<ReplayEvent>,
                               games: GameRegistry) -> ConversationState {
        // Inlinable so that a caller's sequence (an array, mostly) is iterated as itself,
        // not through generic metadata looked up for every event.
        var state = ConversationState(conversation: conversation, games: games)
        for e in events { state.apply(e) }
        return state
    }

    /// Applies one event and returns what it told the conversation's game: the
    /// events an auditor's legality checker reads.
    @discardableResult
    public mutating func apply(_ e: ReplayEvent) -> [GameEvent] {
        step += 1
        position = e.position
        recordedAt = e.recordedAt
        var told: [GameEvent] = []
        var callback: Callback?
        switch e.event {
        case .recordingStarted(let info):
            kind = info.kind
            deviceOfStream[e.stream.hyphenatedString] = info.device
            // Views are edited in place through the `default:` subscript: reading one
            // out and writing it back copies the whole view on every event.
            devices[info.device, default: DeviceView(device: info.device)].localParticipant = info.localParticipant
            for (id, name) in info.names {
                devices[info.device, default: DeviceView(device: info.device)].names[id.uuid.hyphenatedString] = name
            }
            if let owner = info.names[info.localParticipant] { recordedPlayers.insert(owner) }
            for member in [info.localParticipant] + info.remoteParticipants {
                if let name = info.names[member] { participants.insert(name) }
            }
        case .recordingEnded(let context):
            editView(context.device) { $0.isActive = false }
        case .input(let action, let context):
            note(context)
            switch action {
            case .deleteStaged:
                if case .message(let message)? = inView(context.device, \.staged) { abandon(message, .deleted) }
                editView(context.device) { $0.staged = nil }
            case .touch(let touch):
                told.append(.touch(TouchSighting(touch: touch, device: context.device, player: owner(of: context.device))))
            default:
                break
            }
        case .callback(let record, let context):
            callback = record.callback
            note(context) { view in
                switch record.callback {
                case .willBecomeActive, .didBecomeActive: view.isActive = true
                case .didResignActive: view.isActive = false
                case .didTransition: if let style = record.style { view.style = style }
                case .didSelect: view.selectedMessage = record.message?.id
                default: break
                }
            }
        case .action(let record, let context):
            note(context)
            guard record.error == nil else { break }
            let replaced = inView(context.device, \.staged)
            switch record.action {
            case .insert(var message):
                message.isPending = true
                message.senderParticipantIdentifier = inView(context.device, \.localParticipant)
                editView(context.device) { $0.staged = .message(message) }
                told += noteMessage(message, route: .staged, device: context.device, sender: owner(of: context.device), e)
            case .insertText(let text): editView(context.device) { $0.staged = .text(text) }
            case .insertSticker(let sticker): editView(context.device) { $0.staged = .sticker(sticker) }
            case .insertAttachment(let url, let name):
                editView(context.device) { $0.staged = .attachment(fileURL: url, alternateFilename: name) }
            case .send(var message):
                // A direct send is the extension's call; its `transcript.sent` follows (on a
                // phone, and in logs recorded since 0.19; older logs have it first). The
                // message joins its game from the call, as an inserted one does, and the
                // input field keeps what it held.
                guard !seenMessages.contains(message.id) else { break }
                message.isPending = true
                message.senderParticipantIdentifier = inView(context.device, \.localParticipant)
                told += noteMessage(message, route: .staged, device: context.device, sender: owner(of: context.device), e)
            case .sendText, .sendSticker, .sendAttachment, .requestPresentationStyle, .dismiss:
                break
            }
            // An unsent game message pushed out of the input field by another insert.
            if case .message(let old)? = replaced, inView(context.device, \.staged)?.message?.id != old.id { abandon(old, .replaced) }
        case .transcript(let change, let context):
            var added: Bubble?
            note(context) { view in
                let bubble: Bubble
                switch change {
                case .sent(let item):
                    // Tapping Send empties the input field; iOS 11's send variants go
                    // straight to the transcript and leave what is staged there.
                    if let staged = view.staged, Self.isSending(staged, item) { view.staged = nil }
                    bubble = Bubble(content: .item(item), sender: view.localParticipant ?? ParticipantID(UUID(uuid: UUID_NIL)),
                                    isOutgoing: true)
                case .arrived(let item, let sender):
                    bubble = Bubble(content: .item(item), sender: sender, isOutgoing: false)
                }
                // The session rule in place: only the lines it replaces and the new one need
                // their text worked out.
                // (Each line's session is looked at in place: taking each line's message out
                // to compare copied every field of it, at every transcript event.)
                if let session = bubble.messageSession {
                    for index in view.transcript.indices where view.transcript[index].bubble.messageSession == session {
                        if let replaced = sessionRuleReplacement(of: view.transcript[index].bubble, adding: bubble) {
                            view.transcript[index] = Self.line(replaced, view)
                        }
                    }
                }
                view.transcript.append(Self.line(bubble, view))
                added = bubble
            }
            if let bubble = added, let message = bubble.message {
                let sender = bubble.isOutgoing ? owner(of: context.device)
                    : inView(context.device) { $0.names[bubble.sender.uuid.hyphenatedString] }
                told += noteMessage(message, route: bubble.isOutgoing ? .sent : .arrived, device: context.device, sender: sender, e)
            }
        case .screen(let screen, let context):
            note(context)
            editView(context.device) { $0.screen = screen }
            let sighting = ScreenSighting(screen: screen, device: context.device, player: owner(of: context.device),
                                          selectedMessage: context.selectedMessage)
            told.append(.screen(sighting))
            // The screen of a game's selected message is part of that game (a guesser's live taps).
            if let selected = context.selectedMessage, let session = sessionOfMessage[selected], games[session] != nil {
                update(session, e) { plugin, board in plugin.reduce(&board, .screen(sighting)) }
            }
        }
        countForGames(e, callback: callback)
        return told
    }

    /// Counts the event for the games it belongs to (once the fold above knows its messages).
    private mutating func countForGames(_ e: ReplayEvent, callback: Callback?) {
        // Taken out while it notes the event, so the count below may change the games.
        var noted = membership
        membership = GameMembership()
        let sessions = sessionOfMessage
        noted.note(e, callback: callback, sessionOf: { sessions[$0] }) { game, _ in
            if let index = games.index(forKey: game) { games.values[index].events += 1 }
        }
        membership = noted
    }

    /// Whether `sent` is the staged item leaving the input field (a message keeps its
    /// identity; the host stamps it as no longer pending, and with an error if it failed).
    static func isSending(_ staged: Item, _ sent: Item) -> Bool {
        if let message = staged.message { return sent.message?.id == message.id }
        return staged == sent
    }

    private static func line(_ bubble: Bubble, _ view: DeviceView) -> TranscriptLine {
        let text: String
        switch bubble.content {
        case .summary(let summary, _): text = summary
        case .item(let item): text = item.plainText
        }
        return TranscriptLine(bubble: bubble, shown: view.resolve(text))
    }

    private func owner(of device: DeviceID) -> String? { inView(device, \.ownerName) }

    /// Edits a device's view where it is stored, if it has one. (`devices[device]?.x = y`
    /// took the view out through accessors whose frames, holding the whole view, were
    /// allocated on the heap: two or three allocations an event, a sixth of a full replay's.)
    private mutating func editView(_ device: DeviceID, _ change: (inout DeviceView) -> Void) {
        guard let index = devices.index(forKey: device) else { return }
        change(&devices.values[index])
    }

    /// What `read` takes from a device's view, read where it is stored (`devices[device]?.x`
    /// copied the whole view out first, retaining its transcript, names and screen).
    private func inView<T>(_ device: DeviceID, _ read: (DeviceView) -> T?) -> T? {
        guard let index = devices.index(forKey: device) else { return nil }
        return read(devices.values[index])
    }

    /// Records what the event's context says of its device, then lets `change` edit
    /// that device's view, in place.
    private mutating func note(_ context: EventContext, then change: (inout DeviceView) -> Void = { _ in }) {
        func update(_ view: inout DeviceView) {
            view.style = context.style
            view.isActive = context.isActive
            view.selectedMessage = context.selectedMessage
            change(&view)
        }
        update(&devices[context.device, default: DeviceView(device: context.device)])
    }

    // MARK: Games

    /// A message staged, sent or arrived: it joins its session's game (a game
    /// message starts one), and the game's plug-in folds it in.
    private mutating func noteMessage(_ message: Message, route: GameMessage.Route, device: DeviceID, sender: String?,
                                      _ e: ReplayEvent) -> [GameEvent] {
        guard let session = message.session else { return [] }
        sessionOfMessage[message.id] = session
        let first = route != .staged && seenMessages.insert(message.id).inserted
        let resend = route == .sent && !sentMessages.insert(message.id).inserted
        let seen = GameMessage(message: message, route: route, device: device, sender: sender, viewer: owner(of: device),
                               senderRecorded: route != .arrived || sender.map((knownRecordedPlayers ?? recordedPlayers).contains) == true,
                               isFirstSighting: first, isResend: resend)
        if games.index(forKey: session) == nil {
            // A kind no registered plug-in has: its sessions are still games, listed as
            // unknown rather than left out.
            let board: AnyBoard
            if let plugin {
                guard plugin.isGameMessage(message) else { return [.message(seen)] }
                board = plugin.makeBoard()
            } else {
                guard !kind.isEmpty else { return [.message(seen)] }
                board = AnyBoard(kind: kind, UnregisteredBoard())
            }
            gameOrder.append(session)
            games[session] = GameView(session: session, kind: kind, status: route == .staged ? .staged : .inProgress,
                                      board: board, firstStep: step, lastStep: step,
                                      firstPosition: e.position, lastPosition: e.position,
                                      startedAt: e.recordedAt, endedAt: e.recordedAt)
        }
        if route != .staged, let index = games.index(forKey: session), !games.values[index].messages.contains(message.id) {
            games.values[index].messages.append(message.id)
        }
        update(session, e) { plugin, board in plugin.reduce(&board, .message(seen)) }
        return [.message(seen)]
    }

    /// Lets the game's plug-in change its board, then reads where the game stands.
    private mutating func update(_ session: SessionID, _ e: ReplayEvent, _ change: (any GamePlugin, inout AnyBoard) -> Void) {
        // Edited where it is stored: a copy taken out and written back would share the
        // board with the dictionary, and the plug-in's change would copy its arrays.
        guard let index = games.index(forKey: session) else { return }
        let step = self.step, plugin = self.plugin
        Self.edit(&games.values[index]) { game in
            game.lastStep = step
            game.lastPosition = e.position
            game.endedAt = e.recordedAt
            guard let plugin else {
                // Unknown kind: where it stands is unknown too; it has been sent once a message went.
                if !game.messages.isEmpty { game.status = .inProgress }
                return
            }
            change(plugin, &game.board)
            // A game counts from its first message sent or received.
            if !game.messages.isEmpty {
                switch plugin.progress(of: game.board) {
                case .inProgress:
                    game.status = .inProgress
                    game.winner = nil
                case .finished(let winner):
                    game.status = .finished
                    game.winner = winner
                }
            }
        }
    }

    private static func edit(_ game: inout GameView, _ body: (inout GameView) -> Void) { body(&game) }

    /// A game whose only message left the input field unsent is abandoned.
    private mutating func abandon(_ message: Message, _ how: GameView.Abandonment) {
        guard let session = message.session, var game = games[session], game.status == .staged, game.messages.isEmpty
        else { return }
        game.status = .abandoned
        game.abandonment = how
        game.lastStep = step
        game.lastPosition = position
        game.endedAt = recordedAt
        games[session] = game
    }
}

private extension Bubble {
    /// The session of the message it shows, if it shows one.
    var messageSession: SessionID? {
        guard case .item(.message(let message)) = content else { return nil }
        return message.session
    }
}

private let UUID_NIL: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
