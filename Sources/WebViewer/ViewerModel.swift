import RecordedEvents
import Audit
import EventStore
import Foundation
import GameKit
import MessagesModel
import Projections
import Replay
import Rerun
import StoredEvents

/// What the viewer knows of one log, opened read-only: the game index, the game list
/// (read in the background, shown as it grows), recently opened games, and audit
/// findings (computed in the background, game by game, first games first).
///
/// No lock spans a request's work: reads go through connections of their own (a small
/// pool), each open game has a lock of its own (its replayer caches folds), and the
/// shared tables are locked only to look up or store a finished result.
public final class ViewerModel: @unchecked Sendable {
    /// Where the log is, as the pages show it: a file's path, or a shared store's URL
    /// (without its password).
    public let location: String
    @available(*, deprecated, renamed: "location")
    public var path: String { location }
    public let games: GameRegistry
    private let readers: ReaderPool
    /// Makes a reader of the log: the pool's, and the background audit's own.
    private let makeReader: @Sendable () throws -> any SignedLogReader
    /// Whether the readers see what is appended after they opened (what following needs).
    private let seesAppends: Bool
    /// Whether the log is a store read natively (the list comes from its catalog, page by
    /// page; finished audits are not kept on this machine: `verify --workers` stores them).
    private let readsNatively: Bool
    /// The index made at opening. A log without a complete catalog was scanned for it,
    /// and that scan is kept; with the catalog, each request asks its own connection.
    private let openingIndex: GameIndex
    private let origins: [UUID: ForkOrigin]

    /// Guards every table below; held only to read or store an entry.
    private let lock = NSLock()
    private var open: [ConversationID: OpenGame] = [:]
    /// Whole ids resolved before, until the log grows (a new recording may name an id again).
    private var resolved: [String: (conversation: ConversationID, game: SessionID?)] = [:]
    /// Each conversation's recordings, as ``streams(of:_:)`` found them, until the log grows.
    private var streamsOf: [ConversationID: Set<UUID>] = [:]
    private var recent: [ConversationID] = []
    /// Each conversation's own checks; set through ``keep(_:in:of:)``.
    private var checks: [ConversationID: [Finding]] = [:]
    /// Each conversation's signature findings; set through ``keep(_:in:of:)``.
    private var signatures: [ConversationID: [Finding]] = [:]
    /// The whole log's own checks (structure, chain, signatures, catalog) once done.
    private var logWide: [Finding]? { didSet { findingsChanged += 1 } }
    /// Audits a shared store keeps (`verify --workers`), by conversation.
    private var stored: [ConversationID: StoredAudit] = [:] { didSet { findingsChanged += 1 } }
    /// Counts changes that may touch any game's verdict (the log-wide findings, stored
    /// audits, the tables set whole): a kept verdict is good while it is unchanged...
    private var findingsChanged = 0
    /// ... and while its conversation's count is (its checks or signatures set: each game
    /// page a person opens adds its signatures, which made every filter recompute every
    /// game's verdict). By the conversation's id as the list spells it.
    private var conversationFindingsChanged: [String: Int] = [:]
    /// Verdicts by game id, with the counts they were computed at: the audit filter asks
    /// for every game's on each request (parsing an id and filtering the log-wide findings).
    private var verdicts: [String: (at: Int, conversationAt: Int, verdict: Verdict?)] = [:]
    /// The game list as the background pass has read it so far.
    private var listed: [GameSummary] = []
    private var listIsComplete = false
    private var listFailure: String?
    private var listedSorted: [GameSummary]? { didSet { listRevision += 1 } }
    /// Counts changes of the sorted list: a table of its verdicts is good while it is unchanged.
    private var listRevision = 0
    /// The sorted list's verdicts in its order, for the filters (which ask for every
    /// game's: a lookup by id for each of thousands of games was most of a filtered page).
    private var listVerdicts: (revision: Int, findingsAt: Int, verdicts: [Verdict?], indicesOf: [String: [Int]])?
    /// Conversations whose findings changed since `listVerdicts` was brought up to date.
    private var conversationsToRecheck: Set<String> = []
    private var conversationsChecked = 0
    private var conversationCount: Int?
    private var adoptedKeptResults = false
    /// Following a growing log: whether it is, how many times it grew, who listens.
    private var follows = false
    private var growths = 0
    private var subscribers: [UUID: AsyncStream<Int>.Continuation] = [:]
    /// Each background pass writes only while it is the newest one (a growth starts new ones).
    private var listGeneration = 0
    private var auditGeneration = 0
    private var auditStarted = false
    private var listRunning = false, listStale = false
    /// Whether a background audit runs now (internal: tests set it to stand for one under way).
    var auditRunning = false
    private var auditStale = false

    /// How many open games keep their replayer (each holds its events and some states).
    static let openGames = 64

    /// One open game: its replayer (which folds for any number of requests at once) and
    /// what its pages computed from it, under a lock held only to look up or keep an entry.
    final class OpenGame: @unchecked Sendable {
        private let lock = NSLock()
        let replayer: Replayer
        /// Each view's step list (a fold over every step): the same for every page of that
        /// view, and most of a page's work before it was kept (session 13's profile).
        var stepRows: [Perspective: [StepRow]] = [:]
        /// Each game's own steps in each view (a fold over the view's events).
        var gameSteps: [GameStepsKey: [Int]] = [:]

        struct GameStepsKey: Hashable {
            var perspective: Perspective
            var session: SessionID
        }

        init(_ replayer: Replayer) { self.replayer = replayer }

        /// A kept result, or `make`'s, computed outside the lock (two requests may both
        /// compute it: the results are equal, the first kept stays).
        func kept<Key: Hashable, Value>(_ table: ReferenceWritableKeyPath<OpenGame, [Key: Value]>, _ key: Key,
                                        _ make: (Replayer) throws -> Value) rethrows -> Value {
            if let known = lock.withLock({ self[keyPath: table][key] }) { return known }
            let made = try make(replayer)
            return lock.withLock {
                if let raced = self[keyPath: table][key] { return raced }
                self[keyPath: table][key] = made
                return made
            }
        }
    }

    /// One conversation's audit as `verify --workers` stored it in a shared store.
    public struct StoredAudit: Sendable {
        /// Its findings: every check of the conversation (the re-run included), without
        /// the signatures, which the viewer checks itself.
        public var findings: [Finding]
        /// The store's revision it was checked at.
        public var revision: Int64

        public init(findings: [Finding], revision: Int64) {
            self.findings = findings
            self.revision = revision
        }
    }

