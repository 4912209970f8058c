import EventStore
import Foundation
import GameKit
import Interchange
import SharedStore

/// Accepts devices' logs into a shared store and countersigns their heads: a witness
/// that holds no state of its own (everything is in the store), so any number of
/// collectors can run against one PostgreSQL behind any load balancer.
///
/// An upload is a device's new events as export lines (``DeviceUpload``). It is stored
/// only if `import` would store it (every line, stream chain, head signature and root
/// checks), its key is enrolled under the device name it signs as, and its heads extend
/// the newest head accepted from that device: a changed event, a conflicting line, a
/// rollback or a fork of the device's history is refused and nothing of it is kept.
public final class Collector: Sendable {
    public let store: SharedStore
    /// The witness's key name in its cosignatures.
    public let witness: String
    /// The witness's key (its device name is unused).
    public let witnessKey: DeviceKey
    /// The largest upload body accepted, in bytes.
    public static let maximumUpload = 64 << 20
    /// What this collector counted since it started (`GET /metrics`).
    public let metrics: CollectorMetrics
    /// Puts checked uploads into the store in groups (see ``GroupCommit``).
    private let sequencer = GroupCommit<StoreGroups>()
    /// The events of one `COPY` of a group's import: the writer plans a batch while
    /// PostgreSQL stores the one before, so smaller batches overlap more, and each costs
    /// a few statements more (its recordings' and catalog's rows).
    static let eventsPerCopy = 2_000
    /// The store's newest compression dictionary as last read, and when: uploads'
    /// payloads are compressed with it while they wait for the writer.
    private let dictionary = NSLockedValue<(value: SharedStore.Dictionary?, read: ContinuousClock.Instant)?>(nil)
    /// Payloads compressed before, reused for the same bytes: deflate was a fifth of the
    /// collector's CPU, and about half of the payloads of a load of games repeat one.
    private let compressionCache = PayloadCompressionCache()

    /// Folds the conversations uploads wrote to into the store's game summaries.
    private let summaries: SummaryRefresher?
    /// Uploads being checked or stored: the summaries' passes give way to them.
    private let uploadsInFlight = NSLockedValue(0)

    /// - Parameter games: the games whose summaries it keeps current in the store (what a
    ///   page of games reads instead of folding), folded after each write, off the request
    ///   path; nil keeps none (a page folds what is not current, and `gamelog index` stores them).
    public init(store: SharedStore, witness: String, witnessKey: DeviceKey, games: GameRegistry? = nil) {
        self.store = store
        self.witness = witness
        self.witnessKey = witnessKey
        let metrics = CollectorMetrics()
        self.metrics = metrics
        let inFlight = uploadsInFlight
        summaries = games.map {
            var writer = GameSummaryWriter(store: store, games: $0)
            writer.givesWayToWriters = true
            return SummaryRefresher(writer: writer, metrics: metrics, busy: { inFlight.withLock { $0 > 0 } })
        }
    }

    /// Uploads checked and handed to the writer, not answered yet (waiting, or in a write
    /// still open): how a test knows that every upload reached the writer.
    package var uploadsCheckedAndUnanswered: Int { sequencer.unansweredCount }

    /// Returns once the game summaries of every conversation uploads wrote to so far were
    /// stored (or their pass failed); at once for a collector that keeps none.
    public func summariesSettled() async {
        await summaries?.settled()
    }

    /// What an accepted upload did.
    public struct Accepted: Codable, Hashable, Sendable {
        public var device: String
        public var publicKey: String
        /// The accepted head's size and root (base64, as in the note).
        public var size: Int64
        public var stored: Int
        /// The head's note with the collector's cosignature line.
        public var note: String
        /// The cosignature line alone.
        public var cosignature: String
        /// The witness's public key, hex: trust it only as far as you trust where you got it.
        public var witnessKey: String
    }

    /// Why an upload or enrollment was refused.
    public enum Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        /// The upload cannot be read or does not check (HTTP 400).
        case malformed(String)
        /// The device key is not enrolled, or signs as another device (HTTP 403).
        case notEnrolled(String)
        /// The upload contradicts what the collector holds (HTTP 409).
        case conflict(String)

