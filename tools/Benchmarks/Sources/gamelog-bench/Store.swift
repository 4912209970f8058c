// Measures the event store on realistic events: bytes per event (raw canonical
// payload vs stored), compression settings, batched append rate and read rate, each
// next to a baseline measured in the same run.
import ArgumentParser
import EventStore
import Foundation
import Games
import GRDB
import Measure
import Recorder
import Simulation
import ZlibCodec

struct Store: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The event store alone: bytes per event, compression settings, append and read against plain SQLite.")

    @Option(help: "Simulated games in the workload.") var games: Int = 300

    func run() throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "gamelog-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        // 1. A realistic workload: the events of simulated games.
        let source = try EventStore(path: folder.appending(path: "source.sqlite").path)
        let simulator = Simulator(recorder: Recorder(store: source, clock: FixedClock(), seed: 11), games: .standard, seed: 11)
        for n in 0..<games { try simulator.play(simulator.mixedKind(n)) }
        var workload: [NewEvent] = []
        try source.scan { e in
            workload.append(NewEvent(id: UUID(), stream: e.stream, type: e.type, typeVersion: e.typeVersion,
                                     recordedAt: e.recordedAt, payload: e.payload))
        }
        let count = workload.count
        print("workload: \(count) events from \(games) simulated games")

        // Compression settings, measured alone on the workload with the shipped dictionary.
        let shippedDictionary: [UInt8] = try DatabaseQueue(path: folder.appending(path: "source.sqlite").path).read {
            Array(try Data.fetchOne($0, sql: "SELECT bytes FROM dictionaries ORDER BY id DESC LIMIT 1") ?? Data())
        }
        print("\ncompression alone (shipped \(shippedDictionary.count)-byte dictionary)")
        for (level, memoryLevel) in [(9, 8), (6, 8), (6, 4), (5, 4), (4, 4), (3, 4), (2, 4), (1, 4)] as [(Int32, Int32)] {
            let deflater = try RawDeflater(level: level, memoryLevel: memoryLevel, dictionary: shippedDictionary)
            var total = 0
            let time = try seconds { for event in workload { total += try deflater.compress(event.payload).count } }
            print(String(format: "  level %d, memLevel %d: %6.2f µs/event, %6.1f bytes/event", level, memoryLevel,
                         time / Double(count) * 1e6, Double(total) / Double(count)))
        }

        // 2. gamelog append: batches of 1,000, compressed and hashed.
        let target = folder.appending(path: "target.sqlite").path
        let store = try EventStore(path: target)
        let appendTime = try seconds {
            var index = 0
            while index < count {
                try store.append(Array(workload[index..<min(index + 1000, count)]))
                index += 1000
            }
        }

        // 2b. The same appends signed: each recording's events become leaves of its device's
        // Merkle tree (and tiles), and each device signs a head per batch.
        let keys = [try DeviceKey.random(device: "A"), try DeviceKey.random(device: "B")]
        var deviceOf: [UUID: DeviceKey] = [:]
        for event in workload where event.type == "recording.started" {
            deviceOf[event.stream] = String(decoding: event.payload, as: UTF8.self).contains(#""device":"B""#) ? keys[1] : keys[0]
        }
        let signed = try EventStore(path: folder.appending(path: "signed.sqlite").path)
        let signedTime = try seconds {
            var index = 0
            while index < count {
                try signed.append(Array(workload[index..<min(index + 1000, count)])) { deviceOf[$0] }
                index += 1000
            }
        }
        let heads = try signed.deviceTrees().reduce(0) { $0 + $1.heads.count }
        precondition(heads > 0, "the signed appends signed nothing")
        try DatabaseQueue(path: signed.path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let signedBytes = fileSize(signed.path)

        // 3. Baseline: plain inserts of what the append stored, through GRDB, in as many
        // transactions: its compressed blocks, and each event's id (what finds it), the
        // same rows without planning, hashing or compressing them.
        let baselinePath = folder.appending(path: "baseline.sqlite").path
        let baseline = try DatabaseQueue(path: baselinePath)
        try baseline.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
            try db.execute(sql: "CREATE TABLE blocks (first_position INTEGER PRIMARY KEY, count INTEGER NOT NULL, body BLOB NOT NULL)")
            try db.execute(sql: "CREATE TABLE ids (event_id BLOB PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID")
        }
        let blocks: [(first: Int64, count: Int64, body: [UInt8])] = try DatabaseQueue(path: target).read { db in
            try Row.fetchAll(db, sql: "SELECT first_position, count, body FROM event_blocks ORDER BY first_position").map {
                ($0[0], $0[1], Array($0[2] as Data))
            }
        }
        precondition(blocks.reduce(0) { $0 + $1.count } == Int64(count), "the append stored \(blocks.count) blocks that do not hold the workload")
        let blobs = blocks.map(\.body)
        let blocksPerBatch = max(1, blocks.count * 1000 / max(count, 1))
        let baselineTime = try seconds {
            var index = 0, event = 0
            while index < blocks.count {
                try baseline.write { db in
                    let insertBlock = try db.cachedStatement(sql: "INSERT INTO blocks (first_position, count, body) VALUES (?, ?, ?)")
                    let insertID = try db.cachedStatement(sql: "INSERT INTO ids (event_id, position) VALUES (?, ?)")
                    for block in blocks[index..<min(index + blocksPerBatch, blocks.count)] {
                        try insertBlock.execute(arguments: [block.first, block.count, Data(block.body)])
                        for position in block.first..<(block.first + block.count) {
                            try insertID.execute(arguments: [Data(workload[event].id.bytesForBenchmark), position])
                            event += 1
                        }
                    }
                }
                index += blocksPerBatch
            }
        }

        // 4. Reads: verified scan (decompress + hash) vs. a raw scan of the blobs.
        var readBytes = 0
        let readTime = try seconds { try store.scan { readBytes += $0.payload.count } }
        var rawBytes = 0
        let rawReadTime = try seconds {
            try baseline.read { db in
                let cursor = try Row.fetchCursor(db, sql: "SELECT body FROM blocks ORDER BY first_position")
                while let row = try cursor.next() { rawBytes += (row[0] as Data).count }
            }
        }

        let rawPayload = workload.reduce(0) { $0 + $1.payload.count }
        let storedPayload = blobs.reduce(0) { $0 + $1.count }
        try DatabaseQueue(path: target).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let fileBytes = fileSize(target)
        func rate(_ t: Double) -> String { String(format: "%9.0f events/s", Double(count) / t) }
        print("""

            bytes per event
              raw canonical payload      \(String(format: "%7.1f", Double(rawPayload) / Double(count)))
              stored in blocks (deflate) \(String(format: "%7.1f", Double(storedPayload) / Double(count)))  (\(String(format: "%.2f", Double(storedPayload) / Double(rawPayload)))x raw)
              whole file, with indexes   \(String(format: "%7.1f", Double(fileBytes) / Double(count)))
              signed (leaves, tiles, heads) \(String(format: "%4.1f", Double(signedBytes) / Double(count)))  (\(String(format: "%.2f", Double(signedBytes) / Double(fileBytes)))x unsigned)
            append, batches of 1,000
              gamelog (compress + hash)  \(rate(appendTime))
              signed, device trees       \(rate(signedTime))   = \(String(format: "%.2f", appendTime / signedTime))x unsigned (\(heads) heads signed)
              plain insert (baseline)    \(rate(baselineTime))   gamelog = \(String(format: "%.2f", baselineTime / appendTime))x baseline
            read
              gamelog scan (verify)      \(rate(readTime))
              raw block scan (baseline)  \(rate(rawReadTime))   gamelog = \(String(format: "%.2f", rawReadTime / readTime))x baseline
            """)
        precondition(readBytes == rawPayload && rawBytes == storedPayload, "benchmark read back the wrong bytes")
    }
}

extension UUID {
    var bytesForBenchmark: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
}