    /// Where finished audits are kept between starts (nil: nowhere).
    private let kept: KeptResults?
    /// Whether the list shown came whole from an earlier start (internal: for tests).
    private(set) var listWasKept = false
    /// The name of this file's kept results, worked out once (it reads the whole file)
    /// for the list pass and the audit both; nil inside: not worked out yet.
    private var keptKeyMemo: String??
    private let keptKeyLock = NSLock()
    /// Held while the audit saves its kept results and while the list pass adds its list to
    /// them: without it, the audit could make its results before the list was complete and
    /// write them after the list pass looked for them, and the list was never kept.
    private let keptSaveLock = NSLock()

    /// Opens the log read-only: nothing is written to it or beside it.
    ///
    /// - Parameters:
    ///   - keepingResultsIn: a folder where a finished background audit is kept, named by
    ///     the log's exact content and `build`, so the next start on the same file shows
    ///     every verdict at once (nil: nothing kept).
    ///   - build: what identifies this build of gamelog; results of another are not reused.
    ///   - followingAppends: read the file so that another process's appends are seen
    ///     (see ``EventStore/init(path:access:maximumSize:layout:followingAppends:clock:)``):
    ///     what ``follow(every:)`` needs.
    public convenience init(path: String, games: GameRegistry, keepingResultsIn folder: URL? = nil, build: String = "",
                            followingAppends: Bool = false) throws {
        // Its readers share what they read for proofs: every conversation of a device
        // reads the tiles around its signed heads, and most of them a neighbour's.
        let proofs = ProofCache()
        try self.init(location: path, games: games, reader: {
                          let store = try EventStore(path: path, access: .readOnly, followingAppends: followingAppends)
                          store.proofCache = proofs
                          return store
                      },
                      readsNatively: false, seesAppends: followingAppends, keepingResultsIn: folder, build: build)
    }

    /// Opens a log that `reader` reads as it is (a shared store in PostgreSQL, through its
    /// indexes): the list, every game page and the audit (signatures included) answer
    /// from it, with nothing copied.
    ///
    /// - Parameter reader: makes a reader (one per concurrent request, kept in a pool, and
    ///   one for the background audit).
    public convenience init(location: String, games: GameRegistry, reader: @escaping @Sendable () throws -> any SignedLogReader) throws {
        try self.init(location: location, games: games, reader: reader, readsNatively: true, seesAppends: true, keepingResultsIn: nil, build: "")
    }

    @available(*, unavailable, message: "the audit reads the store as it is now: use init(location:games:reader:) with a reader returning any SignedLogReader (SharedStore.reader() is one); no copy is made")
    public convenience init(location: String, games: GameRegistry, reader: @escaping @Sendable () throws -> any EventLogReader,
                            auditCopy: @escaping @Sendable () throws -> String, keepingResultsIn folder: URL? = nil,
                            build: String = "") throws {
        fatalError("unavailable")
    }

    private init(location: String, games: GameRegistry, reader: @escaping @Sendable () throws -> any SignedLogReader,
                 readsNatively: Bool, seesAppends: Bool, keepingResultsIn folder: URL?, build: String) throws {
        self.location = location
        self.seesAppends = seesAppends
        self.games = games
        self.makeReader = reader
        self.readsNatively = readsNatively
        kept = folder.map { KeptResults(folder: $0, build: build + " " + games.kinds.joined(separator: ",")) }
        let store = try reader()
        openingIndex = try GameIndex(store: store)
        origins = try store.forkOrigins()
        readers = ReaderPool(make: reader, first: store, capacity: max(4, ProcessInfo.processInfo.activeProcessorCount * 2))
        // The requests' threads made here, at the priority of the thread that opens the
        // viewer: made later by a background pass's first nap, they would run lowered too
        // (a thread starts at its maker's priority), and pages would wait behind the passes.
        _ = WorkQueue.shared
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Runs `body` with a connection of its own and the index that goes with it.
    /// - Parameter blocks: where a SQLite log's decoded blocks are kept for the rest of the
    ///   request's reads (see ``EventStore/remembering(blocks:_:)``).
    private func reading<T>(blocks: BlockMemo? = nil, _ body: (any SignedLogReader, GameIndex) throws -> T) throws -> T {
        try readers.with { reader in
            guard let blocks, let file = reader as? EventStore else {
                return try body(reader, openingIndex.usesCatalog ? try GameIndex(store: reader) : openingIndex)
            }
            return try file.remembering(blocks: blocks) {
                try body(reader, openingIndex.usesCatalog ? try GameIndex(store: reader) : openingIndex)
            }
        }
    }

    /// A conversation's recordings, its catalog rows checked against their events once
    /// and kept until the log grows (every game page that opens a game asks).
    private func streams(of conversation: ConversationID, _ index: GameIndex) throws -> Set<UUID> {
        try untilTheLogGrows(\.streamsOf, conversation) { try index.streams(of: conversation) }
    }

    /// `make`'s answer, kept in `table` under `key` until the log grows (one worked out
    /// while it grew is not kept); `keeping` false: worked out, not kept.
    private func untilTheLogGrows<Key: Hashable, Value>(_ table: ReferenceWritableKeyPath<ViewerModel, [Key: Value]>, _ key: Key,
                                                       keeping: Bool = true, _ make: () throws -> Value) rethrows -> Value {
        let (known, asOf) = locked { (self[keyPath: table][key], growths) }
        if let known { return known }
        let found = try make()
        if keeping { locked { if growths == asOf { self[keyPath: table][key] = found } } }
        return found
    }

    /// Runs a request's work off Swift's cooperative pool (see ``WorkQueue``).
    public func work<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await WorkQueue.shared.run(body)
    }

    // MARK: The game list

    /// Every game, the whole log folded now (for tests and callers that need the whole
    /// list at once; the pages use ``list()``, which never waits for the log).
    public func summaries() throws -> [GameSummary] {
        if let complete = locked({ listIsComplete ? sortedList() : nil }) { return complete }
        var damaged = 0
        let made: [GameSummary]
        if readsNatively {
            // The catalog's pages one after another, as the background list reads them.
            made = try readers.with { reader in
                try GameCatalog.everyGame(store: reader, games: games, skippingDamaged: { _ in damaged += 1 })
            }
        } else {
            made = try GameCatalog(store: try EventStore(path: location, access: .readOnly), games: games,
                                   skippingDamaged: { _ in damaged += 1 }).games
        }
        locked {
            listed = made
            listedSorted = made
            listIsComplete = true
            self.damaged = damaged
        }
        return made
    }

