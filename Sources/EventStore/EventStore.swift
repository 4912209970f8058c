@_exported import EventLog
import Foundation
import GRDB
import ZlibCodec

/// A durable, append-only, hash-chained log of compressed events in one SQLite file.
///
/// Open one per process and use it from one thread at a time. Several processes may
/// append to the same file at once: appends take SQLite's write lock, wait up to
/// ``busyTimeout`` for it, and are serialised.
public final class EventStore {
    /// How the store may use the file.
    public enum Access: Sendable {
        /// Create the file if missing, apply migrations, append.
        case readWrite
        /// Never create, migrate or write; the file is left byte-for-byte unchanged.
        case readOnly
    }

    /// The largest canonical payload accepted (``LogLimits/maximumPayloadSize``).
    public static let maximumPayloadSize = LogLimits.maximumPayloadSize
    /// How long an append waits for another process's write lock.
    public static let busyTimeout: TimeInterval = 15

    public let path: String
    public let access: Access
    let queue: DatabaseQueue
    let clock: @Sendable () -> Timestamp

    /// How new events are stored: see ``Layout``.
    public let layout: Layout
    /// Events per block for new blocks (``Layout/blocks``); a benchmark may change it.
    public var blockCapacity = EventBlock.defaultCapacity
    /// Whether the file has blocks (schema 9 and later): older files are read as rows only.
    private(set) var hasBlocks = false
    /// Whether `events` has its `leaf` column (schema 7 and later).
    private(set) var hasLeafColumn = false
    /// Whether the file has `tree_nodes` (schema 7 and later).
    private(set) var hasTreeNodes = false
    /// Tree nodes and full tiles read for proofs (see ``ProofCache``): this reader's own
    /// unless set to one its log's other readers share.
    package var proofCache = ProofCache()
    /// Where ``remembering(blocks:_:)`` keeps decoded blocks while it runs.
    let memoLock = NSLock()
    // Guarded by `memoLock`.
    var memoSlot: BlockMemo?

    /// How a store writes new events. Reads take both forms, whichever the file holds.
    public enum Layout: Sendable {
        /// Runs of consecutive events, compressed together (docs/FORMAT.md, "Event blocks").
        case blocks
        /// One row of `events` per event, as before blocks: for a copy of a shared store,
        /// which sends back the rows it wrote.
        case rows
    }

    private var compressor: Compressor?
    private let payloadDecoder = PayloadDecoder()
    /// Names of recordings and event types this store's reads found (see ``KnownRowNames``):
    /// kept by a store that reads its file as immutable, or asked to (``keepStreamNames()``);
    /// never by a writer (its rolled-back rows free their ids), nor, unasked, by one that
    /// reads a file another process may change (it reads the file as it is now).
    private(set) var knownNames: KnownRowNames?
    var typeIDs: [String: Int64] = [:]
    /// Catalog rows this store committed (a bounded set): its appends skip them.
    var storedCatalogRows = Set<AppendPlanner.CatalogRow>()

