import Foundation
import GameRules
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
    public static func folding(_ conversation: ConversationID, _ events: some Sequence<ReplayEvent>) -> ConversationState {
        var state = ConversationState(conversation: conversation)
        for e in events { state.apply(e) }
        return state
    }

    public mutating func apply(_ e: ReplayEvent) {
        step += 1
        position = e.position
        recordedAt = e.recordedAt
        switch e.event {
        case .recordingStarted(let info):
            kind = info.kind
            deviceOfStream[e.stream.uuidString] = info.device
            // Views are edited in place through the `default:` subscript: reading one
            // out and writing it back copies the whole view on every event.
            devices[info.device, default: DeviceView(device: info.device)].localParticipant = info.localParticipant
            for (id, name) in info.names {
                devices[info.device, default: DeviceView(device: info.device)].names[id.uuid.uuidString] = name
            }
        case .recordingEnded(let context):
            devices[context.device]?.isActive = false
        case .input(let action, let context):
            note(context) { view in
                if case .deleteStaged = action { view.staged = nil }
            }
        case .callback(let record, let context):
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
            switch record.action {
            case .insert(var message):
                message.isPending = true
                message.senderParticipantIdentifier = devices[context.device]?.localParticipant
                devices[context.device]?.staged = .message(message)
                noteStaged(message, device: context.device, position: e.position)
            case .insertText(let text): devices[context.device]?.staged = .text(text)
            case .insertSticker(let sticker): devices[context.device]?.staged = .sticker(sticker)
            case .insertAttachment(let url, let name):
                devices[context.device]?.staged = .attachment(fileURL: url, alternateFilename: name)
            case .send, .sendText, .requestPresentationStyle, .dismiss:
                break
            }
        case .transcript(let change, let context):
            var added: Bubble?
            note(context) { view in
                let bubble: Bubble
                switch change {
                case .sent(let item):
                    view.staged = nil
                    bubble = Bubble(content: .item(item), sender: view.localParticipant ?? ParticipantID(UUID(uuid: UUID_NIL)),
                                    isOutgoing: true)
                case .arrived(let item, let sender):
                    bubble = Bubble(content: .item(item), sender: sender, isOutgoing: false)
                }
                let bubbles = applyingSessionRule(view.transcript.map(\.bubble), adding: bubble)
                // Only new lines and lines the session rule replaced need their text worked out again.
                let old = view.transcript
                view.transcript = bubbles.indices.map { index in
                    index < old.count && old[index].bubble == bubbles[index] ? old[index] : Self.line(bubbles[index], view)
                }
                added = bubble
            }
            if let bubble = added, let message = bubble.message {
                noteTransferred(message, device: context.device, outgoing: bubble.isOutgoing, position: e.position)
            }
        case .screen(let screen, let context):
            note(context)
            devices[context.device]?.screen = screen
            noteScreen(screen, context: context, position: e.position)
        }
    }

    private static func line(_ bubble: Bubble, _ view: DeviceView) -> TranscriptLine {
        let text: String
        switch bubble.content {
        case .summary(let summary, _): text = summary
        case .item(.message(let m)): text = m.caption ?? "message"
        case .item(.text(let t)): text = t
        case .item(.sticker(let s)): text = "sticker \(s.localizedDescription)"
        case .item(.attachment(let url, let name)): text = "attachment \(name ?? url)"
        }
        return TranscriptLine(bubble: bubble, shown: view.resolve(text))
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

    private mutating func game(for session: SessionID, position: Int64) -> GameView {
        if let existing = games[session] { return existing }
        gameOrder.append(session)
        return GameView(session: session, kind: kind, status: .inProgress,
                        battleship: kind == "battleship" ? BattleshipBoard() : nil,
                        tictactoe: kind == "tictactoe" ? TicTacToeBoard() : nil,
                        firstPosition: position, lastPosition: position)
    }

    private mutating func noteStaged(_ message: Message, device: DeviceID, position: Int64) {
        guard let session = message.session else { return }
        sessionOfMessage[message.id] = session
        // A Battleship placement waiting in the input field: the game is being set up.
        if kind == "battleship", games[session] == nil, let url = message.url,
           let model = try? Battleship.GameModel(url: url), !model.isComplete {
            var g = game(for: session, position: position)
            g.status = .placing
            g.battleship?.ships = model.shipLocations
            g.battleship?.placer = device
            games[session] = g
        }
    }

    private mutating func noteTransferred(_ message: Message, device: DeviceID, outgoing: Bool, position: Int64) {
        guard let session = message.session else { return }
        sessionOfMessage[message.id] = session
        guard outgoing || games[session] != nil || kind == "battleship" || kind == "tictactoe" else { return }
        var g = game(for: session, position: position)
        g.lastPosition = position
        if outgoing && !g.messages.contains(message.id) { g.messages.append(message.id) }
        switch kind {
        case "battleship":
            guard let url = message.url, let model = try? Battleship.GameModel(url: url) else { break }
            if !model.isComplete {
                if outgoing {
                    g.status = .inProgress
                    g.battleship?.ships = model.shipLocations
                    g.battleship?.placer = device
                }
            } else if outgoing {
                g.battleship?.guesser = device
                let cells = message.layout?.template.image?.cells ?? []
                g.battleship?.hits = cells.indices.filter { cells[$0] == "hit" }
                g.battleship?.misses = cells.indices.filter { cells[$0] == "miss" }
                g.status = (g.battleship?.hits.count ?? 0) >= Battleship.totalShipCount ? .won : .lost
            } else if device == g.battleship?.placer, g.status == .won || g.status == .lost {
                g.status = .complete
            }
        case "tictactoe":
            guard outgoing, let state = try? TicTacToe.GameState(url: message.url) else { break }
            var board = g.tictactoe ?? TicTacToeBoard()
            board.cells = state.cells
            board.toMove = state.player
            board.winner = state.winner
            board.isDraw = state.isDraw
            if board.x == nil && state.lastMover == TicTacToe.x { board.x = device }
            if board.o == nil && state.lastMover == TicTacToe.o { board.o = device }
            g.tictactoe = board
            g.status = state.winner == TicTacToe.x ? .won : state.winner == TicTacToe.o ? .lost : state.isDraw ? .draw : .inProgress
        default:
            break
        }
        games[session] = g
    }

    private mutating func noteScreen(_ screen: Screen, context: EventContext, position: Int64) {
        // The guesser's taps, live: the ship-destroy screen of a selected placement.
        guard kind == "battleship", screen.name == "shipDestroy", !screen.cells.isEmpty,
              let selected = context.selectedMessage, let session = sessionOfMessage[selected],
              var g = games[session], g.status == .inProgress else { return }
        g.battleship?.hits = screen.cells.indices.filter { screen.cells[$0] == "hit" }
        g.battleship?.misses = screen.cells.indices.filter { screen.cells[$0] == "miss" }
        g.battleship?.guesser = context.device
        g.lastPosition = position
        games[session] = g
    }
}

private let UUID_NIL: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
