import MessagesModel
import EventStore
import Foundation
import RecordedEvents
import StoredEvents

/// An exported log (JSON Lines) to import, mapped from its file rather than read
/// into memory, so a log of millions of events costs only its index.
public struct ExportFile: Sendable {
    /// The name errors give for this file.
    public let name: String
    /// The file's bytes (mapped).
    public let contents: Data

    /// Maps the file at `path`. Pipes and devices (`/dev/stdin`, `<(...)`), which
    /// cannot be mapped, are read to their end instead, and so is `-`: standard input.
    public init(path: String) throws {
        name = path == "-" ? "standard input" : path
        let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
        if type == .typeDirectory {
            throw InterchangeError.unreadableFile(file: path, detail: "it is a folder, not an exported log")
        }
        do {
            if path == "-" {
                contents = FileHandle.standardInput.readDataToEndOfFile()
            } else if type == .typeRegular || type == nil {
                contents = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
            } else {
                guard let handle = FileHandle(forReadingAtPath: path) else {
                    throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: path])
                }
                defer { try? handle.close() }
                contents = try handle.readToEnd() ?? Data()
            }
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw InterchangeError.unreadableFile(file: path, detail: reason)
        }
    }

    /// A log already in memory (tests, pipes).
    public init(name: String, contents: Data) {
        self.name = name
        self.contents = contents
    }
}

/// What a file import did.
public struct ImportSummary: Hashable, Sendable {
    /// Events read from the files, repeats included.
    public var read: Int
    /// Events the database did not hold before.
    public var stored: Int
    /// Events read that no signed head in the files covers.
    public var unsigned: Int
}

/// The stage an import is in, for progress reports.
public enum ImportStage: Sendable {
    /// Reading and checking every line (done and total count bytes).
    case checking
    /// Appending to the database (done and total count events).
    case storing
}

/// What checking one line worked out that appending it would otherwise work out again.
struct CheckedLine: Sendable {
    var hashes = KnownHashes()
    /// Its catalog tags (nil: not worked out).
    var tags: [EventTag]?
}

/// Exported logs read and checked line by line, ready to store: an index of where
/// each event's line lies and what orders it, about 60 bytes an event.
public struct ImportPlan: Sendable {
    let files: [ExportFile]
    let lines: [Interchange.LineRef]
    let keys: [Interchange.MergeKey]
    /// The checkpoints the files carry, with where each stood.
    let checkpoints: [(checkpoint: Checkpoint, file: String, line: Int)]
    /// The device trees and signed heads the files carry, checked against their events.
    var trees = ImportTrees()
    /// Streams whose lines start past version 1: their chain continues one stored here.
    let continued: [UUID: (firstVersion: Int64, firstLine: Int)]
    /// The line of each stream's first event (its recording.started), which its
    /// compact payloads need to be read.
    var starts: [UUID: Int] = [:]
    /// Every line's fields as first parsed, kept for plans of at most
    /// ``Interchange/keptParsingLimit`` bytes (a collector's upload): the chains, the
    /// store's checks and the append read them instead of parsing each line three
    /// more times. Larger imports parse again, so memory holds only the index.
    var parsed: [ExportLine.Fields]?
    /// What the check learned of each line that the append would work out again (its
    /// hashes, its catalog tags), kept with `parsed`.
    var checked: [CheckedLine]?

    /// Events found in the files, repeats included.
    public var count: Int { lines.count }

    /// The recordings the plan's events belong to (known once its chains are checked:
    /// each one begins in the plan or continues one stored before).
    public var recordings: Set<UUID> { Set(starts.keys).union(continued.keys) }