    /// The game list as read so far, and whether it is the whole log's.
    public struct Listing: Sendable {
        public var games: [GameSummary]
        public var isComplete: Bool
        /// Why the background pass stopped, if it failed.
        public var failure: String?
    }

    /// A conversation that holds no game (a sticker browser's): reached through its kind's filter.
    public struct Gameless: Sendable, Hashable {
        public var conversation: ConversationID
        public var kind: String
        public var events: Int
    }
    private var gameless: [Gameless] = []

    /// The conversations of `kind` that hold no game, once the background pass has read the log whole.
    public func conversationsWithoutGames(ofKind kind: String) -> [Gameless] {
        locked { gameless.filter { $0.kind == kind } }
    }

    /// The games the background pass has read so far (all of them once it is done), in list order.
    public func list() -> Listing {
        locked { Listing(games: sortedList(), isComplete: listIsComplete, failure: listFailure) }
    }

    /// Under the lock.
    private func sortedList() -> [GameSummary] {
        if let listedSorted { return listedSorted }
        let sorted = listed.sorted { $0.firstPosition < $1.firstPosition }
        listedSorted = sorted
        return sorted
    }

    /// Events the game list had to leave out because they cannot be read (known once the list was folded whole).
    public var damagedEvents: Int { locked { max(damaged, damagedSeen.count) } }
    private var damaged = 0
    /// The games of conversations folded by pages and by the list pass, so that a page
    /// asked for again (or one the pass went through) reads no events while the list is
    /// still being read: a page folded about 100 conversations for every request, which
    /// under 50 clients held the server to 85-100 requests a second.
    private let pageMemo = GameSummaryMemo()

    /// Damaged events met by pages folded before the list was read whole.
    private var damagedSeen: Set<Int64> = []

    /// Reads the whole game list on a connection of its own, adding each conversation's
    /// games as soon as they are folded, so filters answer at once with what is known.
    public func listInBackground() {
        // One pass at a time: asked for while one runs (the log grew), another follows it.
        guard locked({ () -> Bool in
            if listRunning { listStale = true; return false }
            listRunning = true
            return true
        }) else { return }
        guard !readsNatively else { return listPagesInBackground() }
        let path = self.location, games = self.games, following = locked { follows }
        // A pass that a newer one replaced (the log grew) stops writing.
        let mine = locked { listGeneration }
        // The list of the same file read by the same build before: at once, as the audit's results.
        let kept = following ? nil : self.kept
        Thread { [weak self] in
            // Pages first: this thread and every one it starts or hands folds to.
            ThreadPriority.lowerCallingThread(.lowest)
            defer { self?.passEnded(list: true) }
            if let kept, let self, let key = self.keptKey(), let list = kept.load(key)?.list {
                self.adopt(list, generation: mine)
                return
            }
            var damaged = 0
            do {
                let reader = try EventStore(path: path, access: .readOnly, followingAppends: following)
                let memoAsOf = self?.pageMemo.generation ?? 0
                // Requests first, as the audit does: the pass naps between stretches of the
                // log while requests wait (under 50 clients it took two fifths of the cores).
                let catalog = try GameCatalog(store: reader, games: games, progress: { _ in WorkQueue.shared.yieldToRequests() },
                                              skippingDamaged: { _ in damaged += 1 }, found: { found in
                    if let first = found.first, let uuid = UUID(uuidString: first.conversation) {
                        self?.pageMemo.keep(found, of: ConversationID(uuid), asOf: memoAsOf)
                    }
                    self?.locked {
                        guard self?.listGeneration == mine else { return }
                        self?.listed += found
                        self?.listedSorted = nil
                    }
                }, outlined: { conversation, outline in
                    // What `/api/games/ID` answers beside the games: no game opened for it.
                    self?.pageMemo.keep(outline, of: conversation, asOf: memoAsOf)
                })
                let all = catalog.games
                let withGames = Set(all.map(\.conversation))
                let gameless = catalog.kinds.filter { !withGames.contains($0.key.uuid.uuidString.lowercased()) }
                    .map { Gameless(conversation: $0.key, kind: $0.value, events: catalog.eventCounts[$0.key] ?? 0) }
                    .sorted { $0.kind != $1.kind ? $0.kind < $1.kind : $0.conversation.uuid.precedes($1.conversation.uuid) }
                let done = self?.locked { () -> KeptResults.List? in
                    guard let self, self.listGeneration == mine else { return nil }
                    self.listed = all
                    self.listedSorted = all
                    self.listIsComplete = true
                    self.resolveFromTheList(all, gameless: gameless)
                    // The recordings of each conversation, as the pass read them: opening a
                    // game reads its catalog rows and checks them against their events otherwise.
                    for (conversation, streams) in catalog.streams where self.streamsOf[conversation] == nil {
                        self.streamsOf[conversation] = streams
                    }
                    self.damaged = damaged
                    self.gameless = gameless
                    return self.keptList()
                }
                // Into the audit's kept results, if they were kept first (else the audit
                // keeps it with its own), only while the file is as it was.
                if let kept, let done, let self, let key = self.keptKey() {
                    self.keptSaveLock.withLock {
                        if var results = kept.load(key), results.list == nil, kept.key(of: path) == key {
                            results.list = done
                            kept.save(results, as: key)
                        }
                    }
                }
            } catch {
                self?.locked { if self?.listGeneration == mine { self?.listFailure = String(describing: error) } }
            }
        }.start()
    }

    /// The list of a store read natively: page after page of its catalog, each page's
    /// conversations folded from the store, so the list grows without a copy. Its
    /// conversations that hold no game are not listed (that needs every recording read).
    private func listPagesInBackground() {
        let games = self.games
        let mine = locked { listGeneration }
        Thread { [weak self] in
            ThreadPriority.lowerCallingThread(.lowest)
            defer { self?.passEnded(list: true) }
            var damaged = 0, offset = 0
            let size = 100
            do {
                while let self {
                    WorkQueue.shared.yieldToRequests()
                    let page = try self.readers.with { reader in
                        try GameCatalog.page(store: reader, games: games, offset: offset, limit: size, memo: self.pageMemo,
                                             skippingDamaged: { _ in damaged += 1 })
                    }
                    let current = self.locked {
                        guard self.listGeneration == mine else { return false }
                        self.listed += page.games
                        self.listedSorted = nil
                        return true
                    }
                    guard current else { return }
                    offset += size
                    if offset >= page.total { break }
                }
                self?.locked {
                    guard self?.listGeneration == mine else { return }
                    self?.listIsComplete = true
                    self?.damaged = damaged
                }
            } catch {
                self?.locked { if self?.listGeneration == mine { self?.listFailure = String(describing: error) } }
            }
        }.start()
    }

