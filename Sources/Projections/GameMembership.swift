import Foundation
import MessagesModel
import RecordedEvents

/// Which events of a conversation belong to which of its games, the one way `games`,
/// `log --game`, `state`, the viewer and `verify GAME` count them: an event that carries
/// one of a game's messages or has one selected is that game's; so is every other event of
/// an extension's activation (from willBecomeActive to didResignActive, on one recording)
/// in which one of the game's events happened, such as the taps that made its first move.
/// An event of another game stays that game's, whatever activation it falls in.
///
/// Events named for a game are its own at once; an activation's other events join the
/// games it touched when it ends (or, for a recording that stops inside one, at the end of
/// the log: ``pending(for:)``).
public struct GameMembership: Hashable, Codable, Sendable {
    /// One recording's activation under way.
    struct Activation: Hashable, Codable, Sendable {
        /// Its events that name no game.
        var unnamed: [Int64] = []
        /// The games its events named (one or two: a list beats a set).
        var touched: [SessionID] = []

        mutating func touch(_ games: SmallList<SessionID>) {
            games.forEach { game in if !touched.contains(game) { touched.append(game) } }
        }

        /// Its unnamed events, to each game it touched.
        func give(_ add: (SessionID, Int64) -> Void) {
            for game in touched {
                for position in unnamed { add(game, position) }
            }
        }
    }

    /// By recording (stream id).
    private var open: [UUID: Activation] = [:]

    public init() {}

    /// The games `event` names, each once: those of the messages it carries and of the
    /// message selected when it happened; nil when it names none. Asked of every event a
    /// fold applies, so it builds no set, and its lists hold two inline: an event names
    /// one game and carries one message, nearly always (two arrays an event were a
    /// twentieth of a full replay's allocations).
    static func games(namedBy event: RecordedEvent, sessionOf: (MessageID) -> SessionID?) -> SmallList<SessionID>? {
        var carried = SmallList<CarriedMessage>()
        event.forEachCarriedMessage { message, _ in carried.append(CarriedMessage(id: message.id, session: message.session)) }
        let selected = event.context?.selectedMessage
        guard !carried.isEmpty || selected != nil else { return nil }
        var named = SmallList<SessionID>()
        carried.forEach { message in
            if let session = message.session { named.appendIfAbsent(session) }
            if let session = sessionOf(message.id) { named.appendIfAbsent(session) }
        }
        if let selected, let session = sessionOf(selected) { named.appendIfAbsent(session) }
        return named
    }

    struct CarriedMessage: Equatable {
        var id: MessageID
        var session: SessionID?
    }

    /// Notes the next event of the conversation, once the fold knows its messages'
    /// sessions; `add` is called with each game and each position the event gives it.
    public mutating func note(_ e: ReplayEvent, sessionOf: (MessageID) -> SessionID?, adding add: (SessionID, Int64) -> Void) {
        let callback: Callback?
        if case .callback(let record, _) = e.event { callback = record.callback } else { callback = nil }
        note(e, callback: callback, sessionOf: sessionOf, adding: add)
    }

    /// ``note(_:sessionOf:adding:)`` for a fold that has already read the event's callback
    /// (nil: not a callback): reading it again copied the whole record out of the event.
    mutating func note(_ e: ReplayEvent, callback: Callback?, sessionOf: (MessageID) -> SessionID?,
                       adding add: (SessionID, Int64) -> Void) {
        let named = Self.games(namedBy: e.event, sessionOf: sessionOf)
        named?.forEach { add($0, e.position) }
        if callback == .willBecomeActive {
            // An activation that never ended (the app was killed) still belongs to its games.
            close(e.stream, add)
            open[e.stream] = Activation()
        }
        // Edited through its index: one lookup, not three.
        guard let index = open.index(forKey: e.stream) else { return }
        if let named { open.values[index].touch(named) } else { open.values[index].unnamed.append(e.position) }
        if callback == .didResignActive { close(e.stream, add) }
    }

    private mutating func close(_ stream: UUID, _ add: (SessionID, Int64) -> Void) {
        open.removeValue(forKey: stream)?.give(add)
    }

    /// The positions activations still open give each game they touched: what a
    /// recording that stops inside an activation adds at the end of the log.
    public func pending(_ add: (SessionID, Int64) -> Void) {
        for activation in open.values { activation.give(add) }
    }

    /// How many events open activations will give `game`.
    func pending(for game: SessionID) -> Int {
        open.values.reduce(0) { $0 + ($1.touched.contains(game) ? $1.unnamed.count : 0) }
    }
}

extension ConversationState {
    /// A game's events as `games` counts them and `log --game` lists them, the log ending
    /// here: those counted so far and those of its activations still open.
    public func eventCount(ofGame session: SessionID) -> Int {
        (games[session]?.events ?? 0) + membership.pending(for: session)
    }
}

/// A list that holds its first two elements inline and the rest in an array: most of the
/// fold's lists of an event's games and messages hold one.
struct SmallList<Element: Equatable> {
    private var first: Element?
    private var second: Element?
    private var rest: [Element] = []

    init() {}

    var isEmpty: Bool { first == nil }

    mutating func append(_ element: Element) {
        if first == nil { first = element } else if second == nil { second = element } else { rest.append(element) }
    }

    mutating func appendIfAbsent(_ element: Element) {
        guard !contains(element) else { return }
        append(element)
    }

    func contains(_ element: Element) -> Bool {
        first == element || second == element || rest.contains(element)
    }

    func forEach(_ body: (Element) throws -> Void) rethrows {
        guard let first else { return }
        try body(first)
        guard let second else { return }
        try body(second)
        for element in rest { try body(element) }
    }
}
