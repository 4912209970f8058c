import EventStore
import Foundation
import GameKit
import MessagesModel
import Projections
import RecordedEvents

/// A game as `gamelog games` lists it.
public struct GameSummary: Hashable, Codable, Sendable {
    /// The game's id: its session.
    public var id: String
    public var kind: String
    /// The game's name, e.g. `Battleship`.
    public var title: String
    public var conversation: String
    /// The devices whose recordings the log holds.
    public var devices: [String]
    /// Player names, by device.
    public var players: [String: String]
    /// Participants whose device's recording is not in this log, by name.
    public var missingRecordings: [String]
    public var status: String
    /// The winner's name, once finished (none for a draw).
    public var winner: String?
    /// A sentence saying how it ended (or stands).
    public var result: String
    /// Events of the conversation from the game's first to its latest.
    public var events: Int
    public var firstPosition: Int64
    public var lastPosition: Int64
    public var startedAt: String
    public var endedAt: String
    /// For a fork: the game it branched from and at which step.
    public var forkedFrom: ForkOrigin?
}

/// Every game in the log, from one ``FullReplay`` pass: the summaries of the games,
/// and which recordings and how many events each conversation has.
public struct GameCatalog {
    /// Every game, in order of first appearance.
    public private(set) var games: [GameSummary] = []
    /// The recordings (streams) of each conversation.
    public private(set) var streams: [ConversationID: Set<UUID>] = [:]
    /// Events in each conversation.
    public private(set) var eventCounts: [ConversationID: Int] = [:]
    /// The extension kind of each conversation.
    public private(set) var kinds: [ConversationID: String] = [:]
    /// What the pass did.
    public private(set) var statistics = FullReplay.Statistics()
    public var mostOpenConversations: Int { statistics.mostOpenConversations }
    public var reorderedConversations: Int { statistics.reorderedConversations }
    @available(*, deprecated, renamed: "reorderedConversations")
    public var refoldedConversations: Int { statistics.reorderedConversations }

    /// Folds the whole log once.
    /// - Parameters:
    ///   - games: the games whose boards are folded.
    ///   - verify: check the hash chain while reading (as `scan` does).
    ///   - progress: called now and then with the events read so far.
    /// - Parameter damaged: called with each event that cannot be read; the pass goes
    ///   on without it. Without it, the first such event stops the pass.
    /// - Parameter perspective: whose view: a device's lists only the games its own
    ///   recordings show, as it knew them.
    /// - Parameter found: called with each conversation's games as soon as it is folded
    ///   (in the order conversations end in the log), for a reader that shows them while
    ///   the pass goes on.
    /// - Parameter outlined: called with each conversation's steps and devices as a
    ///   replayer of all its events counts them, where the pass knows them (the auditor's
    ///   pass, for conversations it kept the events of: all but in a log too large to).
    public init(store: EventStore, verify: Bool = true, games registry: GameRegistry, progress: ((Int) -> Void)? = nil,
                skippingDamaged damaged: ((Error) -> Void)? = nil, as perspective: Perspective = .auditor,
                found: (([GameSummary]) -> Void)? = nil,
                outlined: ((ConversationID, GameSummaryMemo.Outline) -> Void)? = nil) throws {
        var games: [GameSummary] = [], streams: [ConversationID: Set<UUID>] = [:]
        var eventCounts: [ConversationID: Int] = [:], kinds: [ConversationID: String] = [:]
        let origins = try store.forkOrigins()
        statistics = try FullReplay.run(store: store, verify: verify, games: registry, progress: progress,
                                          skippingDamaged: damaged, as: perspective) { done in
            let conversation = done.state.conversation
            streams[conversation] = done.streams
            eventCounts[conversation] = done.events
            kinds[conversation] = done.state.kind
            if perspective == .auditor, let devices = done.devices {
                outlined?(conversation, GameSummaryMemo.Outline(steps: done.events, devices: devices))
            }
            // A device's view holds only that device: conversations it was not in list no game.
            if case .device(let device) = perspective, done.state.devices[device] == nil { return }
            let summaries = Self.summaries(of: done.state, origin: origins[conversation.uuid])
            games += summaries
            found?(summaries)
        }
        self.games = games.sorted { $0.firstPosition < $1.firstPosition }
        self.streams = streams
        self.eventCounts = eventCounts
        self.kinds = kinds
    }