    /// A page of the game list: from the list once it is read whole, else from the
    /// catalog, folding only the page's conversations (a damaged event left out and counted).
    public func page(offset: Int, limit: Int) throws -> GamePage {
        if let complete = locked({ listIsComplete ? sortedList() : nil }) {
            return GamePage(games: Array(complete.dropFirst(offset).prefix(limit)), total: complete.count, offset: offset)
        }
        var found: [Int64] = []
        // A page folded from the catalog is most of a core's work for a third of a second
        // at 1.8M events: split among the cores when no other request wants them (a person
        // on a fresh server), on one thread under load, where it would only take theirs.
        let lanes = WorkQueue.shared.answersThisRequestAlone ? ProcessInfo.processInfo.activeProcessorCount : 1
        let page = try readers.with {
            try GameCatalog.page(store: $0, games: games, offset: offset, limit: limit, lanes: lanes, memo: pageMemo,
                                 skippingDamaged: { found += [$0.position ?? 0] })
        }
        if !found.isEmpty { locked { damagedSeen.formUnion(found) } }
        return page
    }

    /// The games of one conversation, as its replayer folds them.
    public func summaries(of conversation: ConversationID) throws -> [GameSummary] {
        // Folded once, whether for a page, by the list pass or here: the memo keeps them.
        if let known = pageMemo.summaries(of: conversation) { return known }
        let origin = origins[conversation.uuid], asOf = pageMemo.generation
        let folded = try withReplayer(conversation) { replayer in
            GameCatalog.summaries(of: try replayer.state(at: replayer.stepCount), origin: origin)
        }
        pageMemo.keep(folded, of: conversation, asOf: asOf)
        return folded
    }

    /// A conversation's steps and devices (all its events), as its replayer counts them:
    /// from the memo when a page folded it, else from its replayer.
    public func outline(of conversation: ConversationID) throws -> GameSummaryMemo.Outline {
        if let known = pageMemo.outline(of: conversation) { return known }
        let asOf = pageMemo.generation
        let replayer = try replayer(conversation)
        let outline = GameSummaryMemo.Outline(steps: replayer.stepCount, devices: replayer.devices)
        pageMemo.keep(outline, of: conversation, asOf: asOf)
        return outline
    }

    /// The kinds of game this viewer knows.
    public var kinds: [String] { games.kinds }

    // MARK: One game

    /// The conversation (and game) an id names.
    public func resolve(_ id: String) throws -> (conversation: ConversationID, game: SessionID?) {
        // Whole ids only are kept (the ones pages link to): as many as the log holds games
        // and conversations. Resolving one checks its catalog rows against the events they
        // point at, which was three tenths of the server's time under 50 clients.
        let key = id.lowercased()
        return try untilTheLogGrows(\.resolved, key, keeping: key.utf8.count == 36) {
            try reading { _, index in
                // A game a page or the list folded: its catalog rows confirm it, no event read.
                if key.utf8.count == 36, let uuid = UUID(uuidString: key), let conversation = pageMemo.conversation(foldedWithGame: key),
                   try index.confirm(game: SessionID(uuid), foldedIn: conversation) {
                    return (conversation, SessionID(uuid))
                }
                return try index.resolve(id)
            }
        }
    }

    private func openGame(_ conversation: ConversationID) throws -> OpenGame {
        if let known = locked({ () -> OpenGame? in
            guard let known = open[conversation] else { return nil }
            recent.removeAll { $0 == conversation }
            recent.append(conversation)
            return known
        }) { return known }
        // Read outside the lock: another game's request goes on meanwhile. Two requests
        // for the same new game may both read it; the first kept wins.
        let made = try reading { reader, index -> OpenGame in
            // A damaged event is left out and named on the page, not a page that fails.
            let (known, asOf) = locked { (streamsOf[conversation], growths) }
            if known == nil, let rows = try index.uncheckedRows(of: conversation) {
                // The catalog's rows checked against the events read (not read first on their own).
                let replayer = try Replayer(store: reader, conversation: conversation, streams: Set(rows.map(\.stream)),
                                            skippingDamaged: true, games: games)
                if GameIndex.rows(rows, agreeWith: replayer.events) {
                    locked { if growths == asOf { streamsOf[conversation] = Set(rows.map(\.stream)) } }
                    return OpenGame(replayer)
                }
                // Else read as before: the check names what is wrong.
            }
            return OpenGame(try Replayer(store: reader, conversation: conversation, streams: try known ?? self.streams(of: conversation, index),
                                         skippingDamaged: true, games: games))
        }
        let (kept, evicted) = locked { () -> (OpenGame, OpenGame?) in
            if let raced = open[conversation] { return (raced, nil) }
            open[conversation] = made
            recent.append(conversation)
            guard recent.count > Self.openGames else { return (made, nil) }
            return (made, open.removeValue(forKey: recent.removeFirst()))
        }
        // The game put out is freed here, not under the lock every request takes (its
        // events and states were 2.6% of a page of a game not opened yet).
        withExtendedLifetime(evicted) {}
        return kept
    }

    /// Runs `body` on a conversation's replayer (which any number of requests use at once).
    public func withReplayer<T>(_ conversation: ConversationID, _ body: (Replayer) throws -> T) throws -> T {
        try body(try openGame(conversation).replayer)
    }

    /// A conversation's replayer (its events and devices; fold it through ``withReplayer(_:_:)``).
    public func replayer(_ conversation: ConversationID) throws -> Replayer {
        try openGame(conversation).replayer
    }

    /// Every device of a conversation (whatever the view), in order: their colours in the page.
    public func devicesOf(_ conversation: ConversationID) -> [DeviceID] {
        (try? replayer(conversation).devices) ?? []
    }

    /// The steps `perspective` steps through: the conversation's, or a device's own
    /// events alone (numbered as its own steps, so nothing of the others shows).
    public func view(_ conversation: ConversationID, as perspective: Perspective) throws -> Replayer {
        try withReplayer(conversation) { $0.seen(by: perspective) }
    }