    /// Plans checked apart (each device's upload, say) as one import: their files side
    /// by side, as if checked together. Nil where they cannot be one: two carry one
    /// device's tree, one recording or one event id (which only an import of each alone
    /// judges), one continues a recording stored before, or one did not keep its parsed
    /// lines (a plan too large to merge cheaply).
    package static func merging(_ plans: [ImportPlan]) -> ImportPlan? {
        guard let first = plans.first, first.parsed != nil, first.continued.isEmpty else { return nil }
        let total = plans.reduce(0) { $0 + $1.lines.count }
        var ids = Set<UUIDKey>(minimumCapacity: total), starts: [UUID: Int] = [:], trees = ImportTrees()
        var files: [ExportFile] = [], lines: [Interchange.LineRef] = [], keys: [Interchange.MergeKey] = []
        var parsed: [ExportLine.Fields] = [], checked: [CheckedLine]? = []
        var checkpoints: [(checkpoint: Checkpoint, file: String, line: Int)] = []
        lines.reserveCapacity(total)
        keys.reserveCapacity(total)
        parsed.reserveCapacity(total)
        checked?.reserveCapacity(total)
        for (index, plan) in plans.enumerated() {
            guard let planParsed = plan.parsed, plan.continued.isEmpty else { return nil }
            if index == 0 {
                trees = plan.trees
            } else {
                guard let grown = trees.adding(plan.trees) else { return nil }
                trees = grown
            }
            let fileOffset = Int32(files.count), lineOffset = lines.count
            for start in plan.starts {
                guard starts.updateValue(start.value + lineOffset, forKey: start.key) == nil else { return nil }
            }
            for fields in planParsed {
                guard ids.insert(UUIDKey(fields.id)).inserted else { return nil }
            }
            for ref in plan.lines {
                lines.append(Interchange.LineRef(file: ref.file + fileOffset, line: ref.line, start: ref.start, end: ref.end))
            }
            for var key in plan.keys {
                key.run += fileOffset
                keys.append(key)
            }
            files += plan.files
            checkpoints += plan.checkpoints
            parsed += planParsed
            if let planChecked = plan.checked { checked? += planChecked } else { checked = nil }
        }
        return ImportPlan(files: files, lines: lines, keys: keys, checkpoints: checkpoints, trees: trees, continued: [:],
                          starts: starts, parsed: parsed, checked: checked)
    }

    /// Whether no event of `plans` has the id of an event of `others`; false also when a
    /// plan did not keep its parsed lines (too large to look through cheaply).
    package static func eventIDsAreDisjoint(_ plans: [ImportPlan], _ others: [ImportPlan]) -> Bool {
        var ids = Set<UUIDKey>(minimumCapacity: plans.reduce(0) { $0 + $1.lines.count })
        for plan in plans {
            guard let parsed = plan.parsed else { return false }
            for fields in parsed { ids.insert(UUIDKey(fields.id)) }
        }
        for plan in others {
            guard let parsed = plan.parsed else { return false }
            for fields in parsed where ids.contains(UUIDKey(fields.id)) { return false }
        }
        return true
    }

    /// Calls `body` with each event's id and canonical payload bytes, in the files'
    /// order (repeats included): for work a store can do before it writes, such as
    /// compressing the payloads.
    package func forEachPayload(_ body: (UUID, [UInt8]) throws -> Void) throws {
        for index in lines.indices {
            let fields = try fields(index)
            try body(fields.id, fields.payload)
        }
    }

    /// The id of event `index`, read in place where the plan kept its fields (a copy of
    /// them all retains its payload and strings).
    func id(_ index: Int) throws -> UUID {
        if let parsed { return parsed[index].id }
        return try fields(index).id
    }

    /// The fields of event `index`: as parsed when the plan was made, or parsed again from its line.
    func fields(_ index: Int) throws -> ExportLine.Fields {
        if let parsed { return parsed[index] }
        let ref = lines[index], file = files[Int(ref.file)]
        return try file.contents.withUnsafeBytes { all in
            try Interchange.parse(UnsafeRawBufferPointer(rebasing: all[ref.start..<ref.end]), file: file.name, line: Int(ref.line))
        }
    }
}