    /// The games of one folded conversation.
    public static func summaries(of state: ConversationState, origin: ForkOrigin? = nil) -> [GameSummary] {
        var players: [String: String] = [:]
        for view in state.orderedDevices {
            if let name = view.ownerName { players[view.device.name] = name }
        }
        return state.orderedGames.map { game in
            GameSummary(
                id: game.session.uuid.uuidString.lowercased(), kind: game.kind,
                title: state.plugin?.title ?? "\(game.kind) (not registered here)",
                conversation: state.conversation.uuid.uuidString.lowercased(),
                devices: state.orderedDevices.map(\.device.name), players: players,
                missingRecordings: state.missingRecordings,
                status: game.status.rawValue, winner: game.winner, result: result(game, in: state),
                events: state.eventCount(ofGame: game.session), firstPosition: game.firstPosition, lastPosition: game.lastPosition,
                startedAt: Timestamp(microsecondsSince1970: game.startedAt).description,
                endedAt: Timestamp(microsecondsSince1970: game.endedAt).description, forkedFrom: origin)
        }
    }

    /// A sentence on how a game ended or stands.
    public static func result(_ game: GameView, in state: ConversationState) -> String {
        switch game.status {
        case .staged: return "not sent yet: its first message waits in an input field"
        case .abandoned:
            return game.abandonment == .replaced ? "abandoned: its first message was replaced in the input field by another before it was sent"
                : "abandoned: its first message was deleted before it was sent"
        case .inProgress, .finished:
            return state.plugin?.result(of: game.board)
                ?? "unknown: kind \(game.kind) is not registered in this gamelog, so its moves and winner are not read"
        }
    }
}

/// One page of the game list, and how many games there are in all.
public struct GamePage: Sendable {
    public var games: [GameSummary]
    /// Games in the log (for a device's view: games in the log, some of which that device may not have seen).
    public var total: Int
    /// The page's first game, counted from 0 among all games.
    public var offset: Int

    public init(games: [GameSummary], total: Int, offset: Int) {
        self.games = games
        self.total = total
        self.offset = offset
    }
}

extension GameCatalog {
    /// Every game, page after page of the catalog (``page(store:games:offset:limit:as:lanes:memo:storedSummaries:skippingDamaged:)``):
    /// the whole list of a store whose catalog is complete, with a page's conversations in
    /// memory at a time rather than a fold of the whole log.
    public static func everyGame(store: any EventLogReader, games registry: GameRegistry, as perspective: Perspective = .auditor, lanes: Int = 1,
                                 storedSummaries: Bool = true,
                                 skippingDamaged damaged: ((EventStoreError) -> Void)? = nil) throws -> [GameSummary] {
        var every: [GameSummary] = [], offset = 0
        let size = 500
        while true {
            let next = try page(store: store, games: registry, offset: offset, limit: size, as: perspective, lanes: lanes,
                                storedSummaries: storedSummaries, skippingDamaged: damaged)
            every += next.games
            offset += size
            if offset >= next.total { return every }
        }
    }