    /// Each step of `range` (of the perspective's own steps) with the states around it, in one pass.
    public func forEachStep(_ conversation: ConversationID, in range: ClosedRange<Int>, as perspective: Perspective,
                            _ body: (Int, ConversationState, ConversationState, RecordedEvent) throws -> Void) throws {
        try withReplayer(conversation) { try $0.seen(by: perspective).forEachStep(in: range, as: perspective, body) }
    }

    /// One step of a view as its step list shows it; what marks the current step and the
    /// findings is added per page (findings arrive as the audit goes on).
    struct StepRow: Sendable {
        let step: Int
        let device: DeviceID?
        let label: String
        let isMove: Bool
        /// Nothing this view shows changed.
        let changesNothing: Bool
    }

    /// The rows of `range` of a view's steps: computed once per view when the range is the
    /// whole view, else each time (a long conversation's window moves with the page).
    func stepRows(_ conversation: ConversationID, in range: ClosedRange<Int>, as perspective: Perspective) throws -> [StepRow] {
        let game = try openGame(conversation)
        func rows(_ replayer: Replayer) throws -> [StepRow] {
            let view = replayer.seen(by: perspective)
            var rows: [StepRow] = []
            rows.reserveCapacity(range.count)
            try view.forEachStep(in: range, as: perspective) { n, before, after, seen in
                guard let event = view.event(at: n) else { return }
                let label = Pages.shortLabel(seen, state: after)
                rows.append(StepRow(step: n, device: event.device, label: label.text, isMove: label.isMove,
                                    changesNothing: after.devices == before.devices && after.games == before.games))
            }
            return rows
        }
        guard range == 1...game.replayer.seen(by: perspective).stepCount else { return try rows(game.replayer) }
        return try game.kept(\.stepRows, perspective, rows)
    }

    /// The steps of `perspective`'s view that are a game's own events (the events the
    /// fold counts as the game's), in order: computed once per view and game.
    public func steps(ofGame session: SessionID, in conversation: ConversationID, as perspective: Perspective) throws -> [Int] {
        let game = try openGame(conversation)
        // A game's page lists its steps from the whole view's rows: made first, their fold
        // notes every game's events, and the positions below fold nothing again.
        let count = game.replayer.seen(by: perspective).stepCount
        if count > 0 { _ = try stepRows(conversation, in: 1...count, as: perspective) }
        return game.kept(\.gameSteps, OpenGame.GameStepsKey(perspective: perspective, session: session)) { replayer in
            let view = replayer.seen(by: perspective)
            let positions = view.positions(ofGame: session)
            return view.events.enumerated().compactMap { positions.contains($1.position) ? $0 + 1 : nil }
        }
    }

    /// "When did this change?": the step of `perspective`'s view that last changed a cell of
    /// a game's board at or before `step` (or, `forward`, first after it), as the board shows
    /// it; nil if no step did. One pass over the steps between.
    public func stepChanging(cell: Int, ofGame session: SessionID, in conversation: ConversationID, as perspective: Perspective,
                             from step: Int, forward: Bool) throws -> Int? {
        try withReplayer(conversation) { replayer in
            let view = replayer.seen(by: perspective)
            let range = forward ? min(step + 1, view.stepCount + 1)...view.stepCount : 1...min(max(step, 0), view.stepCount)
            guard !range.isEmpty, range.lowerBound >= 1 else { return nil }
            func cellValue(_ state: ConversationState) -> String? {
                guard let plugin = state.plugin, let game = state.games[session] else { return nil }
                let cells = plugin.picture(of: game.board).cells
                return cells.indices.contains(cell) ? cells[cell] : nil
            }
            var found: Int?
            struct Done: Error {}
            do {
                try view.forEachStep(in: range, as: perspective) { n, before, after, _ in
                    guard cellValue(before) != cellValue(after) else { return }
                    found = n
                    if forward { throw Done() }
                }
            } catch is Done {}
            return found
        }
    }

    /// The state at a step (of the perspective's own steps) as a perspective sees it.
    public func state(_ conversation: ConversationID, at step: Int, as perspective: Perspective) throws -> ConversationState {
        try withReplayer(conversation) { try $0.seen(by: perspective).state(at: step, as: perspective) }
    }

    /// The event of a step (of the perspective's own steps) as the perspective may see it.
    public func viewedEvent(_ conversation: ConversationID, at step: Int, as perspective: Perspective) throws -> RecordedEvent? {
        try withReplayer(conversation) { $0.seen(by: perspective).viewedEvent(at: step, as: perspective) }
    }

    /// Where a fork came from.
    public func origin(_ conversation: ConversationID) -> ForkOrigin? { origins[conversation.uuid] }

    // MARK: Audits

    /// The audit findings of one conversation: every check of it (the re-run and its
    /// stored snapshots included) and its devices' signatures, as `verify GAME` checks them.
    /// - Parameter waitingForTheWholeLog: while the background audit checks the whole
    ///   log's signatures, name this conversation's as not checked yet instead of checking
    ///   them here (what a game page shows; the whole log's check gives them when it ends).
    public func findings(_ conversation: ConversationID, waitingForTheWholeLog: Bool = false) throws -> [Finding] {
        let known = locked { (checked(conversation), signatures[conversation], auditRunning && logWide == nil) }
        // The conversation's blocks, read by its own checks, then for each device's leaves
        // and again in the tiles around them, decoded once (the blocks were two thirds of
        // `/api/verify/ID` on a fresh server, decoded three or four times each).
        let blocks = BlockMemo()
        let own = try known.0 ?? check(conversation, blocks: blocks)
        let signed: [Finding]
        if let found = known.1 {
            signed = found
        } else if let derived = try signaturesFromTheWholeLog(conversation) {
            signed = derived
            locked { keep(signed, in: \.signatures, of: conversation) }
        } else if waitingForTheWholeLog && known.2 {
            // The same proofs the whole log's check is reading: checked here too, they were
            // two fifths of the server's time under 50 clients while it ran.
            signed = [Finding(.notCheckable, .signature, position: nil, game: conversation.uuid.uuidString.lowercased(),
                              rule: "signatures", expected: "the conversation's events as their devices signed them",
                              found: "checked with the whole log, which the background audit is reading now: reload once it is done")]
        } else {
            signed = try reading(blocks: blocks) { reader, index in
                let streams = try self.streams(of: conversation, index)
                return try Auditor.signatures(reader, streams: streams,
                                              conversationOf: Dictionary(uniqueKeysWithValues: streams.map { ($0, conversation) })).1
            }
            locked { keep(signed, in: \.signatures, of: conversation) }
        }
        return Auditor.ordered(own + signed)
    }