    /// Opens (and for `.readWrite`, creates and migrates) the database at `path`.
    /// - Throws: ``EventStoreError`` naming the problem: not found, not SQLite, not a
    ///   gamelog database, a newer schema, damaged, read-only.
    /// - Parameter maximumSize: a cap on the file's size in bytes (SQLite's
    ///   `max_page_count`); an append that would pass it fails with
    ///   ``EventStoreError/storageFull(path:detail:)`` and stores nothing.
    /// - Parameter layout: how new events are stored; blocks unless the file is a copy
    ///   of a shared store's rows.
    /// - Parameter followingAppends: with `.readOnly`, the file is opened through SQLite's
    ///   locking even when no writer has it open (never as immutable), so that each read
    ///   sees what another process appended since: what a reader of a growing log needs
    ///   (`serve --follow`). SQLite may then create the `-wal` and `-shm` files beside it.
    public init(path: String, access: Access = .readWrite, maximumSize: Int? = nil, layout: Layout = .blocks,
                followingAppends: Bool = false, clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }) throws {
        self.path = path
        self.access = access
        self.layout = layout
        self.clock = clock
        var isFolder: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
        if exists && isFolder.boolValue { throw EventStoreError.isAFolder(path: path) }
        if !exists && access == .readOnly { throw EventStoreError.databaseNotFound(path: path) }
        if !exists {
            let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
            var parentIsFolder: ObjCBool = false
            if !FileManager.default.fileExists(atPath: parent, isDirectory: &parentIsFolder) || !parentIsFolder.boolValue {
                throw EventStoreError.folderNotFound(path: path, folder: parent)
            }
        }
        if exists { try Self.checkHeader(path: path, access: access) }

        var config = Configuration()
        config.readonly = access == .readOnly
        config.busyMode = .timeout(Self.busyTimeout)
        config.foreignKeysEnabled = true
        config.label = "gamelog"
        // SQL stored in the file (triggers, views, defaults) runs only with the plain
        // functions SQLite deems safe; and `Schema.check` refuses any object the
        // migrations did not make before anything is read or written.
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA trusted_schema = OFF") }
        // Keep the file untouched until we know it is ours: GRDB must not switch the
        // journal mode of a foreign or newer database.
        config.journalMode = .default
        let opening = followingAppends ? path : Self.openingPath(path, access)
        // Names are kept across reads only where SQLite itself takes the file as unchanging
        // (opened immutable): a file another process may change is read as it is now.
        knownNames = opening != path ? KnownRowNames() : nil
        let queue = try Self.translating(path) {
            try DatabaseQueue(path: opening, configuration: config)
        }
        self.queue = queue

        let version = try Self.translating(path) { try queue.read { try Schema.check($0, path: path) } }
        switch access {
        case .readOnly:
            if version == 0 { throw EventStoreError.databaseNotFound(path: path) }
            if version < Schema.oldestReadableVersion {
                throw EventStoreError.olderSchema(path: path, found: version, current: Schema.currentVersion)
            }
        case .readWrite:
            try Self.translating(path) {
                try queue.writeWithoutTransaction { db in
                    // WAL lets readers in other processes proceed during appends; NORMAL
                    // sync keeps every committed event through a process crash. Switching
                    // needs the file to itself, and SQLite answers "locked" at once, without
                    // its busy handler, while another writer migrates a new file: this one
                    // waits its turn as a write would.
                    let deadline = Date().addingTimeInterval(Self.busyTimeout)
                    while true {
                        do {
                            try db.execute(sql: "PRAGMA journal_mode = WAL")
                            break
                        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date() < deadline {
                            usleep(20_000)
                        }
                    }
                    try db.execute(sql: "PRAGMA synchronous = NORMAL")
                    // The recorder's ids are time-ordered and append at the end of the
                    // unique id index, but ids from elsewhere (imported logs, other
                    // recorders) may be random and land all over it; once it outgrows
                    // SQLite's default 2 MB cache, every append reads pages back (on 1M
                    // random ids the raw C API limit fell to a third). 64 MB holds the
                    // index of some millions of events and is only used as the file
                    // grows; with time-ordered ids it makes no measurable difference.
                    try db.execute(sql: "PRAGMA cache_size = -65536")
                    if let maximumSize {
                        let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                        try db.execute(sql: "PRAGMA max_page_count = \(max(1, maximumSize / pageSize))")
                    }
                }
                if version < Schema.currentVersion {
                    try Schema.migrate(queue, from: version, now: clock())
                }
            }
        }
        (hasBlocks, hasLeafColumn, hasTreeNodes) = try Self.translating(path) {
            try queue.read { db in
                // GRDB caches the schema a connection saw; another process may have made
                // every table since (two writers creating one file: the one that found
                // the file empty and the migrations done took it for a log without blocks).
                db.clearSchemaCache()
                try Schema.checkForms(db, path: path)
                return (try db.tableExists("event_blocks"), try db.columns(in: "events").contains { $0.name == "leaf" },
                        try db.tableExists("tree_nodes"))
            }
        }
    }

    /// The size of the database file in bytes (its write-ahead log aside); 0 if it
    /// cannot be read.
    public var fileSize: Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// The schema version of the open database.
    public func schemaVersion() throws -> Int {
        try read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }
    }

    /// The number of events and the last position (equal in an untampered log).
    public func count() throws -> (events: Int64, lastPosition: Int64) {
        try read { db in
            (try eventCount(db), try lastPosition(db))
        }
    }

    /// The position of the last event (0 for an empty log), from the primary key alone.
    public func lastPosition() throws -> Int64 {
        try read { db in try lastPosition(db) }
    }

    /// The hash of the last event: publish it to anchor the whole log.
    public func headHash() throws -> [UInt8] {
        try read { db in
            try hash(db, at: try lastPosition(db)) ?? ChainHash.genesis
        }
    }

    /// The current version of each stream (its last event's version).
    public func streamVersion(_ stream: UUID) throws -> Int64 {
        try read { db in
            try Int64.fetchOne(db, sql: "SELECT version FROM streams WHERE uuid = ?", arguments: [Data(stream.bytes)]) ?? 0
        }
    }

    // MARK: - Plumbing

    /// Reads; inside an import's transaction (``importing(_:)``) it reads that
    /// transaction's own view, so an import's checks see what it has stored so far.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        try Self.translating(path) { try queue.unsafeReentrantRead(body) }
    }

    /// The name SQLite opens. A reader of a file no writer has open (no write-ahead
    /// log beside it) opens it as immutable: SQLite then creates no `-wal` or `-shm`
    /// file, so reading leaves the folder as it was and works from read-only media.
    /// With a log present a writer may be at work, and SQLite's own locking is needed.
    ///
    /// This is also why readers are `DatabaseQueue`s, one a thread
    /// (``SignedLogReader/anotherReader()``), and not one GRDB `DatabasePool`: a pool
    /// reads through the write-ahead log and its shared memory, which it creates beside
    /// the file, and a log handed over for audit (a phone's, a copy on read-only media)
    /// must be read without a byte written next to it. The queues of one file read at
    /// once as a pool's readers would.
    static func openingPath(_ path: String, _ access: Access) -> String {
        guard access == .readOnly else { return path }
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0
        guard wal == 0, let encoded = URL(fileURLWithPath: path).standardizedFileURL.path
            .addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) else { return path }
        return "file:\(encoded)?immutable=1"
    }

    static func checkHeader(path: String, access: Access) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw EventStoreError.readOnly(path: path, detail: "the file cannot be opened for reading")
        }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 100)) ?? Data()
        if header.isEmpty { return } // An empty file: SQLite treats it as a new database.
        let magic = Data("SQLite format 3\u{0}".utf8)
        guard header.count >= 16, header.prefix(16) == magic else {
            throw EventStoreError.notADatabase(path: path, reason: "it does not start with the SQLite file header")
        }
        guard header.count == 100 else {
            throw EventStoreError.notADatabase(path: path, reason: "it is truncated inside the 100-byte SQLite header")
        }
    }

    /// Runs `body`, turning SQLite's errors into ``EventStoreError``s that name the file.
    static func translating<T>(_ path: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError {
            throw translate(error, path: path)
        }
    }

    static func translate(_ error: DatabaseError, path: String) -> Error {
        let detail = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_NOTADB:
            return EventStoreError.notADatabase(path: path, reason: detail)
        case .SQLITE_CORRUPT:
            return EventStoreError.damagedDatabase(path: path, detail: detail)
        case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH:
            return EventStoreError.readOnly(path: path, detail: detail)
        case .SQLITE_FULL:
            return EventStoreError.storageFull(path: path, detail: detail)
        case .SQLITE_IOERR:
            if error.extendedResultCode == .SQLITE_IOERR_SHORT_READ {
                return EventStoreError.damagedDatabase(path: path, detail: "the file is truncated")
            }
            return EventStoreError.damagedDatabase(path: path, detail: detail)
        default:
            return error
        }
    }

    // MARK: - Compression

    /// Deflaters primed with one dictionary: one per core that compresses a batch.
    final class Compressor {
        let dictionaryID: Int64?
        let deflaters: [RawDeflater]
        private let dictionary: [UInt8]
        private var blockLanes: [RawDeflater]?
        init(dictionaryID: Int64?, dictionary: [UInt8]) throws {
            self.dictionaryID = dictionaryID
            self.dictionary = dictionary
            // Level 6: within 1% of level 9's size on recorded events, and faster
            // (tools/bench-store.sh prints the sweep).
            let lanes = min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 4)
            self.deflaters = try (0..<lanes).map { _ in try RawDeflater(level: 6, dictionary: dictionary) }
        }

        /// Deflaters for blocks, one per lane: with zlib's largest window, since a
        /// block's events repeat each other further back than a dictionary-sized one,
        /// at ``EventBlock/compressionLevel`` and ``EventBlock/compressionMemoryLevel``.
        func blockDeflaters() throws -> [RawDeflater] {
            if let blockLanes { return blockLanes }
            let made = try deflaters.indices.map { _ in
                try RawDeflater(level: EventBlock.compressionLevel, memoryLevel: EventBlock.compressionMemoryLevel,
                                dictionary: dictionary, largestWindow: true)
            }
            blockLanes = made
            return made
        }
    }

    /// The compressor for new events: primed with the newest dictionary.
    func currentCompressor(_ db: Database) throws -> Compressor {
        let newestID = try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM dictionaries"))
        if let compressor, compressor.dictionaryID == newestID { return compressor }
        var bytes: [UInt8] = []
        if let newestID {
            bytes = Array(try Data.fetchOne(db, sql: "SELECT bytes FROM dictionaries WHERE id = ?", arguments: [newestID]) ?? Data())
        }
        let made = try Compressor(dictionaryID: newestID, dictionary: bytes)
        compressor = made
        return made
    }

    static func encode(_ payload: [UInt8], deflater: RawDeflater, dictionaryID: Int64?) throws
        -> (codec: PayloadCodec, dictionaryID: Int64?, bytes: [UInt8]) {
        stored(payload, compressed: try deflater.compress(payload), dictionaryID: dictionaryID)
    }

    /// A payload as a row stores it: `compressed` (by a deflater primed with the
    /// dictionary `dictionaryID`, or with none) where it is the shorter, else raw.
    static func stored(_ payload: [UInt8], compressed: [UInt8], dictionaryID: Int64?)
        -> (codec: PayloadCodec, dictionaryID: Int64?, bytes: [UInt8]) {
        guard compressed.count < payload.count else { return (.raw, nil, payload) }
        if let dictionaryID { return (.deflateWithDictionary, dictionaryID, compressed) }
        return (.deflate, nil, compressed)
    }

    /// A payload (or a block's body, up to its larger `limit`) as stored, decompressed.
    func decodePayload(_ db: Database, position: Int64, codec: Int64, dictionaryID: Int64?,
                       rawSize: Int, stored: [UInt8], limit: Int = EventStore.maximumPayloadSize) throws -> [UInt8] {
        try payloadDecoder.decode(position: position, codec: codec, dictionaryID: dictionaryID, rawSize: rawSize,
                                  stored: stored, limit: limit) { try Self.dictionary(db, id: $0) }
    }

    /// A stored dictionary's bytes, nil when the log has none of that id.
    private static func dictionary(_ db: Database, id: Int64) throws -> [UInt8]? {
        try Data.fetchOne(db, sql: "SELECT bytes FROM dictionaries WHERE id = ?", arguments: [id]).map(Array.init)
    }

    /// Keeps the names of the streams its reads meet for the store's life, every one read
    /// in one statement at the first lookup, instead of looking them up again in each read:
    /// for a read-only store that reads one log in many pieces over a short time (a full
    /// replay's decoding threads). A committed stream's row id and name never change, but a
    /// file changed under a long-lived reader must be read as it is now, so a store that
    /// may see another process's changes does not keep them unless asked (one that reads
    /// its file as immutable keeps those it meets); and a writer's store must not (a row id
    /// of its own rolled-back rows is used again).
    package func keepStreamNames() {
        precondition(access == .readOnly, "only a read-only store keeps stream names")
        if knownNames == nil { knownNames = KnownRowNames() }
        knownNames?.loadEveryStream()
    }

    /// ``decodePayload(_:position:codec:dictionaryID:rawSize:stored:limit:)`` only as far as
    /// `read` needs (``PayloadDecoder/decodePrefix(position:codec:dictionaryID:rawSize:stored:first:dictionary:read:)``).
    func decodePayloadPrefix(_ db: Database, position: Int64, codec: Int64, dictionaryID: Int64?, rawSize: Int, stored: [UInt8],
                             first: Int, read: (UnsafeBufferPointer<UInt8>) throws -> Int?) throws {
        try payloadDecoder.decodePrefix(position: position, codec: codec, dictionaryID: dictionaryID, rawSize: rawSize,
                                        stored: stored, first: first, dictionary: { try Self.dictionary(db, id: $0) }, read: read)
    }

    // MARK: - Dictionaries

    /// Adds a preset dictionary; new events are compressed with the newest one.
    /// Old events keep naming theirs, so they stay readable.
    @discardableResult
    public func addDictionary(name: String, bytes: [UInt8]) throws -> Int64 {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        guard (1...32768).contains(bytes.count) else {
            throw EventStoreError.invalidDictionary(reason: "a dictionary must hold 1 to 32768 bytes, not \(bytes.count)")
        }
        return try Self.translating(path) {
            try queue.write { db in
                try db.execute(
                    sql: "INSERT INTO dictionaries (name, bytes, sha256, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [name, Data(bytes), Data(ChainHash.sha256(bytes)), clock().microsecondsSince1970])
                return db.lastInsertedRowID
            }
        }
    }

    /// The stored dictionaries, oldest first.
    public func dictionaries() throws -> [(id: Int64, name: String, size: Int)] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, length(bytes) FROM dictionaries ORDER BY id").map { ($0[0], $0[1], $0[2]) }
        }
    }
}