    /// A page of the game list. With a complete catalog only the conversations of the
    /// page's games are folded, so a page costs the same in a log of any size; without
    /// one the whole log is folded once and the page cut from it.
    /// - Parameters:
    ///   - offset: how many games to skip, in order of each game's first mention.
    ///   - limit: the most games to list.
    ///   - lanes: the page's conversations are split among this many threads, each reading
    ///     on a reader of its own (`store`, then ``SignedLogReader/anotherReader()``s of it):
    ///     a command alone on a machine lists a page sooner; a server, whose requests share
    ///     the cores already, keeps one. A page of fewer than 8 conversations a lane, or a
    ///     reader that is not a `SignedLogReader`, is read in fewer.
    ///   - memo: conversations folded before, as `perspective` sees them: those are not
    ///     read again, and the ones this page folds are kept in it.
    ///   - damaged: called with each event of the page's games that cannot be read; the
    ///     game is folded without it. Without it, such an event fails the page.
    ///   - storedSummaries: the auditor's page takes a conversation's games from the
    ///     store's summaries (``StoredSummaries``, a shared store's cache) when they are in
    ///     this code's format and current, instead of folding its events; false folds every
    ///     conversation. Damage in a conversation read from its summary is not seen here
    ///     (`verify` reads every event, and names a summary that differs from them).
    public static func page(store: any EventLogReader, games registry: GameRegistry, offset: Int, limit: Int,
                            as perspective: Perspective = .auditor, lanes: Int = 1, memo: GameSummaryMemo? = nil,
                            storedSummaries: Bool = true,
                            skippingDamaged damaged: ((EventStoreError) -> Void)? = nil) throws -> GamePage {
        guard try store.catalogIsComplete() else {
            guard let file = store as? EventStore else { throw ReplayError.incompleteCatalog(location: store.location) }
            let all = try GameCatalog(store: file, games: registry, as: perspective).games
            return GamePage(games: Array(all.dropFirst(offset).prefix(limit)), total: all.count, offset: offset)
        }
        let index = GameIndex(catalogued: store)
        let (wanted, total) = try index.games(offset: offset, limit: limit, memo: memo)
        let origins = try store.forkOrigins()
        // The page's games by the conversation the catalog places each in: every path below
        // lists a conversation's own games alone (a forged summary naming another
        // conversation's game does not list it twice).
        let wantedIn = wanted.reduce(into: [ConversationID: Set<String>]()) { $0[$1.conversation, default: []].insert($1.game.uuid.uuidString.lowercased()) }
        // Conversations folded before (by an earlier page or a whole pass) are not read again.
        let memoAsOf = memo?.generation ?? 0
        var conversations: [ConversationID] = []
        var seen = Set<ConversationID>()
        var listedGames: [GameSummary] = []
        for (_, conversation) in wanted where seen.insert(conversation).inserted {
            if let known = memo?.summaries(of: conversation) {
                listedGames += known.filter { wantedIn[conversation]?.contains($0.id) == true }
            } else {
                conversations.append(conversation)
            }
        }
        let streamsOf = try index.streams(ofConversations: Set(conversations))
        if storedSummaries && perspective == .auditor {
            // A stored summary is the fold of the very recordings the store holds now: 50 rows
            // instead of the ~11,000 events of a page's conversations.
            let stored = try currentStoredSummaries(store, conversations: conversations, streamsOf: streamsOf, games: registry)
            for (conversation, body) in stored {
                let all = body.games.map { game in
                    var game = game
                    game.forkedFrom = origins[conversation.uuid]
                    return game
                }
                memo?.keep(all, of: conversation, asOf: memoAsOf, folded: false)
                memo?.keep(GameSummaryMemo.Outline(steps: body.steps, devices: body.devices), of: conversation, asOf: memoAsOf)
                listedGames += all.filter { wantedIn[conversation]?.contains($0.id) == true }
            }
            conversations.removeAll { stored[$0] != nil }
        }
        // A cold reader spends most of a page decoding and folding, one core's work a lane.
        // A reader that cannot be opened is a lane fewer.
        let others = store is SignedLogReader ? min(lanes, conversations.count / Self.conversationsPerLane) - 1 : 0
        let readers = PageReaders([store] + (0..<max(0, others)).compactMap { _ in try? (store as! SignedLogReader).anotherReader() })
        let lanes = readers.readers.count
        let shares = (0..<lanes).map { lane in Array(conversations[(conversations.count * lane / lanes)..<(conversations.count * (lane + 1) / lanes)]) }
        let outcomes = PageOutcomes(lanes: lanes)
        let skipping = damaged != nil
        let work = { @Sendable (lane: Int, reader: Int) in
            outcomes.set(lane, Result {
                var damage: [EventStoreError] = []
                let eventsOf = try Replayer.load(from: readers.readers[reader], conversations: shares[lane].reduce(into: [:]) { $0[$1] = streamsOf[$1] ?? [] },
                                                 skippingDamaged: skipping ? { damage.append($0) } : nil)
                var listed: [GameSummary] = []
                for conversation in shares[lane] {
                    let replayer = Replayer(conversation: conversation, events: eventsOf[conversation] ?? [], games: registry)
                    let state = try replayer.state(at: replayer.stepCount, as: perspective)
                    let all = {
                        if case .device(let device) = perspective, state.devices[device] == nil { return [GameSummary]() }
                        return summaries(of: state, origin: origins[conversation.uuid])
                    }()
                    memo?.keep(all, of: conversation, asOf: memoAsOf)
                    if perspective == .auditor {
                        memo?.keep(GameSummaryMemo.Outline(steps: replayer.stepCount, devices: replayer.devices), of: conversation, asOf: memoAsOf)
                    }
                    listed += all.filter { wantedIn[conversation]?.contains($0.id) == true }
                }
                return (listed, damage)
            })
        }
        if !conversations.isEmpty {
            if lanes == 1 { work(0, 0) } else { DispatchQueue.concurrentPerform(iterations: lanes) { work($0, $0) } }
        }
        for lane in 0..<lanes where !conversations.isEmpty {
            // A lane whose own reader failed (its connection was refused: a server at its
            // limit) is read again on the first: a page never fails for want of a second
            // connection. What failed for its events fails again there, and is thrown.
            if lane > 0, (try? outcomes.get(lane)) == nil { work(lane, 0) }
            let (listed, damage) = try outcomes.get(lane)
            listedGames += listed
            // Named in the page's order, whichever lane finished first.
            for error in damage { damaged?(error) }
        }
        return GamePage(games: listedGames.sorted { $0.firstPosition < $1.firstPosition }, total: total, offset: offset)
    }