    /// A conversation's checks as computed here or stored by `verify --workers`. Under the lock.
    private func checked(_ conversation: ConversationID) -> [Finding]? {
        checks[conversation] ?? stored[conversation]?.findings
    }

    /// A conversation's signature findings, taken from the whole log's check once it is
    /// done and found the chain sound (checking one conversation's leaves against its
    /// devices' trees again costs a game page most of its time); nil before.
    private func signaturesFromTheWholeLog(_ conversation: ConversationID) throws -> [Finding]? {
        guard let whole = locked({ logWide }), !whole.contains(where: { $0.check == .integrity && $0.severity == .error }) else { return nil }
        let id = conversation.uuid.uuidString.lowercased()
        // Its devices from the list's outline where the list pass made one: opening the
        // game for them was nearly all of `/api/verify/ID` once the audit was done.
        let devices = Set(try outline(of: conversation).devices.map(\.name))
        return whole.filter { finding in
            finding.check == .signature
                && (finding.game.map { $0.lowercased() == id } ?? finding.device.map(devices.contains) ?? true)
        }
    }

    /// The checks of one conversation (without the signatures), computed and kept.
    /// A conversation with a damaged event is checked on the events that read (as its
    /// page shows them), with a finding for each damaged one, so its verdict says so.
    /// - Parameter blocks: keeps the blocks read for the caller's next reads.
    func check(_ conversation: ConversationID, blocks: BlockMemo? = nil) throws -> [Finding] {
        let found: [Finding]
        // An open game's events, read and chained whole when it opened, are the ones a read
        // would give: not read again (a game page opens its game, then asks for this, which
        // read the conversation a second time).
        let opened = locked { open[conversation]?.replayer }.flatMap { $0.damaged.isEmpty ? $0 : nil }
        do {
            found = try reading(blocks: blocks) { reader, index in
                let streams = try self.streams(of: conversation, index)
                let auditor = Auditor(games: games)
                if let opened { return try auditor.conversationFindings(reader, conversation: conversation, streams: streams, events: opened.events) }
                return try auditor.conversationFindings(reader, conversation: conversation, streams: streams)
            }
        } catch {
            let replayer = try replayer(conversation)
            guard !replayer.damaged.isEmpty else { throw error }
            let auditor = Auditor(games: games)
            let game = conversation.uuid.uuidString.lowercased()
            found = Auditor.ordered(replayer.damaged.map { damage in
                Finding(.error, .integrity, position: damage.position, game: game, rule: "readable-event",
                        expected: "an event that reads and matches its hash", found: damage.description)
            } + auditor.check(conversation, replayer.events) + Auditor.findings(Rerunner(games: games).rerun(recordingsOf: replayer.events)))
        }
        locked { keep(found, in: \.checks, of: conversation) }
        return found
    }

    /// What is known of a game's audit for the list: its errors, and whether the checks
    /// that cover the whole log (chain, signatures) are in them yet; nil until its
    /// conversation is checked.
    public struct Verdict: Sendable, Equatable {
        public var errors: Int
        public var isWhole: Bool
        /// Log positions of the game's events that could not be read.
        public var damaged: [Int64] = []
        /// Warnings among the game's own checks (what the network did, a recording missing).
        public var warnings = 0
        /// The rules the game's own checks found broken or unchecked, for a search by rule.
        public var rules: Set<String> = []
    }

    /// The verdict of each listed game known so far.
    public func verdict(of game: GameSummary) -> Verdict? {
        locked { keptVerdict(of: game) }
    }

    /// A game's verdict as kept since its findings last changed, else computed and kept. Under the lock.
    private func keptVerdict(of game: GameSummary) -> Verdict? {
        let conversationAt = conversationFindingsChanged[game.conversation] ?? 0
        if let kept = verdicts[game.id], kept.at == findingsChanged, kept.conversationAt == conversationAt { return kept.verdict }
        let verdict = computedVerdict(of: game)
        verdicts[game.id] = (findingsChanged, conversationAt, verdict)
        return verdict
    }

    /// The game list as ``list()`` gives it, and each game's verdict in the same order:
    /// what a filter by audit or search reads. Kept between requests, and brought up to
    /// date for the conversations whose findings changed since.
    public func listWithVerdicts() -> (listing: Listing, verdicts: [Verdict?]) {
        locked {
            let games = sortedList()
            if listVerdicts?.revision != listRevision || listVerdicts?.findingsAt != findingsChanged {
                // The games already listed keep the verdicts their findings gave (the list
                // grows under a fresh server's filters: each filter recomputed every game's).
                listVerdicts = (listRevision, findingsChanged, games.map { keptVerdict(of: $0) },
                                Dictionary(grouping: games.indices) { games[$0].conversation })
                conversationsToRecheck = []
            } else if !conversationsToRecheck.isEmpty {
                for conversation in conversationsToRecheck {
                    for index in listVerdicts?.indicesOf[conversation] ?? [] { listVerdicts?.verdicts[index] = computedVerdict(of: games[index]) }
                }
                conversationsToRecheck = []
            }
            return (Listing(games: games, isComplete: listIsComplete, failure: listFailure), listVerdicts?.verdicts ?? [])
        }
    }

    /// Keeps a conversation's findings in `table` (``checks`` or ``signatures``; nil:
    /// forgets them), and drops its games' kept verdicts. Under the lock.
    private func keep(_ found: [Finding]?, in table: ReferenceWritableKeyPath<ViewerModel, [ConversationID: [Finding]]>,
                      of conversation: ConversationID) {
        self[keyPath: table][conversation] = found
        let key = conversation.uuid.uuidString.lowercased()
        conversationFindingsChanged[key, default: 0] += 1
        if listVerdicts != nil { conversationsToRecheck.insert(key) }
    }

    /// Under the lock.
    private func computedVerdict(of game: GameSummary) -> Verdict? {
        guard let conversation = UUID(uuidString: game.conversation).map(ConversationID.init) else { return nil }
        guard let own = checked(conversation) else { return nil }
        let names: Set<String> = [game.id, game.conversation]
        let about = { (finding: Finding) in names.contains((finding.game ?? game.conversation).lowercased()) }
        let errors = { (findings: [Finding]) in findings.filter { $0.severity == .error && about($0) }.count }
        let damaged = own.filter { $0.rule == "readable-event" }.compactMap(\.position)
        let warnings = own.filter { $0.severity == .warning && about($0) }.count
        let rules = Set(own.filter(about).map(\.rule))
        if let signed = signatures[conversation] {
            return Verdict(errors: errors(own) + errors(signed), isWhole: true, damaged: damaged, warnings: warnings, rules: rules)
        }
        guard let logWide else { return Verdict(errors: errors(own), isWhole: false, damaged: damaged, warnings: warnings, rules: rules) }
        // Findings of the whole log that name no game count against none.
        return Verdict(errors: errors(own) + logWide.filter { $0.severity == .error && $0.game.map { names.contains($0.lowercased()) } == true }.count,
                       isWhole: true, damaged: damaged, warnings: warnings, rules: rules)
    }