        public var description: String {
            switch self {
            case .malformed(let text), .notEnrolled(let text), .conflict(let text): text
            }
        }

        public var status: Int {
            switch self {
            case .malformed: 400
            case .notEnrolled: 403
            case .conflict: 409
            }
        }
    }

    /// The HTTP header in which an upload names its device's public key (64 hex digits),
    /// so the collector refuses a key it has not enrolled before it reads the body.
    public static let deviceKeyHeader = "Gamelog-Device-Key"

    /// Whether `publicKey` may upload here: nil if so, else the refusal (403).
    public func admits(publicKey: [UInt8]) async throws -> Refusal? {
        if case .failure(let refusal) = try await enrollment(of: publicKey) { return refusal }
        return nil
    }

    /// The device `publicKey` is enrolled as, or the refusal (403) of its uploads.
    func enrollment(of publicKey: [UInt8]) async throws -> Result<String, Refusal> {
        guard let device = try await store.enrolledDevice(publicKey: publicKey) else {
            return .failure(.notEnrolled("the key \(Hex.string(publicKey).prefix(16)) is not enrolled at this collector"))
        }
        return .success(device)
    }

    /// Checks and stores one upload; returns the accepted head, cosigned.
    /// - Parameter declaredKey: the key the request named (``deviceKeyHeader``): the
    ///   upload's tree must be that key's.
    public func accept(_ body: Data, declaredKey: [UInt8]? = nil) async throws -> Accepted {
        try await accept(body, declaredKey: declaredKey, enrolledAs: nil)
    }

    /// ``accept(_:declaredKey:)``; `enrolledAs`: the device ``enrollment(of:)`` found
    /// `declaredKey` enrolled as, not read again (a key's enrollment never changes): one
    /// round trip to the store fewer on every upload's way.
    func accept(_ body: Data, declaredKey: [UInt8]?, enrolledAs: String?) async throws -> Accepted {
        uploadsInFlight.withLock { $0 += 1 }
        defer { uploadsInFlight.withLock { $0 -= 1 } }
        // Parsing and checking an upload is seconds of CPU for a large one: off the
        // cooperative pool, on threads that give way to the writer (see LowPriorityExecutor).
        return try await withTaskExecutorPreference(LowPriorityExecutor.shared) {
            try await check(body, declaredKey: declaredKey, enrolledAs: enrolledAs)
        }
    }

    private func check(_ body: Data, declaredKey: [UInt8]?, enrolledAs: String?) async throws -> Accepted {
        guard body.count <= Self.maximumUpload else {
            throw Refusal.malformed("the upload holds \(body.count) bytes, more than the \(Self.maximumUpload) accepted; push sends smaller ones")
        }
        let plan: ImportPlan
        do {
            plan = try Interchange.check(files: [ExportFile(name: "upload", contents: body)])
        } catch let error as InterchangeError {
            switch error {
            case .malformedLine, .invalidPayload, .unreadableFile:
                // Not an upload at all: lines that do not parse.
                throw Refusal.malformed(error.description)
            default:
                // An edited line, a forged head, a broken chain: the upload contradicts its own signatures.
                throw Refusal.conflict(error.description)
            }
        }
        let trees = plan.plannedTrees
        guard trees.count == 1, let tree = trees.first else {
            throw Refusal.malformed("an upload carries one device's tree; this one carries \(trees.count)")
        }
        if let declaredKey, declaredKey != tree.owner.publicKey {
            throw Refusal.malformed("the upload's tree is signed by key \(Hex.string(tree.owner.publicKey).prefix(16)), and the request named \(Hex.string(declaredKey).prefix(16)) in \(Self.deviceKeyHeader)")
        }
        guard plan.unsignedStreams.isEmpty else {
            throw Refusal.malformed("the upload holds events of recordings no tree line names (unsigned events)")
        }
        guard let newest = tree.heads.last else { throw Refusal.malformed("the upload carries no signed head") }
        // Only signed history is stored: an event past the newest head is one no signature
        // covers, and keeping it would make the device's own next push conflict with it.
        if let last = tree.leaves.last, last >= newest.size {
            let past = tree.leaves.count - (tree.leaves.firstIndex { $0 >= newest.size } ?? tree.leaves.count)
            throw Refusal.malformed("the upload holds \(past) events past its newest signed head (\(newest.size) events): a device pushes only what its heads sign; nothing was stored")
        }
        // The declared key is the tree's (checked above): its enrollment was read with the request's header.
        let enrolledDevice: String?
        if declaredKey != nil, let enrolledAs {
            enrolledDevice = enrolledAs
        } else {
            enrolledDevice = try await store.enrolledDevice(publicKey: tree.owner.publicKey)
        }
        guard let enrolled = enrolledDevice else {
            throw Refusal.notEnrolled("the key \(Hex.string(tree.owner.publicKey).prefix(16)) (device \(SafeText.line(tree.owner.device))) is not enrolled at this collector")
        }
        guard enrolled == tree.owner.device else {
            throw Refusal.notEnrolled("the key is enrolled as device \(SafeText.line(enrolled)), and the upload signs as \(SafeText.line(tree.owner.device))")
        }
        // Compressing payloads is most of what a write did per event, and needs no place
        // in the store: done here, in parallel with other uploads and the writer.
        let compressed = try CompressedPayloads(dictionary: try await compressionDictionary(), cache: compressionCache,
                                                forEach: plan.forEachPayload)
        return try await sequencer.store(Upload(plan: plan, tree: tree, newest: newest, compressed: compressed), with: StoreGroups(collector: self))
    }

    /// The store's newest dictionary, read again after a minute: a store given a new one
    /// meanwhile has its payloads compressed again by the writer (correct, only slower).
    private func compressionDictionary() async throws -> SharedStore.Dictionary? {
        let now = ContinuousClock.now
        if let known = dictionary.withLock({ $0 }), now - known.read < .seconds(60) { return known.value }
        let value = try await store.newestDictionary()
        dictionary.withLock { $0 = (value, now) }
        return value
    }

    /// An upload checked on its own (everything but its place in the store), waiting to be stored.
    struct Upload: Sendable {
        var plan: ImportPlan
        var tree: PlannedTree
        var newest: TreeHead
        var compressed: CompressedPayloads
        var events: Int { tree.leaves.count }
    }

    /// A group's answers, and the log's tail its write committed (see ``GroupCommit``).
    typealias StoredGroup = GroupWritten<Accepted, SharedStore.WriteTail>

    /// The collector's store as ``GroupCommit`` writes its groups of uploads.
    struct StoreGroups: GroupWriting {
        let collector: Collector

        static func events(of upload: Upload) -> Int { upload.events }

        func write(_ uploads: [Upload], whenPlanned: (@Sendable (SharedStore.WriteTail) -> Void)?) async throws -> StoredGroup {
            try await collector.storeGroup(uploads, whenPlanned: whenPlanned)
        }

        func write(_ uploads: [Upload], following tail: SharedStore.WriteTail, outcome: @escaping @Sendable () async -> SharedStore.WriteTail?,
                   whenPlanned: (@Sendable (SharedStore.WriteTail) -> Void)?) async throws -> StoredGroup? {
            try await collector.storeGroup(uploads, following: SharedStore.Followed(tail: tail, outcome: outcome), whenPlanned: whenPlanned)
        }

        /// Uploads of other devices, other recordings and other events: what one write
        /// reads of the store, the other does not write, and no row of one waits for the
        /// other's (an event id in both, from a retried or a forged upload, made the first
        /// write's import wait for its follower's, which waited for it).
        func mayFollow(_ previous: [Upload], with next: [Upload]) -> Bool {
            let devices = Set(previous.map(\.tree.owner.publicKey))
            let recordings = previous.reduce(into: Set<UUID>()) { $0.formUnion($1.plan.recordings) }
            return next.allSatisfy { !devices.contains($0.tree.owner.publicKey) && recordings.isDisjoint(with: $0.plan.recordings) }
                && ImportPlan.eventIDsAreDisjoint(previous.map(\.plan), next.map(\.plan))
        }

        func undidAnnouncedTail(_ error: Error) -> Bool { error is PostgresLogWriter.AnnouncedTailUndone }

        func followed(kept: Bool) { collector.metrics.followedWrite(kept: kept) }
    }

    /// Stores a group of checked uploads in one write of the store (one lock, one commit)
    /// and answers for each: accepted, cosigned; or refused (nothing of it kept). Only a
    /// failure of the store itself fails the group. Calls `whenPlanned` with the log's tail
    /// as soon as the write has planned and sent the group's last import, before
    /// PostgreSQL has stored it: the next group may follow it from there
    /// (``storeGroup(_:following:whenPlanned:)``).
    ///
    /// The store is written as itself (``SharedStore/writeNatively(_:)``): no copy of it
    /// is made or brought up to date, so a new collector's first push costs what a warm
    /// one's does.
    func storeGroup(_ uploads: [Upload], whenPlanned: (@Sendable (SharedStore.WriteTail) -> Void)?) async throws -> StoredGroup {
        let (stored, tail) = try await store.writeNativelyReportingTail { writer in
            writer.whenPlanned = whenPlanned
            return try self.storeGroup(uploads, into: writer)
        }
        finished(uploads, stored)
        return StoredGroup(results: stored.results, tail: tail)
    }

    /// ``storeGroup(_:whenPlanned:)`` as a write that follows the write of the group before
    /// (``SharedStore/writeNatively(following:_:)``), planned and sent while that one is
    /// still stored. `uploads` share no device, recording or event id with any write still
    /// open (``StoreGroups/mayFollow(_:with:)``). Kept only
    /// if every upload is accepted as it would be written after the other; otherwise (a
    /// refusal, a conflict, the other write failed or another came between) nothing of
    /// it is kept and nil is returned, to be written again the usual way.
    func storeGroup(_ uploads: [Upload], following followed: SharedStore.Followed,
                    whenPlanned: (@Sendable (SharedStore.WriteTail) -> Void)?) async throws -> StoredGroup? {
        guard let (stored, tail) = try await store.writeNatively(following: followed, { writer in
            writer.whenPlanned = whenPlanned
            let stored = try self.storeGroup(uploads, into: writer)
            // A refusal is an outcome of the store as it was read: given only by a write
            // that holds the lock from its start.
            guard stored.results.allSatisfy({ (try? $0.get()) != nil }) else { throw CancellationError() }
            return stored
        }) else { return nil }
        finished(uploads, stored)
        return StoredGroup(results: stored.results, tail: tail)
    }

    /// What a group's write body answers: each upload's outcome, and how many were stored as one import.
    private struct GroupOutcome: Sendable {
        var results: [Result<Accepted, Error>]
        var together: Int
    }

    private func storeGroup(_ uploads: [Upload], into writer: PostgresLogWriter) throws -> GroupOutcome {
        let witness = self.witness, witnessKey = self.witnessKey
        var results = uploads.count > 1 ? try Self.storeTogether(uploads, into: writer, witness: witness, witnessKey: witnessKey) : [:]
        let together = results.values.filter { (try? $0.get()) != nil }.count
        // One upload alone: its import is the write's last.
        writer.announcesPlannedTail = uploads.count == 1
        for (index, upload) in uploads.enumerated() where results[index] == nil {
            do {
                // A refusal undoes this upload's rows alone.
                results[index] = .success(try writer.undoingOnFailure {
                    try Self.storeOne(upload, into: writer, witness: witness, witnessKey: witnessKey)
                })
            } catch let refusal as Refusal {
                results[index] = .failure(refusal)
            }
        }
        writer.announcesPlannedTail = false
        return GroupOutcome(results: uploads.indices.map { results[$0]! }, together: together)
    }

    /// After a group's write committed: its counts, and its recordings' summaries folded in the background.
    private func finished(_ uploads: [Upload], _ stored: GroupOutcome) {
        if stored.together > 0 { metrics.storedTogether(stored.together) }
        summaries?.note(zip(uploads, stored.results).reduce(into: Set<UUID>()) { streams, stored in
            if case .success = stored.1 { streams.formUnion(stored.0.plan.recordings) }
        })
    }

    /// The group's uploads that grow their devices' trees (one upload a device), stored
    /// as one import: one set of reads and one `COPY` for all of them rather than each
    /// upload's own, which were most of a write's time. Answers for the uploads it settled:
    /// those stored together, and those refused because they do not extend what their
    /// device sent before. The rest (a device's second upload in the group, one that
    /// repeats what was stored, or all of them if the import together fails) are left to
    /// be stored one by one, where a refusal is the upload's own.
    static func storeTogether(_ uploads: [Upload], into writer: PostgresLogWriter, witness: String,
                              witnessKey: DeviceKey) throws -> [Int: Result<Accepted, Error>] {
        var settled: [Int: Result<Accepted, Error>] = [:]
        let devices = Dictionary(uploads.map { ($0.tree.owner.publicKey, 1) }, uniquingKeysWith: +)
        var together: [Int] = []
        let alone = uploads.indices.filter { devices[uploads[$0].tree.owner.publicKey] == 1 }
        // Every device's stored tree, every recording's row and the log's tail in one round
        // trip: the import then reads nothing, and each batch of it is planned while
        // PostgreSQL copies the one before.
        let stored = try writer.prepare(publicKeys: alone.map { uploads[$0].tree.owner.publicKey },
                                        recordings: alone.reduce(into: Set<UUID>()) { $0.formUnion(uploads[$1].plan.recordings) })
        for index in alone {
            let upload = uploads[index]
            do {
                if try extends(upload, stored: stored[upload.tree.owner.publicKey]) { together.append(index) }
            } catch let refusal as Refusal {
                settled[index] = .failure(refusal)
            }
        }
        guard together.count > 1, let plan = ImportPlan.merging(together.map { uploads[$0].plan }),
              let compressed = CompressedPayloads.merging(together.map { uploads[$0].compressed }) else { return settled }
        writer.precompressed = compressed
        // Every upload in this import: nothing after it moves the log's tail.
        writer.announcesPlannedTail = together.count == uploads.count
        defer {
            writer.precompressed = nil
            writer.announcesPlannedTail = false
        }
        guard try writer.assumingNewEvents({ try Interchange.import(plan, into: writer, batchSize: Self.eventsPerCopy) }) != nil
        else { return settled }
        let cosigned = try together.map { index in
            (uploads[index], try Cosignature.signing(uploads[index].newest, witness: witness, key: witnessKey))
        }
        try writer.store(cosignatures: cosigned.map { ($0.0.newest, $0.1) })
        for (index, (upload, cosignature)) in zip(together, cosigned) {
            settled[index] = .success(accepted(upload.newest, stored: upload.events, cosignature: cosignature, witnessKey: witnessKey))
        }
        return settled
    }

    /// The answer to an accepted upload whose newest head is `newest`.
    static func accepted(_ newest: TreeHead, stored: Int, cosignature: Cosignature, witnessKey: DeviceKey) -> Accepted {
        Accepted(device: newest.device, publicKey: Hex.string(newest.publicKey), size: newest.size, stored: stored,
                 note: CosignedHead(head: newest, cosignatures: [cosignature]).note, cosignature: cosignature.line,
                 witnessKey: Hex.string(witnessKey.publicKey))
    }

    /// One upload into the store: it must extend what the device sent before (which
    /// includes the uploads stored before it in this group).
    static func storeOne(_ upload: Upload, into writer: PostgresLogWriter, witness: String, witnessKey: DeviceKey) throws -> Accepted {
        let grows = try extendsStoredTree(upload, in: writer)
        let summary: ImportSummary
        writer.precompressed = upload.compressed
        defer { writer.precompressed = nil }
        do {
            // A tree that grows does so by exactly these events (checked above), so none of
            // them is stored unless an id collides: taken as new, and looked up only then.
            summary = try (grows ? writer.assumingNewEvents { try Interchange.import(upload.plan, into: writer) } : nil)
                ?? Interchange.import(upload.plan, into: writer)
        } catch let error as InterchangeError {
            throw Refusal.conflict(error.description)
        } catch EventStoreError.headConflict(let device, let size) {
            throw Refusal.conflict("device \(SafeText.line(device)) signed another tree of \(size) events before: its history forked")
        }
        let newest = upload.newest
        // A head this upload added has no cosignature yet; one sent again may have ours.
        let cosigned = grows ? nil : try writer.cosignatures(of: newest).first { $0.witnessKey == witnessKey.publicKey }
        let cosignature = try cosigned ?? Cosignature.signing(newest, witness: witness, key: witnessKey)
        if cosigned == nil { try writer.store(cosignatures: [(newest, cosignature)]) }
        return accepted(newest, stored: summary.stored, cosignature: cosignature, witnessKey: witnessKey)
    }

    /// Checks that `upload` extends the device's tree as the store holds it
    /// (``checkExtends(_:known:frontier:)``); whether it grows the tree (its newest head is
    /// past every head stored: the tree grows by exactly its events).
    static func extendsStoredTree(_ upload: Upload, in writer: PostgresLogWriter) throws -> Bool {
        try extends(upload, stored: try writer.deviceTreeAndFrontier(publicKey: upload.tree.owner.publicKey))
    }

    /// ``extendsStoredTree(_:in:)`` given the device's tree as stored (nil: none).
    static func extends(_ upload: Upload, stored: (tree: DeviceTree, frontier: MerkleTree.Frontier?)?) throws -> Bool {
        try checkExtends(upload.tree, known: stored?.tree, frontier: { stored?.frontier })
        return upload.newest.size > (stored?.tree.heads.last?.size ?? 0)
    }

    /// The upload's heads must extend the newest head accepted from the device: its proof
    /// nodes must be the accepted tree's own frontier, and any head it carries at or below
    /// the accepted size must be the one accepted.
    /// - Parameters:
    ///   - known: the device's tree as the store holds it, if it holds one.
    ///   - frontier: the stored tree's frontier (read only when the upload grows the tree).
    static func checkExtends(_ tree: PlannedTree, known: DeviceTree?, frontier storedFrontier: () throws -> MerkleTree.Frontier?) throws {
        let device = SafeText.line(tree.owner.device)
        let accepted = known?.heads.last?.size ?? 0
        let acceptedHeads = Dictionary((known?.heads ?? []).map { ($0.size, $0) }, uniquingKeysWith: { first, _ in first })
        for head in tree.heads where head.size <= accepted {
            guard let mine = acceptedHeads[head.size] else {
                throw Refusal.conflict("device \(device)'s head at \(head.size) events is not one it sent before, and this collector accepted \(accepted) of its events: the device was rolled back or its history forked")
            }
            guard mine.root == head.root else {
                throw Refusal.conflict("device \(device) signed another tree of \(head.size) events before: its history forked (or was rolled back and rewritten)")
            }
        }
        let newest = tree.heads.last!.size
        if newest < accepted {
            throw Refusal.conflict("this collector accepted \(accepted) events of device \(device); the upload's newest head signs \(newest): the device was rolled back")
        }
        guard newest > accepted else { return }
        let base = tree.leaves.first ?? newest
        guard base == accepted else {
            throw Refusal.conflict(base > accepted
                ? "the upload starts at event \(base + 1) of device \(device), and this collector accepted \(accepted): events \(accepted + 1)...\(base) are missing; push again"
                : "the upload repeats events of device \(device) this collector accepted (it holds \(accepted)): push again, it asks where to start")
        }
        guard accepted == 0 || known?.size == accepted, let frontier = try storedFrontier() ?? (accepted == 0 ? MerkleTree.Frontier() : nil),
              frontier.size == accepted else {
            throw Refusal.conflict("this collector holds only part of device \(device)'s tree and cannot check that the upload extends it")
        }
        let expected = Dictionary(uniqueKeysWithValues: MerkleTree.ranges(of: frontier).map { ($0.lo..<$0.hi, $0.hash) })
        guard tree.nodes == expected else {
            throw Refusal.conflict("device \(device)'s new events do not extend the \(accepted) events this collector accepted: its history was rolled back or forked")
        }
    }
}