    /// A lane's fewest conversations.
    static let conversationsPerLane = 8
}

/// The games of conversations already folded, for pages that ask for them again: a
/// server's pages fold each conversation once, not once a request. Summaries as one
/// perspective sees them (a memo per perspective). Bounded by the log: a conversation's
/// games, a few hundred bytes each.
public final class GameSummaryMemo: @unchecked Sendable {
    private let lock = NSLock()
    private var summaries: [ConversationID: [GameSummary]] = [:]
    private var outlines: [ConversationID: Outline] = [:]
    private var changes = 0
    /// Pages of the catalog's game list (``GameIndex/games(offset:limit:memo:)``) where
    /// the list is too long to keep its order whole (``gameFirstsKept``), and how many
    /// games it lists, read since the log last changed.
    private var indexPages: [IndexPageKey: [(game: SessionID, conversation: ConversationID)]] = [:]
    private var gameCount: Int?
    private struct IndexPageKey: Hashable { var offset, limit: Int }
    /// Each game a fold found, by its id: the conversation whose events hold it (nil
    /// inside: two conversations' did).
    private var foldedGames: [String: ConversationID?] = [:]
    /// At about 2 KB a page, the most kept at once (then they are dropped and read again).
    static let indexPagesKept = 1024
    /// The catalog's first row of every game, in the list's order, when it lists at most
    /// ``gameFirstsKept`` games (about 100 bytes each).
    private var firsts: [CatalogEntry]?
    static let gameFirstsKept = 1 << 18
    /// Each recording's first row naming its conversation, checked against its event.
    private var conversationRowOf: [UUID: CatalogEntry] = [:]
    /// About 100 bytes each; past it they are dropped and read again.
    static let conversationRowsKept = 1 << 18

    /// A conversation's steps and devices as a replayer of all its events counts them
    /// (what a game's page and `/api/games/ID` show beside its games).
    public struct Outline: Hashable, Sendable {
        public var steps: Int
        public var devices: [DeviceID]
        public init(steps: Int, devices: [DeviceID]) {
            self.steps = steps
            self.devices = devices
        }
    }

    public init() {}

    /// Counts ``forget(_:)``s: a fold read before one is not kept after it.
    public var generation: Int { lock.withLock { changes } }

    /// How many conversations it holds.
    public var count: Int { lock.withLock { summaries.count } }

    /// The games of `conversation`, if it was folded since it last changed.
    public func summaries(of conversation: ConversationID) -> [GameSummary]? {
        lock.withLock { summaries[conversation] }
    }

    /// Keeps the games of `conversation` folded from what the log held at `generation`
    /// (read before the fold began); a fold older than a ``forget(_:)`` is dropped.
    /// - Parameter folded: whether the games were found by folding the conversation's
    ///   events (false: taken from a store's stored summaries, which only a check of the
    ///   events vouches for). The games of a fold are where ``conversation(foldedWithGame:)``
    ///   finds them.
    public func keep(_ games: [GameSummary], of conversation: ConversationID, asOf generation: Int, folded: Bool = true) {
        lock.withLock {
            guard changes == generation else { return }
            summaries[conversation] = games
            guard folded else { return }
            for game in games {
                let id = game.id.lowercased()
                // A game found in two conversations' events is left to the catalog, which names it ambiguous.
                if let other = foldedGames[id], other != conversation { foldedGames[id] = .some(nil) } else { foldedGames[id] = conversation }
            }
        }
    }