    /// How far the background audit has come: conversations checked, of how many, and
    /// whether the whole log's own checks are done.
    public var auditProgress: (checked: Int, of: Int?, logWideDone: Bool) {
        locked { (conversationsChecked, conversationCount, logWide != nil) }
    }

    /// The whole log's own findings once checked (structure, chain, signatures, catalog).
    public var logWideFindings: [Finding]? { locked { logWide } }

    /// The stored audit a game's findings come from, if any.
    public func storedAudit(_ conversation: ConversationID) -> StoredAudit? { locked { stored[conversation] } }

    /// Shows the audits a shared store keeps instead of checking those games again.
    /// Returns whether they cover every conversation.
    @discardableResult
    public func useStoredAudits(_ audits: [ConversationID: StoredAudit]) throws -> Bool {
        let conversations = try reading { _, index in try index.conversations() }
        locked {
            stored = audits
            checks = [:]
            findingsChanged += 1
        }
        return conversations.allSatisfy { audits[$0] != nil }
    }

    /// Audits the log in the background on a connection of its own: each conversation in
    /// the order of the list (its verdict shows as soon as it is known), then the whole
    /// log's own checks. A conversation already checked (a page asked first, or a stored
    /// audit) is not checked again.
    public func auditInBackground() {
        // One pass at a time: asked for while one runs (the log grew), another follows it.
        guard locked({ () -> Bool in
            if auditRunning { auditStale = true; return false }
            auditRunning = true
            return true
        }) else { return }
        let games = self.games, makeReader = self.makeReader, path = location
        // Results are kept for a file, named by its content; a store's are stored by
        // `verify --workers`; a log that grows is audited again as it grows.
        let (mine, following) = locked { () -> (Int, Bool) in
            auditStarted = true
            return (auditGeneration, follows)
        }
        let kept = readsNatively || following ? nil : self.kept
        Thread { [weak self] in
            // Pages first: the whole log's checks run on threads this one starts.
            ThreadPriority.lowerCallingThread(.lowest)
            defer { self?.passEnded(list: false) }
            guard let reader = try? makeReader() else {
                self?.locked { self?.logWide = [Finding(.error, .integrity, position: nil, rule: "readable-log", expected: "a log the audit can read",
                                                        found: "it could not be opened for the audit")] }
                return
            }
            // The same file audited by the same build before: its results at once.
            let key = kept == nil ? nil : self?.keptKey()
            if let key, let results = kept?.load(key), let self {
                self.adopt(results)
                return
            }
            let auditor = Auditor(games: games)
            if let index = try? GameIndex(store: reader), let conversations = try? index.conversations() {
                self?.locked { self?.conversationCount = conversations.count }
                for conversation in conversations {
                    WorkQueue.shared.yieldToRequests()
                    guard let self else { return }
                    let (known, current) = self.locked { (self.checked(conversation) != nil, self.auditGeneration == mine) }
                    guard current else { return }
                    if !known, let streams = try? index.streams(of: conversation) {
                        if let found = try? auditor.conversationFindings(reader, conversation: conversation, streams: streams) {
                            self.locked { if self.auditGeneration == mine { self.keep(found, in: \.checks, of: conversation) } }
                        } else {
                            // Damaged: checked as its page shows it, the damage named.
                            _ = try? self.check(conversation)
                        }
                    }
                    self.locked { self.conversationsChecked += 1 }
                }
            }
            let whole = (try? auditor.logFindings(reader).findings)
                ?? [Finding(.error, .integrity, position: nil, rule: "readable-log", expected: "a log the audit can read", found: "it could not be read whole")]
            self?.locked { if self?.auditGeneration == mine { self?.logWide = whole } }
            // Kept only if the file did not change while it was audited.
            if let key, let kept, let self, kept.key(of: path) == key {
                self.keptSaveLock.withLock { kept.save(self.locked { self.keptResults(logWide: whole) }, as: key) }
            }
        }.start()
    }

    // MARK: Following a growing log

    /// Starts following the log as another process appends to it (`serve --follow`): every
    /// `interval` its last position is read, and when it grew, the conversations with new
    /// events are folded again at their next request, the list and the audit start over,
    /// and ``changes()`` yields. Needs a log whose catalog covers every event (the one
    /// gamelog writes; `gamelog index` fills an older one's).
    /// - Throws: ``ViewerFollowError`` when the log's catalog does not cover it.
    public func follow(every interval: Duration = .milliseconds(400)) throws {
        guard seesAppends else { throw ViewerFollowError.readsAsUnchanging(location: location) }
        guard openingIndex.usesCatalog else { throw ViewerFollowError.noCatalog(location: location) }
        let start = try makeReader().lastPosition(), makeReader = self.makeReader
        let started = locked { () -> Bool in
            defer { follows = true }
            return follows
        }
        guard !started else { return }
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        Thread { [weak self] in
            guard let reader = try? makeReader() else { return }
            var through = start
            var conversationOf: [UUID: ConversationID] = [:]
            var quiet = 0.0
            while let self {
                Thread.sleep(forTimeInterval: seconds)
                quiet += seconds
                guard let last = try? reader.lastPosition() else { continue }
                guard last > through else {
                    // Now and then a beat, by which a follower finds a closed connection.
                    if quiet >= 15 { quiet = 0; self.announce() }
                    continue
                }
                var changed: Set<ConversationID> = []
                var recordings: Set<UUID> = []
                try? reader.scan(EventQuery(positions: (through + 1)...last), verify: false, skippingDamaged: { _ in }) { recordings.insert($0.stream) }
                // The conversations of recordings not met before, in one read of the catalog.
                let unknown = recordings.filter { conversationOf[$0] == nil }
                for entry in (try? reader.catalogEntries(ofStreams: unknown)) ?? [] where entry.tag.kind == .conversation {
                    conversationOf[entry.stream] = ConversationID(entry.tag.id)
                }
                for stream in recordings { if let conversation = conversationOf[stream] { changed.insert(conversation) } }
                through = last
                quiet = 0
                self.grew(changed)
            }
        }.start()
    }