/// Compresses payloads one at a time as a log's rows store them (the log's newest
/// dictionary), for a store that writes a row for each event: the shared store in
/// PostgreSQL.
///
/// With deflate's fixed codes (``FixedCodeDeflater``), not zlib's: a payload is a few
/// hundred bytes, and zlib spent most of its time on each on copying its primed state
/// and building Huffman trees: a fifth of a collector's CPU (docs/BENCHMARKS.md,
/// session 36). The codecs, and so every reader, are the same.
package final class PayloadEncoder {
    package let dictionaryID: Int64?
    private let deflater: FixedCodeDeflater

    /// A payload as a row stores it: its codec, its dictionary and the stored bytes.
    package typealias Encoded = (codec: Int64, dictionaryID: Int64?, bytes: [UInt8])

    package init(dictionaryID: Int64?, dictionary: [UInt8]) {
        self.dictionaryID = dictionaryID
        deflater = FixedCodeDeflater(dictionary: dictionary)
    }

    /// The payload's codec, dictionary and stored bytes (raw where compressing does not pay).
    package func encode(_ payload: [UInt8]) -> Encoded {
        let encoded = EventStore.stored(payload, compressed: deflater.compress(payload), dictionaryID: dictionaryID)
        return (encoded.codec.rawValue, encoded.dictionaryID, encoded.bytes)
    }
}