    /// The conversation whose folded events hold the game `id` (lower case), if one fold
    /// found it and no other did.
    public func conversation(foldedWithGame id: String) -> ConversationID? {
        lock.withLock { foldedGames[id] ?? nil }
    }

    /// The steps and devices of `conversation`, if it was folded whole since it last changed.
    public func outline(of conversation: ConversationID) -> Outline? {
        lock.withLock { outlines[conversation] }
    }

    /// Keeps the outline of `conversation` read at `generation` (see ``keep(_:of:asOf:)``).
    public func keep(_ outline: Outline, of conversation: ConversationID, asOf generation: Int) {
        lock.withLock { if changes == generation { outlines[conversation] = outline } }
    }

    /// A page of the catalog's game list and the count of games, if read since the log last changed.
    func indexPage(offset: Int, limit: Int) -> (games: [(game: SessionID, conversation: ConversationID)], total: Int)? {
        lock.withLock {
            guard let total = gameCount, let games = indexPages[IndexPageKey(offset: offset, limit: limit)] else { return nil }
            return (games, total)
        }
    }

    /// How many games the catalog's list holds, if a page of it was read since the log last changed.
    var gameListCount: Int? { lock.withLock { gameCount } }

    /// Keeps a page of the catalog's game list read at `generation` (see ``keep(_:of:asOf:folded:)``).
    func keepIndexPage(_ games: [(game: SessionID, conversation: ConversationID)], total: Int, offset: Int, limit: Int, asOf generation: Int) {
        lock.withLock {
            guard changes == generation else { return }
            if indexPages.count >= Self.indexPagesKept { indexPages.removeAll(keepingCapacity: true) }
            indexPages[IndexPageKey(offset: offset, limit: limit)] = games
            gameCount = total
        }
    }

    /// The catalog's first row of every game, in order, if read whole since the log last changed.
    var gameFirsts: [CatalogEntry]? { lock.withLock { firsts } }

    /// Keeps the catalog's first row of every game and how many games it lists, read at `generation`.
    func keepGameFirsts(_ entries: [CatalogEntry], total: Int, asOf generation: Int) {
        lock.withLock {
            guard changes == generation else { return }
            firsts = entries
            gameCount = total
        }
    }

    /// The kept first conversation row of each of `streams` that has one.
    func conversationRows(of streams: Set<UUID>) -> [UUID: CatalogEntry] {
        lock.withLock {
            var out: [UUID: CatalogEntry] = [:]
            for stream in streams { if let row = conversationRowOf[stream] { out[stream] = row } }
            return out
        }
    }

    /// Keeps recordings' first conversation rows, read and checked at `generation`.
    func keepConversationRows(_ rows: [UUID: CatalogEntry], asOf generation: Int) {
        lock.withLock {
            guard changes == generation else { return }
            if conversationRowOf.count + rows.count > Self.conversationRowsKept { conversationRowOf.removeAll(keepingCapacity: true) }
            conversationRowOf.merge(rows) { _, new in new }
        }
    }

    /// Forgets conversations whose events changed (the log grew), and the game list's pages.
    public func forget(_ conversations: some Sequence<ConversationID>) {
        lock.withLock {
            changes += 1
            indexPages.removeAll()
            gameCount = nil
            firsts = nil
            conversationRowOf.removeAll()
            let changed = Set(conversations)
            for conversation in changed { (summaries[conversation], outlines[conversation]) = (nil, nil) }
            // A game of a changed conversation may be in another's events now too: all of them are found again.
            if !changed.isEmpty { foldedGames = foldedGames.filter { _, found in found.map { !changed.contains($0) } ?? false } }
        }
    }
}

/// The readers of a page's lanes, each used by its lane's thread alone.
private struct PageReaders: @unchecked Sendable {
    let readers: [any EventLogReader]
    init(_ readers: [any EventLogReader]) { self.readers = readers }
}

/// Each lane's games and damage, set by the lane, read after every lane ended.
private final class PageOutcomes: @unchecked Sendable {
    private var outcomes: [Result<([GameSummary], [EventStoreError]), Error>?]
    private let lock = NSLock()
    init(lanes: Int) { outcomes = Array(repeating: nil, count: lanes) }
    func set(_ lane: Int, _ outcome: Result<([GameSummary], [EventStoreError]), Error>) { lock.withLock { outcomes[lane] = outcome } }
    func get(_ lane: Int) throws -> ([GameSummary], [EventStoreError]) { try lock.withLock { outcomes[lane]! }.get() }
}