    /// Whether the model follows a growing log.
    public var isFollowing: Bool { locked { follows } }

    /// How many times the log was seen to grow, then each growth as it is seen (and, every
    /// 15 s without one, the same count again), until the caller stops listening.
    public func changes() -> AsyncStream<Int> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let id = UUID()
            let now = locked { () -> Int in
                subscribers[id] = continuation
                return growths
            }
            continuation.yield(now)
            continuation.onTermination = { [weak self] _ in self?.locked { _ = self?.subscribers.removeValue(forKey: id) } }
        }
    }

    /// The log grew: what `changed` showed is forgotten, the list and the audit start over.
    private func grew(_ changed: Set<ConversationID>) {
        let restartAudit = locked { () -> Bool in
            for conversation in changed {
                open[conversation] = nil
                recent.removeAll { $0 == conversation }
                keep(nil, in: \.checks, of: conversation)
                keep(nil, in: \.signatures, of: conversation)
                stored[conversation] = nil
            }
            logWide = nil
            verdicts = [:]
            resolved = [:]
            streamsOf = [:]
            listGeneration += 1
            listed = []
            listedSorted = nil
            listIsComplete = false
            listFailure = nil
            gameless = []
            auditGeneration += 1
            conversationCount = nil
            conversationsChecked = 0
            growths += 1
            return auditStarted
        }
        // After the open games went: a fold that began before this (on an open game or on
        // the file) is not kept, and one that begins after it reads the grown log.
        pageMemo.forget(changed)
        listInBackground()
        if restartAudit { auditInBackground() }
        announce()
    }

    /// A background pass ended: another starts if the log grew meanwhile.
    private func passEnded(list: Bool) {
        let again = locked { () -> Bool in
            if list {
                defer { (listRunning, listStale) = (false, false) }
                return listStale
            }
            defer { (auditRunning, auditStale) = (false, false) }
            return auditStale
        }
        guard again else { return }
        if list { listInBackground() } else { auditInBackground() }
    }

    private func announce() {
        let (count, waiting) = locked { (growths, Array(subscribers.values)) }
        for continuation in waiting { continuation.yield(count) }
    }

    /// Whether the last background audit's results came from an earlier start.
    public var auditWasKept: Bool { locked { adoptedKeptResults } }

    private func adopt(_ results: KeptResults.Results) {
        var checks: [ConversationID: [Finding]] = [:]
        for (id, findings) in results.conversations {
            guard let uuid = UUID(uuidString: id) else { continue }
            checks[ConversationID(uuid)] = findings
        }
        locked {
            self.checks.merge(checks) { _, kept in kept }
            findingsChanged += 1
            conversationCount = checks.count
            conversationsChecked = checks.count
            logWide = results.logWide
            adoptedKeptResults = true
        }
    }

    private func keptResults(logWide: [Finding]) -> KeptResults.Results {
        KeptResults.Results(conversations: Dictionary(uniqueKeysWithValues: checks.map { ($0.key.uuid.uuidString.lowercased(), $0.value) }),
                            logWide: logWide, list: keptList())
    }

    /// The whole game list as it can be kept, once read whole. Under the lock.
    private func keptList() -> KeptResults.List? {
        guard listIsComplete, listFailure == nil else { return nil }
        return KeptResults.List(games: listed, gameless: gameless.map {
            KeptResults.List.Gameless(conversation: $0.conversation.uuid.uuidString.lowercased(), kind: $0.kind, events: $0.events)
        }, damaged: damaged)
    }

    /// The name of the file's kept results (see ``KeptResults/key(of:)``), worked out once.
    private func keptKey() -> String? {
        keptKeyLock.lock()
        defer { keptKeyLock.unlock() }
        if let known = keptKeyMemo { return known }
        let key = kept?.key(of: location)
        keptKeyMemo = .some(key)
        return key
    }

    /// Shows a kept list as the whole list (the pass that would read it is not run).
    private func adopt(_ list: KeptResults.List, generation: Int) {
        let gameless = list.gameless.compactMap { kept in
            UUID(uuidString: kept.conversation).map { Gameless(conversation: ConversationID($0), kind: kept.kind, events: kept.events) }
        }
        locked {
            guard listGeneration == generation else { return }
            listWasKept = true
            listed = list.games
            listedSorted = nil
            listIsComplete = true
            damaged = list.damaged
            self.gameless = gameless
            resolveFromTheList(list.games, gameless: gameless)
        }
    }

    /// Keeps where each whole id the list names is, once the list is the whole log's (its
    /// pass folded every event, or kept what such a pass found): a game's id to its
    /// conversation and game, a conversation's to itself. An id named in more than one
    /// place is left to the catalog (which names it ambiguous). Resolving an id through the
    /// catalog reads and checks the events its rows point at: under 50 clients asking for
    /// games at random, an eighth of the server's time. Under the lock.
    private func resolveFromTheList(_ games: [GameSummary], gameless: [Gameless]) {
        struct Place: Hashable {
            var conversation: UUID
            var game: UUID?
        }
        var places: [String: Set<Place>] = [:]
        for game in games {
            guard let conversation = UUID(uuidString: game.conversation), let session = UUID(uuidString: game.id) else { continue }
            places[game.id.lowercased(), default: []].insert(Place(conversation: conversation, game: session))
            places[game.conversation.lowercased(), default: []].insert(Place(conversation: conversation, game: nil))
        }
        for conversation in gameless {
            places[conversation.conversation.uuid.uuidString.lowercased(), default: []].insert(Place(conversation: conversation.conversation.uuid, game: nil))
        }
        for (id, found) in places where found.count == 1 && resolved[id] == nil {
            let place = found.first!
            resolved[id] = (ConversationID(place.conversation), place.game.map(SessionID.init))
        }
    }
}

/// Why a viewer cannot follow its log.
public enum ViewerFollowError: Error, CustomStringConvertible, Equatable {
    /// The log's catalog does not cover every event, so what changed cannot be told.
    case noCatalog(location: String)
    /// The model reads its file as one that does not change (made without `followingAppends`).
    case readsAsUnchanging(location: String)

    public var description: String {
        switch self {
        case .readsAsUnchanging(let location):
            return "the viewer reads \(SafeText.line(location)) as a file that does not change: open it with followingAppends to follow it"
        case .noCatalog(let location):
            return "the catalog of \(SafeText.line(location)) does not cover every event, so which games a new event changes cannot be told"
        }
    }
}
