import EventStore
import Foundation
import MessagesModel
import Projections
import RecordedEvents
import StoredEvents

/// Which recordings make up each conversation, and which games (sessions) each holds.
///
/// In a log whose catalog covers every event (every log appended by this build), each
/// question is a lookup in the catalog, so it costs the same in a log of any size.
/// In a log written before the catalog existed, the index scans the few event types
/// that name conversations and games, as ``GameIndex/fillCatalog(_:progress:)`` would.
public struct GameIndex {
    private let store: any EventLogReader
    private let scanned: Scanned?

    /// What a scan found: the whole index in memory.
    private struct Scanned {
        var streams: [ConversationID: Set<UUID>] = [:]
        var conversations: [ConversationID] = []
        var sessions: [SessionID: ConversationID] = [:]
        /// Sessions in order of first mention.
        var sessionOrder: [SessionID] = []
    }

    /// Opens the index: nothing is read yet when the catalog is complete; otherwise the
    /// log's catalogued event types are scanned once.
    public init(store: any EventLogReader) throws {
        self.store = store
        if try store.catalogIsComplete() {
            scanned = nil
            return
        }
        var scanned = Scanned()
        var decoder = StreamDecoder(store: store)
        try store.scan(EventQuery(types: RecordedEvent.cataloguedTypes)) { stored in
            let event: RecordedEvent
            do {
                event = try decoder.decode(stream: stored.stream, type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
            } catch {
                throw ReplayError.undecodableEvent(position: stored.position, detail: String(describing: error))
            }
            for tag in event.catalogTags {
                switch tag.kind {
                case .conversation:
                    let conversation = ConversationID(tag.id)
                    if scanned.streams[conversation] == nil { scanned.conversations.append(conversation) }
                    scanned.streams[conversation, default: []].insert(stored.stream)
                default:
                    if let conversation = event.context?.conversation, scanned.sessions[SessionID(tag.id)] == nil {
                        scanned.sessions[SessionID(tag.id)] = conversation
                        scanned.sessionOrder.append(SessionID(tag.id))
                    }
                }
            }
        }
        self.scanned = scanned
    }

    /// The index of a log whose catalog the caller just found complete
    /// (``EventLogReader/catalogIsComplete()``): nothing is read, not even that again.
    package init(catalogued store: any EventLogReader) {
        self.store = store
        scanned = nil
    }

    /// Whether answers come from the catalog (true) or from a scan of the log.
    public var usesCatalog: Bool { scanned == nil }

    /// The recordings (streams) of a conversation. Each catalog row used is checked
    /// against the event it points at, so a row moved to another recording never puts
    /// that recording's events into this conversation.
    public func streams(of conversation: ConversationID) throws -> Set<UUID> {
        if let scanned { return scanned.streams[conversation] ?? [] }
        let entries = try store.catalogEntries(.conversation, id: conversation.uuid)
        try check(entries)
        return Set(entries.map(\.stream))
    }

    /// The catalog's rows that place recordings in `conversation`, not checked yet: for a
    /// reader that reads those recordings whole anyway, and checks the rows against what it
    /// read (``rows(_:agreeWith:)``) instead of reading the events they point at first
    /// (about a fifth of opening a game in a fresh viewer). Nil for an index made by a scan,
    /// whose recordings need no check.
    public func uncheckedRows(of conversation: ConversationID) throws -> [CatalogEntry]? {
        guard scanned == nil else { return nil }
        return try store.catalogEntries(.conversation, id: conversation.uuid)
    }

    /// Whether every row points at an event among `events` (a read of the rows' recordings)
    /// of its own recording that names its id: what ``streams(of:)`` checks, from events in
    /// hand. False if any row's event is not among them; ``streams(of:)`` then names the problem.
    public static func rows(_ entries: [CatalogEntry], agreeWith events: [ReplayEvent]) -> Bool {
        let wanted = Set(entries.map(\.position))
        var at: [Int64: ReplayEvent] = [:]
        for event in events where wanted.contains(event.position) { at[event.position] = event }
        return entries.allSatisfy { entry in
            guard let event = at[entry.position] else { return false }
            return event.stream == entry.stream && event.event.catalogTags.contains(entry.tag)
        }
    }

    /// The recordings of each of `conversations`: one read of the catalog and one of the
    /// events its rows point at, however many conversations (a page of games asks this).
    public func streams(ofConversations conversations: Set<ConversationID>) throws -> [ConversationID: Set<UUID>] {
        if let scanned { return conversations.reduce(into: [:]) { $0[$1] = scanned.streams[$1] ?? [] } }
        let entries = try store.catalogEntries(.conversation, ids: Set(conversations.map(\.uuid)))
        try check(entries)
        var out: [ConversationID: Set<UUID>] = [:]
        for entry in entries { out[ConversationID(entry.tag.id), default: []].insert(entry.stream) }
        return out
    }

    /// Each row must point at an event of its recording that names its id.
    func check(_ entries: [CatalogEntry]) throws {
        var decoder = StreamDecoder(store: store)
        let events = try store.events(atPositions: Set(entries.map(\.position)))
        for entry in entries {
            guard let event = events[entry.position] else {
                throw ReplayError.catalogContradictsEvents(position: entry.position, detail: "no event is there")
            }
            guard event.stream == entry.stream,
                  decoder.catalogTags(stream: event.stream, type: event.type, typeVersion: event.typeVersion, payload: event.payload)
                    .contains(entry.tag) else {
                let what = entry.tag.kind == .game ? "game" : "conversation"
                throw ReplayError.catalogContradictsEvents(position: entry.position, detail:
                    "a row says it names \(what) \(entry.tag.id.uuidString.prefix(8).lowercased()) in recording \(entry.stream.uuidString.prefix(8).lowercased()), and it does not")
            }
        }
    }

    /// The recordings of every conversation.
    public func allStreams() throws -> [ConversationID: Set<UUID>] {
        if let scanned { return scanned.streams }
        var streams: [ConversationID: Set<UUID>] = [:]
        for entry in try store.catalogEntries(.conversation) { streams[ConversationID(entry.tag.id), default: []].insert(entry.stream) }
        return streams
    }

    /// Conversations in order of their first recording.
    public func conversations() throws -> [ConversationID] {
        if let scanned { return scanned.conversations }
        var seen = Set<ConversationID>(), ordered: [ConversationID] = []
        for entry in try store.catalogEntries(.conversation) where seen.insert(ConversationID(entry.tag.id)).inserted {
            ordered.append(ConversationID(entry.tag.id))
        }
        return ordered
    }

    /// Every game (session) and its conversation, in order of the game's first mention.
    public func games() throws -> [(game: SessionID, conversation: ConversationID)] {
        if let scanned {
            return scanned.sessionOrder.compactMap { game in scanned.sessions[game].map { (game, $0) } }
        }
        let conversationOf = try streamConversations()
        var seen = Set<SessionID>(), games: [(SessionID, ConversationID)] = []
        for entry in try store.catalogEntries(.game) where seen.insert(SessionID(entry.tag.id)).inserted {
            if let conversation = conversationOf[entry.stream] { games.append((SessionID(entry.tag.id), conversation)) }
        }
        return games
    }

    /// A page of ``games()``: `limit` games after skipping `offset`, and how many there are.
    /// With the catalog it reads only the page.
    /// - Parameter memo: keeps the page and the count, and answers them again until the log
    ///   changes: each takes the catalog's every row of games (ordering them, counting
    ///   them), about 10 ms at 5,000 games, which a fresh viewer's list pages paid each time.
    public func games(offset: Int, limit: Int, memo: GameSummaryMemo? = nil) throws -> (games: [(game: SessionID, conversation: ConversationID)], total: Int) {
        if scanned != nil {
            let all = try games()
            return (Array(all.dropFirst(offset).prefix(limit)), all.count)
        }
        if let known = memo?.indexPage(offset: offset, limit: limit) { return known }
        let generation = memo?.generation ?? 0
        let total = try memo?.gameListCount ?? store.catalogCount(.game)
        let firsts: [CatalogEntry]
        // Whether the page itself is kept: only where the whole order is not (a list too
        // long to keep whole), since a page is a slice of the order.
        var keepsPage = false
        if let kept = memo?.gameFirsts {
            firsts = Array(kept.dropFirst(offset).prefix(limit))
        } else if let memo, total <= GameSummaryMemo.gameFirstsKept {
            // Ordering the rows is the read's whole cost, whatever the page: the whole list
            // once, then every page a slice of it.
            let all = try store.firstCatalogEntries(.game, offset: 0, limit: GameSummaryMemo.gameFirstsKept)
            memo.keepGameFirsts(all, total: total, asOf: generation)
            firsts = Array(all.dropFirst(offset).prefix(limit))
        } else {
            firsts = try store.firstCatalogEntries(.game, offset: offset, limit: limit)
            keepsPage = true
        }
        // Each game's recording's conversation, for the whole page in one read (rows a memo
        // holds were checked when it kept them).
        var conversationEntry: [UUID: CatalogEntry] = memo?.conversationRows(of: Set(firsts.map(\.stream))) ?? [:]
        let unknown = Set(firsts.map(\.stream)).subtracting(conversationEntry.keys)
        var found: [UUID: CatalogEntry] = [:]
        if !unknown.isEmpty {
            for entry in try store.catalogEntries(ofStreams: unknown) where entry.tag.kind == .conversation {
                if let known = found[entry.stream], known.position <= entry.position { continue }
                found[entry.stream] = entry
            }
            try check(Array(found.values))
            memo?.keepConversationRows(found, asOf: generation)
            conversationEntry.merge(found) { kept, _ in kept }
        }
        let page = firsts.compactMap { entry in conversationEntry[entry.stream].map { (SessionID(entry.tag.id), ConversationID($0.tag.id)) } }
        if keepsPage { memo?.keepIndexPage(page, total: total, offset: offset, limit: limit, asOf: generation) }
        return (page, total)
    }

    private func streamConversations() throws -> [UUID: ConversationID] {
        var conversationOf: [UUID: ConversationID] = [:]
        for entry in try store.catalogEntries(.conversation) { conversationOf[entry.stream] = ConversationID(entry.tag.id) }
        return conversationOf
    }

    /// The conversation of the game (or conversation) whose id starts with `prefix`,
    /// and the game's session when the prefix named one.
    public func resolve(_ prefix: String) throws -> (conversation: ConversationID, game: SessionID?) {
        let needle = prefix.lowercased()
        guard !needle.isEmpty else { throw ReplayError.noSuchGame(prefix) }
        var matches: [(ConversationID, SessionID?)]
        if let scanned {
            matches = scanned.conversations.filter { $0.uuid.uuidString.lowercased().hasPrefix(needle) }.map { ($0, nil) }
            matches += scanned.sessions.filter { $0.key.uuid.uuidString.lowercased().hasPrefix(needle) }
                .sorted { $0.key.uuid.precedes($1.key.uuid) }.map { ($0.value, $0.key) }
        } else {
            guard isUUIDPrefix(needle) else { throw ReplayError.noSuchGame(prefix) }
            matches = Set(try store.catalogEntries(.conversation, idPrefix: needle, limit: 1000).map { ConversationID($0.tag.id) })
                .sorted { $0.uuid.precedes($1.uuid) }.map { ($0, nil) }
            var sessions: [SessionID: ConversationID] = [:]
            let games = try store.catalogEntries(.game, idPrefix: needle, limit: 1000)
            if games.count <= 64 { try check(games) }
            for entry in games where sessions[SessionID(entry.tag.id)] == nil {
                // The game's conversation: that of the recording that named it.
                if let conversation = try conversation(ofStream: entry.stream) { sessions[SessionID(entry.tag.id)] = conversation }
            }
            matches += sessions.sorted { $0.key.uuid.precedes($1.key.uuid) }.map { ($0.value, $0.key) }
        }
        guard let first = matches.first else { throw ReplayError.noSuchGame(prefix) }
        guard Set(matches.map(\.0)).count == 1 else {
            throw ReplayError.ambiguousGame(prefix, candidates: matches.map { ($0.1?.uuid ?? $0.0.uuid).uuidString.lowercased() })
        }
        return (first.0, matches.first { $0.1 != nil }?.1)
    }

    /// Whether the catalog's rows agree that game `session` is in `conversation`, whose
    /// folded events hold it: every row naming its id is a game's, in a recording of that
    /// conversation alone. Only rows are read, not the events they point at: that the
    /// game is there, the fold's events say; that no other conversation names it, the
    /// rows do (what ``resolve(_:)`` would otherwise read and check the events of, about
    /// a quarter of a fresh viewer's game page). False when they say anything else: the
    /// caller resolves through ``resolve(_:)``, which names the problem.
    public func confirm(game session: SessionID, foldedIn conversation: ConversationID) throws -> Bool {
        if let scanned { return scanned.sessions[session] == conversation && scanned.streams[ConversationID(session.uuid)] == nil }
        guard try store.catalogEntries(.conversation, id: session.uuid).isEmpty else { return false }
        let rows = try store.catalogEntries(.game, id: session.uuid)
        guard !rows.isEmpty else { return false }
        let streams = Set(rows.map(\.stream))
        var named: [UUID: Set<UUID>] = [:]
        for entry in try store.catalogEntries(ofStreams: streams) where entry.tag.kind == .conversation {
            named[entry.stream, default: []].insert(entry.tag.id)
        }
        return streams.allSatisfy { named[$0] == [conversation.uuid] }
    }

    private func conversation(ofStream stream: UUID) throws -> ConversationID? {
        guard let entry = try store.catalogEntries(ofStream: stream).first(where: { $0.tag.kind == .conversation }) else { return nil }
        try check([entry])
        return ConversationID(entry.tag.id)
    }

    /// Whether `text` can begin an id as the CLI prints it: hex digits, dashes where a UUID has them.
    private func isUUIDPrefix(_ text: String) -> Bool {
        let template = Array("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")
        guard text.count <= template.count else { return false }
        return zip(text, template).allSatisfy { character, slot in slot == "-" ? character == "-" : character.isHexDigit }
    }
}

extension GameIndex {
    /// Fills the catalog of a log written before it existed (or by an appender without
    /// tags), so that later lookups need no scan. Resumable; a complete catalog is left as it is.
    /// - Returns: the number of events read.
    @discardableResult
    public static func fillCatalog(_ store: EventStore, progress: ((Int64, Int64) -> Void)? = nil) throws -> Int {
        var decoder = StreamDecoder(store: store)
        return try store.fillCatalog(types: RecordedEvent.cataloguedTypes, progress: progress) { stored in
            decoder.catalogTags(stream: stored.stream, type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
        }
    }
}