extension Interchange {
    /// Where the line starting at `start` ends: its newline, or the end of `bytes`. memchr
    /// reads a word or a vector at a time; a loop over the bytes was a sixteenth of a
    /// collector's check of an upload.
    static func lineEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        guard start < bytes.count, let base = bytes.baseAddress else { return bytes.count }
        guard let newline = memchr(base + start, 0x0A, bytes.count - start) else { return bytes.count }
        return base.distance(to: UnsafeRawPointer(newline))
    }

    /// Whether `line` begins with `prefix`, read in place.
    static func starts(_ line: UnsafeRawBufferPointer, with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard line.count >= count, let base = line.baseAddress else { return false }
        return memcmp(base, prefix.utf8Start, count) == 0
    }

    /// The most bytes of files whose lines' parsed fields a plan keeps (about twice
    /// their size in memory): a collector's largest upload.
    static let keptParsingLimit = 64 << 20

    /// Reads and checks every line of `files` (each an exported log, e.g. one per
    /// device) without storing anything: a malformed line or an unreadable payload
    /// throws, naming the file and line.
    public static func check(files: [ExportFile], progress: ((_ bytesDone: Int, _ bytesTotal: Int) -> Void)? = nil) throws -> ImportPlan {
        let totalBytes = files.reduce(0) { $0 + $1.contents.count }
        var lines: [LineRef] = []
        var keys: [MergeKey] = []
        var checkpoints: [(checkpoint: Checkpoint, file: String, line: Int)] = []
        var trees = ImportTrees()
        var parsed: [ExportLine.Fields]? = totalBytes <= keptParsingLimit ? [] : nil
        let names = ExportLine.TypeNames()
        // A recording repeats its conversation and messages from line to line: read once.
        let memo = DecodingMemo()
        var bytesBefore = 0
        for (fileIndex, file) in files.enumerated() {
            try file.contents.withUnsafeBytes { (all: UnsafeRawBufferPointer) in
                var lineNumber = 0
                var start = 0
                while start < all.count {
                    lineNumber += 1
                    let end = lineEnd(all, from: start)
                    defer { start = end + 1 }
                    let (from, to) = trimmed(all, start, end)
                    if from == to { continue }
                    if let checkpoint = try checkpointLine(UnsafeRawBufferPointer(rebasing: all[from..<to]), file: file.name,
                                                           line: lineNumber) {
                        checkpoints.append((checkpoint, file.name, lineNumber))
                        continue
                    }
                    if try trees.read(UnsafeRawBufferPointer(rebasing: all[from..<to]), file: file.name, line: lineNumber) { continue }
                    let fields = try parse(UnsafeRawBufferPointer(rebasing: all[from..<to]), file: file.name, line: lineNumber,
                                           names: names)
                    // A compact (version 2) payload needs its recording's start: it is read when its stream's chain is.
                    do {
                        if fields.typeVersion != 2 {
                            _ = try RecordedEvent.decode(type: fields.type, typeVersion: fields.typeVersion, payload: fields.payload,
                                                         stream: nil, memo: memo)
                        }
                    } catch {
                        throw InterchangeError.invalidPayload(file: file.name, line: lineNumber, detail: String(describing: error))
                    }
                    lines.append(LineRef(file: Int32(fileIndex), line: Int32(clamping: lineNumber), start: from, end: to))
                    parsed?.append(fields)
                    keys.append(MergeKey(recordedAt: fields.recordedAt, streamVersion: fields.streamVersion, stream: fields.stream,
                                         run: Int32(fileIndex)))
                    if lines.count % 16_384 == 0 { progress?(bytesBefore + end, totalBytes) }
                }
            }
            bytesBefore += file.contents.count
        }
        progress?(totalBytes, totalBytes)
        var plan = ImportPlan(files: files, lines: lines, keys: keys, checkpoints: checkpoints, trees: trees, continued: [:],
                              parsed: parsed, checked: nil)
        plan = try checkChains(plan)
        try plan.trees.checkRoots()
        return plan
    }

    /// A checkpoint line, checked: its fields and its signature under its own key.
    /// Nil for any other line.
    static func checkpointLine(_ line: UnsafeRawBufferPointer, file: String, line number: Int) throws -> Checkpoint? {
        let prefix: StaticString = #"{"checkpoint":"#
        guard line.count > prefix.utf8CodeUnitCount, starts(line, with: prefix) else { return nil }
        let decoded: ExportedCheckpoint
        do {
            decoded = try JSONDecoder().decode(ExportedCheckpoint.Line.self, from: Data(line)).checkpoint
        } catch {
            throw InterchangeError.malformedLine(file: file, line: number, detail: "a checkpoint line lacks a field or has one of the wrong kind")
        }
        guard let checkpoint = decoded.checkpoint else {
            throw InterchangeError.badCheckpoint(file: file, line: number, detail: "a key, hash or signature is not hex of its length")
        }
        guard checkpoint.isSigned(by: checkpoint.publicKey) else {
            throw InterchangeError.badCheckpoint(file: file, line: number,
                                                 detail: "device \(checkpoint.device)'s signature does not verify under its key")
        }
        return checkpoint
    }

    /// A line of ``checkChains(_:)`` whose digests are being worked out.
    private struct Pending {
        var index: Int
        var fields: ExportLine.Fields
        var file: String
        var line: Int
        var tags: [EventTag]?
        /// Its messages in the batch: its stream hash's, and its leaf's if it is a leaf.
        var streamMessage: Int
        var leafMessage: Int?
    }

    /// Recomputes every stream's chain from its lines: each line's stream hash must
    /// be its chain's, and every head a checkpoint signed must be reached with that
    /// hash. Streams that start past version 1 are checked against the store on import.
    static func checkChains(_ plan: ImportPlan) throws -> ImportPlan {
        // A signed hash that is not 32 bytes matches no chain (nil never equals a digest).
        var signed: [UUID: [Int64: (hash: Hash32?, checkpoint: Int)]] = [:]
        for (index, entry) in plan.checkpoints.enumerated() {
            for head in entry.checkpoint.heads { signed[head.stream, default: [:]][head.version] = (Hash32(head.hash), index) }
        }
        var byStream: [UUID: [Int]] = [:]
        for index in plan.keys.indices { byStream[plan.keys[index].stream, default: []].append(index) }
        var continued: [UUID: (firstVersion: Int64, firstLine: Int)] = [:]
        var starts: [UUID: Int] = [:]
        var scratch: [UInt8] = []
        var digests = DigestBatch()
        var trees = plan.trees
        let memo = DecodingMemo()
        var checked: [CheckedLine]? = plan.parsed == nil ? nil : Array(repeating: CheckedLine(), count: plan.lines.count)
        for (stream, indices) in byStream {
            let ordered = indices.sorted { (plan.keys[$0].streamVersion, $0) < (plan.keys[$1].streamVersion, $1) }
            let first = plan.keys[ordered[0]].streamVersion
            if first > 1 {
                continued[stream] = (first, ordered[0])
                continue
            }
            // Held inline: a chain's hash is replaced at every line.
            var hash = Hash32(ChainHash.genesis)!, version: Int64 = 0, device: String?, constants: StreamConstants?
            starts[stream] = ordered[0]
            // The tags as the import's own decoder would find them: the same recording's
            // events in the same order, its start looked up the same way.
            var tagger = StreamDecoder(firstEventOf: { [start = ordered[0]] _ in
                (try? plan.fields(start)).map { ($0.type, $0.typeVersion, $0.payload) }
            })
            var last: ExportLine.Fields?
            // Lines read and checked but for their digests, which are worked out side by
            // side (DigestBatch): a line's stream hash is of the hash its predecessor
            // *carries*, so none waits for another, and once every carried hash is its
            // digest the chain is the one worked out a line at a time. Whatever goes wrong
            // is thrown in line order: a line's own error only after the digests of the
            // lines before it are settled.
            var pending: [Pending] = []
            func settle() throws {
                guard !pending.isEmpty else { return }
                digests.compute()
                defer {
                    pending.removeAll(keepingCapacity: true)
                    digests.removeAll()
                }
                for line in pending {
                    let previous = hash, version = line.fields.streamVersion
                    hash = digests.digest(line.streamMessage)
                    let leafHash = try trees.add(line.fields, leafHash: { digests.digest(line.leafMessage!) },
                                                 file: line.file, line: line.line)
                    if checked != nil {
                        checked![line.index] = CheckedLine(
                            hashes: KnownHashes(recording: .init(streamVersion: version, previous: previous, streamHash: hash,
                                                                 leafHash: leafHash)),
                            tags: line.tags)
                    }
                    let who = device.map { "device \($0)'s " } ?? ""
                    if let carried = line.fields.streamHash, carried != hash {
                        throw InterchangeError.editedLine(file: line.file, line: line.line, detail:
                            "its content does not give the stream hash it carries (\(who)stream \(short(stream)) version \(version))")
                    }
                    if let head = signed[stream]?[version], head.hash != hash {
                        let checkpoint = plan.checkpoints[head.checkpoint]
                        throw InterchangeError.editedLine(file: line.file, line: line.line, detail:
                            "\(who)stream \(short(stream)) up to version \(version) is not what device \(checkpoint.checkpoint.device) signed in its checkpoint \(checkpoint.checkpoint.sequence) (\(checkpoint.file):\(checkpoint.line))")
                    }
                }
            }
            for index in ordered {
                let fields = try plan.fields(index)
                let ref = plan.lines[index], file = plan.files[Int(ref.file)].name
                do {
                    if let previous = last, previous.streamVersion == fields.streamVersion {
                        // The same event twice (two files): fine; two different ones: not.
                        guard previous == fields || (previous.id == fields.id && previous.payload == fields.payload) else {
                            throw InterchangeError.conflict(file: file, line: Int(ref.line), id: fields.id,
                                                            detail: "another line gives stream \(short(stream)) version \(fields.streamVersion) too")
                        }
                        continue
                    }
                    guard fields.streamVersion == version + 1 else {
                        throw InterchangeError.missingEvents(stream: stream, expectedVersion: version + 1, found: fields.streamVersion)
                    }
                    if device == nil, case .recordingStarted(let info)? = try? RecordedEvent.decode(
                        type: fields.type, typeVersion: fields.typeVersion, payload: fields.payload) {
                        device = info.device.name
                        constants = StreamConstants(info)
                    }
                    var decoded: RecordedEvent?
                    if fields.typeVersion == 2 {
                        do {
                            decoded = try RecordedEvent.decode(type: fields.type, typeVersion: 2, payload: fields.payload, stream: constants,
                                                               memo: memo)
                        } catch {
                            throw InterchangeError.invalidPayload(file: file, line: Int(ref.line), detail: String(describing: error))
                        }
                    }
                    var tags: [EventTag]?
                    if checked != nil {
                        if !RecordedEvent.cataloguedTypes.contains(fields.type) {
                            tags = []
                        } else if let decoded, let known = constants, tagger.constants(of: stream) == known {
                            // Just decoded with the constants the tagger would decode it with again.
                            tags = decoded.catalogTags
                        } else {
                            tags = tagger.catalogTags(stream: stream, type: fields.type, typeVersion: fields.typeVersion,
                                                      payload: fields.payload)
                        }
                    }
                    ChainHash.envelope(position: 0, id: fields.id, stream: stream, streamVersion: fields.streamVersion,
                                       type: fields.type, typeVersion: fields.typeVersion,
                                       recordedAt: Timestamp(microsecondsSince1970: fields.recordedAt), payload: fields.payload,
                                       into: &scratch)
                    // Its predecessor's hash as carried; worked out first where it carries none.
                    let previousCarried: Hash32
                    if let before = pending.last {
                        if let carried = before.fields.streamHash {
                            previousCarried = carried
                        } else {
                            try settle()
                            previousCarried = hash
                        }
                    } else {
                        previousCarried = hash
                    }
                    let body = scratch.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[8...]) }
                    let streamMessage = digests.add(previousCarried, body)
                    let leafMessage = trees.isLeaf(fields) ? digests.add(CollectionOfOne(UInt8(0)), body) : nil
                    pending.append(Pending(index: index, fields: fields, file: file, line: Int(ref.line), tags: tags,
                                           streamMessage: streamMessage, leafMessage: leafMessage))
                    version = fields.streamVersion
                    last = fields
                    if pending.count >= 32 { try settle() }
                } catch {
                    // The lines before this one first, as a line at a time met them.
                    try settle()
                    throw error
                }
            }
            try settle()
            if let highest = signed[stream]?.keys.max(), highest > version {
                let checkpoint = plan.checkpoints[signed[stream]![highest]!.checkpoint]
                throw InterchangeError.badCheckpoint(file: checkpoint.file, line: checkpoint.line, detail:
                    "device \(checkpoint.checkpoint.device) signed \(highest) events of stream \(short(stream)), but the files hold \(version): its tail was cut")
            }
        }
        // Lines of recordings that continue a stored one are leaves too.
        for index in plan.keys.indices where continued[plan.keys[index].stream] != nil {
            let fields = try plan.fields(index), ref = plan.lines[index]
            let data = TreeLeaf.data(id: fields.id, stream: fields.stream, streamVersion: fields.streamVersion, type: fields.type,
                                     typeVersion: fields.typeVersion, recordedAt: Timestamp(microsecondsSince1970: fields.recordedAt),
                                     payload: fields.payload, scratch: &scratch)
            try trees.add(fields, leafData: data, file: plan.files[Int(ref.file)].name, line: Int(ref.line))
        }
        return ImportPlan(files: plan.files, lines: plan.lines, keys: plan.keys, checkpoints: plan.checkpoints, trees: trees,
                          continued: continued, starts: starts, parsed: plan.parsed, checked: checked)
    }

    /// Merges checked logs into `store`, like ``import(_:into:batchSize:progress:)``:
    /// events already stored (by id) are skipped, each file's events keep the file's
    /// order (files interleave by recording time), and every stream must arrive
    /// gapless, or nothing is stored. Each line is
    /// parsed again when its batch is stored, so memory holds only the plan.
    public static func `import`(_ plan: ImportPlan, into store: any EventLogWriter, batchSize: Int = 1_000,
                                progress: ((_ eventsDone: Int, _ eventsTotal: Int) -> Void)? = nil) throws -> ImportSummary {
        try checkAgainst(store, plan)
        // A stream's start is in the files, or (for a stream that continues) already in the store.
        var decoder = StreamDecoder(store: store, startsElsewhere: { stream in
            plan.starts[stream].flatMap { try? plan.fields($0) }.map { ($0.type, $0.typeVersion, $0.payload) }
        })
        var stored = 0
        // All or nothing: one transaction for every batch, the heads and the checkpoints.
        try store.importTransaction { transaction in
            stored = try merge(
                count: plan.lines.count, key: { plan.keys[$0] },
                event: { index in
                    let fields = try plan.fields(index), checked = plan.checked?[index]
                    var event = NewEvent(id: fields.id, stream: fields.stream, type: fields.type, typeVersion: fields.typeVersion,
                                         recordedAt: Timestamp(microsecondsSince1970: fields.recordedAt), payload: fields.payload,
                                         tags: checked?.tags ?? decoder.catalogTags(stream: fields.stream, type: fields.type,
                                                                                    typeVersion: fields.typeVersion, payload: fields.payload),
                                         leaf: fields.leaf)
                    if let checked { event.known = checked.hashes }
                    return event
                },
                store: store, append: { try transaction.append($0, owners: plan.trees.owners) },
                batchSize: batchSize, progress: { progress?($0, plan.lines.count) })
            // Heads and proof nodes after the events: a tree whose leaves all arrived
            // (in order) keeps its frontier, so it can go on growing (a collector's store).
            try transaction.store(heads: plan.trees.heads.map(\.head), nodes: plan.trees.nodes)
            try transaction.store(plan.checkpoints.map(\.checkpoint))
        }
        return ImportSummary(read: plan.lines.count, stored: stored, unsigned: plan.trees.unsignedEvents(plan))
    }

    /// ``check(files:progress:)`` then ``import(_:into:batchSize:progress:)``.
    public static func `import`(files: [ExportFile], into store: any EventLogWriter, batchSize: Int = 1_000,
                                progress: ((ImportStage, Int, Int) -> Void)? = nil) throws -> ImportSummary {
        let plan = try check(files: files) { progress?(.checking, $0, $1) }
        return try self.import(plan, into: store, batchSize: batchSize) { progress?(.storing, $0, $1) }
    }

    /// What needs the store: lines whose id is stored must carry the same event, and
    /// streams that continue a stored one must continue its chain.
    static func checkAgainst(_ store: any EventLogWriter, _ plan: ImportPlan) throws {
        for (stream, start) in plan.continued {
            let ref = plan.lines[start.firstLine], file = plan.files[Int(ref.file)].name
            guard let hash = try store.streamHash(stream, at: start.firstVersion - 1) else {
                throw InterchangeError.missingEvents(stream: stream, expectedVersion: try store.streamVersion(stream) + 1,
                                                     found: start.firstVersion)
            }
            let fields = try plan.fields(start.firstLine)
            var scratch: [UInt8] = []
            ChainHash.envelope(position: 0, id: fields.id, stream: stream, streamVersion: fields.streamVersion, type: fields.type,
                               typeVersion: fields.typeVersion, recordedAt: Timestamp(microsecondsSince1970: fields.recordedAt),
                               payload: fields.payload, into: &scratch)
            if let carried = fields.streamHash, carried != Hash32(ChainHash.streamHash(previous: hash, envelope: scratch)) {
                throw InterchangeError.editedLine(file: file, line: Int(ref.line), detail:
                    "it does not continue stream \(short(stream)) as stored here")
            }
        }
        // `lastPosition` reads an index; a count would read every row of a shared store.
        guard try store.lastPosition() > 0 else { return }
        // Asked in chunks: one statement for thousands of ids in a shared store.
        let chunk = 4_096
        var start = 0
        while start < plan.lines.count {
            let indices = start..<min(start + chunk, plan.lines.count)
            start = indices.upperBound
            let found = try store.storedEvents(ids: try indices.map { try plan.id($0) })
            guard !found.isEmpty else { continue }
            for index in indices {
                guard let stored = found[try plan.id(index)] else { continue }
                let fields = try plan.fields(index)
                var differences: [String] = []
                if stored.stream != fields.stream || stored.streamVersion != fields.streamVersion { differences.append("stream and version") }
                if stored.type != fields.type || stored.typeVersion != fields.typeVersion { differences.append("type") }
                if stored.recordedAt.microsecondsSince1970 != fields.recordedAt { differences.append("time") }
                if stored.payload != fields.payload { differences.append("payload") }
                guard differences.isEmpty else {
                    let ref = plan.lines[index]
                    throw InterchangeError.conflict(file: plan.files[Int(ref.file)].name, line: Int(ref.line), id: fields.id,
                                                    detail: "its \(differences.joined(separator: ", ")) differ")
                }
            }
        }
    }

    /// Where one line lies in its file.
    struct LineRef {
        var file: Int32
        var line: Int32
        var start: Int
        var end: Int
    }

    /// The line without surrounding spaces, tabs or a carriage return.
    private static func trimmed(_ all: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> (Int, Int) {
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
        var from = start, to = end
        while from < to && isBlank(all[from]) { from += 1 }
        while to > from && isBlank(all[to - 1]) { to -= 1 }
        return (from, to)
    }

    /// One line's fields: the fast reader for lines as `export` writes them, else
    /// `JSONDecoder`, the reference.
    static func parse(_ line: UnsafeRawBufferPointer, file: String, line number: Int,
                      names: ExportLine.TypeNames? = nil) throws -> ExportLine.Fields {
        if let fields = ExportLine.parse(line, names: names) { return fields }
        let event: ExportedEvent
        do {
            event = try JSONDecoder().decode(ExportedEvent.self, from: Data(line))
        } catch {
            throw InterchangeError.malformedLine(file: file, line: number, detail: plainDescription(of: error))
        }
        var streamHash: Hash32?
        if let text = event.streamHash {
            guard let hash = Hex.bytes(text, count: 32).flatMap({ Hash32($0) }) else {
                throw InterchangeError.malformedLine(file: file, line: number, detail: "streamHash is not 64 hex digits")
            }
            streamHash = hash
        }
        return ExportLine.Fields(id: event.id, payload: Array(event.payload.utf8), position: event.position,
                                 recordedAt: event.recordedAt, stream: event.stream, streamHash: streamHash,
                                 streamVersion: event.streamVersion, type: event.type, typeVersion: event.typeVersion,
                                 leaf: event.leaf)
    }
}

private func short(_ id: UUID) -> String { String(id.uuidString.prefix(8)).lowercased() }
