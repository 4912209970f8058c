// The benchmark table of tools/bench.sh: on one workload of simulated games, gamelog
// against the limit (raw SQLite through the C API) and the peer (Python
// eventsourcing), every figure measured in this run.
import ArgumentParser
import EventStore
import Foundation
import Games
import GRDB
import GRDBSQLite
import Measure
import MessagesModel
import Projections
import Replay

struct Table: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The benchmark table: append, bytes, replay, seek and memory against the limit and the peer.")

    @Argument(help: "A log of simulated games (the workload).") var workloadPath: String
    @Argument(help: "The same log exported as JSON lines, for the peer.") var jsonlPath: String
    @Argument(help: "A folder for the scratch databases.") var scratch: String
    @Option(help: "Events in the small log of the memory comparison.") var small: Int = 100_000

    func run() throws {
        let smallCount = small
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        func fresh(_ name: String) -> String { Measure.fresh(scratch + "/" + name) }
        func checkpoint(_ path: String) throws {
            try DatabaseQueue(path: path).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }

        // MARK: The workload

        status("loading the workload")
        let workload = try loadWorkload(workloadPath)
        let count = workload.count
        let rawPayloadBytes = workload.reduce(0) { $0 + $1.payload.count }

        // MARK: Append: gamelog

        status("gamelog append, \(count) events")
        let gamelogPath = scratch + "/gamelog.sqlite"
        // As the recorder appends: every event with its catalog tags (the log a replay reads
        // then has the catalog a recorded log has). Before session 49, the events went
        // without them; that rate is the row below it, for comparison.
        let gamelogAppend = try median { try appendAll(workload[...], to: fresh("gamelog.sqlite")) }
        try checkpoint(gamelogPath)
        status("gamelog append without catalog tags")
        let untagged = workload.map { event in
            var event = event
            event.tags = nil
            return event
        }
        let untaggedAppend = try median { try appendAll(untagged[...], to: fresh("gamelog-untagged.sqlite")) }
        try? FileManager.default.removeItem(atPath: scratch + "/gamelog-untagged.sqlite")
        let smallPath = fresh("gamelog-small.sqlite")
        // Allocations counted on this append alone, not on the timed ones above.
        let appendAllocations = try countingAllocations { _ = try appendAll(workload.prefix(smallCount), to: smallPath) }
        try checkpoint(smallPath)
        // The compressed block bodies: every event's id, hash, varints and payload.
        let storedPayloadBytes = try DatabaseQueue(path: gamelogPath).read {
            try Int.fetchOne($0, sql: "SELECT sum(length(body)) FROM event_blocks") ?? 0
        }

        // MARK: Append: the limit, raw SQLite through the C API

        /// gamelog's finished rows, already compressed and hashed: every block and the
        /// rows that index it, as the append leaves them.
        struct BlockRow {
            var first: Int64, count: Int64, codec: Int64, dictionaryID: Int64?, rawSize: Int64, body: [UInt8], lastHash: [UInt8]
            var ids: [(id: [UInt8], position: Int64)] = []
            var streams: [(stream: Int64, version: Int64, position: Int64)] = []
            /// The catalog rows whose positions are in it.
            var catalog: [(kind: Int64, key: [UInt8], stream: Int64, position: Int64)] = []
        }
        status("raw SQLite C API insert of the same rows")
        let blocks: [BlockRow] = try DatabaseQueue(path: gamelogPath).read { db in
            var byFirst: [Int64: BlockRow] = [:]
            for r in try Row.fetchAll(db, sql: "SELECT * FROM event_blocks") {
                byFirst[r["first_position"]] = BlockRow(first: r["first_position"], count: r["count"], codec: r["codec"], dictionaryID: r["dictionary_id"],
                                                        rawSize: r["raw_size"], body: Array(r["body"] as Data), lastHash: Array(r["last_hash"] as Data))
            }
            let firsts = byFirst.keys.sorted()
            func block(holding position: Int64) -> Int64 {
                var low = 0, high = firsts.count - 1
                while low < high {
                    let middle = (low + high + 1) / 2
                    if firsts[middle] <= position { low = middle } else { high = middle - 1 }
                }
                return firsts[low]
            }
            for r in try Row.fetchAll(db, sql: "SELECT event_id, position FROM block_ids") {
                let position: Int64 = r["position"]
                byFirst[block(holding: position)]!.ids.append((Array(r["event_id"] as Data), position))
            }
            for r in try Row.fetchAll(db, sql: "SELECT kind, key, stream_id, position FROM catalog") {
                let position: Int64 = r["position"]
                byFirst[block(holding: position)]!.catalog.append((r["kind"], Array(r["key"] as Data), r["stream_id"], position))
            }
            for r in try Row.fetchAll(db, sql: "SELECT * FROM block_streams") {
                byFirst[r["block"]]!.streams.append((r["stream_id"], r["last_version"], r["last_position"]))
            }
            return firsts.map { byFirst[$0]! }
        }
        let limitPath = scratch + "/limit.sqlite"
        func check(_ code: Int32, _ db: OpaquePointer?) {
            guard code == SQLITE_OK || code == SQLITE_DONE || code == SQLITE_ROW else {
                fatalError("SQLite: \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        /// One run of the limit: a fresh file with gamelog's schema, every row inserted,
        /// a transaction for each 1,000 events' blocks.
        func limitRun() throws -> Double {
            _ = fresh("limit.sqlite")
            _ = try EventStore(path: limitPath) // the same schema, from the same migrations
            try DatabaseQueue(path: limitPath).writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS source", arguments: [gamelogPath])
                try db.execute(sql: "INSERT OR IGNORE INTO event_types SELECT * FROM source.event_types")
                try db.execute(sql: "INSERT INTO streams SELECT * FROM source.streams")
                try db.execute(sql: "DETACH DATABASE source")
            }
            var limitDB: OpaquePointer?
            check(sqlite3_open_v2(limitPath, &limitDB, SQLITE_OPEN_READWRITE, nil), limitDB)
            check(sqlite3_exec(limitDB, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536", nil, nil, nil), limitDB)
            var insertBlock: OpaquePointer?, insertID: OpaquePointer?, insertStream: OpaquePointer?
            var insertCatalog: OpaquePointer?, cover: OpaquePointer?
            check(sqlite3_prepare_v2(limitDB, "INSERT INTO catalog (kind, key, stream_id, position) VALUES (?, ?, ?, ?)",
                                     -1, &insertCatalog, nil), limitDB)
            check(sqlite3_prepare_v2(limitDB, "UPDATE catalog_coverage SET through = ?", -1, &cover, nil), limitDB)
            check(sqlite3_prepare_v2(limitDB, """
                INSERT INTO event_blocks (first_position, count, codec, dictionary_id, raw_size, body, last_hash) VALUES (?, ?, ?, ?, ?, ?, ?)
                """, -1, &insertBlock, nil), limitDB)
            check(sqlite3_prepare_v2(limitDB, "INSERT INTO block_ids (event_id, position) VALUES (?, ?)", -1, &insertID, nil), limitDB)
            check(sqlite3_prepare_v2(limitDB, "INSERT INTO block_streams (stream_id, block, last_version, last_position) VALUES (?, ?, ?, ?)",
                                     -1, &insertStream, nil), limitDB)
            let time = seconds {
                var index = 0
                while index < blocks.count {
                    check(sqlite3_exec(limitDB, "BEGIN IMMEDIATE", nil, nil, nil), limitDB)
                    var events: Int64 = 0
                    while index < blocks.count && events < 1000 {
                        let block = blocks[index]
                        sqlite3_bind_int64(insertBlock, 1, block.first)
                        sqlite3_bind_int64(insertBlock, 2, block.count)
                        sqlite3_bind_int64(insertBlock, 3, block.codec)
                        if let id = block.dictionaryID { sqlite3_bind_int64(insertBlock, 4, id) } else { sqlite3_bind_null(insertBlock, 4) }
                        sqlite3_bind_int64(insertBlock, 5, block.rawSize)
                        block.body.withUnsafeBytes { _ = sqlite3_bind_blob(insertBlock, 6, $0.baseAddress, Int32($0.count), nil) }
                        block.lastHash.withUnsafeBytes { _ = sqlite3_bind_blob(insertBlock, 7, $0.baseAddress, Int32($0.count), nil) }
                        check(sqlite3_step(insertBlock), limitDB)
                        sqlite3_reset(insertBlock)
                        for (id, position) in block.ids {
                            id.withUnsafeBytes { _ = sqlite3_bind_blob(insertID, 1, $0.baseAddress, Int32($0.count), nil) }
                            sqlite3_bind_int64(insertID, 2, position)
                            check(sqlite3_step(insertID), limitDB)
                            sqlite3_reset(insertID)
                        }
                        for (kind, key, stream, position) in block.catalog {
                            sqlite3_bind_int64(insertCatalog, 1, kind)
                            key.withUnsafeBytes { _ = sqlite3_bind_blob(insertCatalog, 2, $0.baseAddress, Int32($0.count), nil) }
                            sqlite3_bind_int64(insertCatalog, 3, stream)
                            sqlite3_bind_int64(insertCatalog, 4, position)
                            check(sqlite3_step(insertCatalog), limitDB)
                            sqlite3_reset(insertCatalog)
                        }
                        for (stream, version, position) in block.streams {
                            sqlite3_bind_int64(insertStream, 1, stream)
                            sqlite3_bind_int64(insertStream, 2, block.first)
                            sqlite3_bind_int64(insertStream, 3, version)
                            sqlite3_bind_int64(insertStream, 4, position)
                            check(sqlite3_step(insertStream), limitDB)
                            sqlite3_reset(insertStream)
                        }
                        events += block.count
                        index += 1
                    }
                    sqlite3_bind_int64(cover, 1, blocks[index - 1].first + blocks[index - 1].count - 1)
                    check(sqlite3_step(cover), limitDB)
                    sqlite3_reset(cover)
                    check(sqlite3_exec(limitDB, "COMMIT", nil, nil, nil), limitDB)
                }
            }
            for statement in [insertBlock, insertID, insertStream, insertCatalog, cover] { sqlite3_finalize(statement) }
            sqlite3_close(limitDB)
            return time
        }
        let limitAppend = try median { try limitRun() }

        // MARK: Read: the limit, every column of every row through the C API, not decoded

        status("raw read")
        var limitDB: OpaquePointer?
        check(sqlite3_open_v2(limitPath, &limitDB, SQLITE_OPEN_READONLY, nil), limitDB)
        var select: OpaquePointer?
        check(sqlite3_prepare_v2(limitDB, "SELECT * FROM event_blocks ORDER BY first_position", -1, &select, nil), limitDB)
        var touched = 0
        let rawRead = median {
            defer { sqlite3_reset(select) }
            return seconds {
                while sqlite3_step(select) == SQLITE_ROW {
                    for column in 0..<7 { touched &+= Int(sqlite3_column_bytes(select, Int32(column))) }
                }
            }
        }
        sqlite3_finalize(select)
        sqlite3_close(limitDB)

        // MARK: The peer

        status("peer: Python eventsourcing 9.5.6")
        let peer = Process()
        peer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // This file is tools/Benchmarks/Sources/gamelog-bench/Table.swift; the peer's script is in tools/.
        let toolsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        peer.arguments = ["python3", toolsFolder.appending(path: "peer_eventsourcing.py").path, jsonlPath, fresh("peer.sqlite")]
        let peerOutput = Pipe()
        peer.standardOutput = peerOutput
        try peer.run()
        let peerData = peerOutput.fileHandleForReading.readDataToEndOfFile()
        peer.waitUntilExit()
        guard peer.terminationStatus == 0,
              let peerResult = try JSONSerialization.jsonObject(with: peerData) as? [String: Any],
              let peerRate = peerResult["rate"] as? Double, let peerFile = peerResult["file_bytes"] as? Int,
              let peerState = peerResult["state_bytes"] as? Int, peerResult["events"] as? Int == count else {
            fatalError("the peer failed: \(String(decoding: peerData, as: UTF8.self))")
        }

        // MARK: Replay

        status("full replay")
        let store = try EventStore(path: gamelogPath, access: .readOnly)
        var gameCount = 0
        let replayVerified = try median {
            gameCount = 0
            return try seconds { try FullReplay.run(store: store, games: .standard) { gameCount += $0.state.games.count } }
        }
        let replayUnverified = try median { try seconds { try FullReplay.run(store: store, verify: false, games: .standard) { _ in } } }
        // The replay's own limit (issue 40): every event read from the same blocks,
        // inflated and split into its columns, not decoded or folded.
        status("read of every event")
        var eventsRead = 0
        let eventRead = try median {
            eventsRead = 0
            return try seconds { try store.scan(verify: false) { _ in eventsRead += 1 } }
        }
        precondition(eventsRead == count, "the read met \(eventsRead) events of \(count)")

        func childReplay(_ path: String) throws -> (events: Int, seconds: Double, megabytes: Double) {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["replay-memory", path]
            let out = Pipe()
            child.standardOutput = out
            try child.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            let parts = text.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
            guard parts.count == 3, let events = Int(parts[0]), let time = Double(parts[1]), let mb = Double(parts[2]) else {
                fatalError("the replay child printed \(text)")
            }
            return (events, time, mb)
        }
        status("replay memory in child processes")
        // Three of each, interleaved, and the median: one process's peak moves by a tenth
        // from one run to the next (47-52 MB for the small log, session 46), as much as the
        // growth the target bounds, as the table's other rows are medians too.
        var smallRuns: [(events: Int, seconds: Double, megabytes: Double)] = []
        var largeRuns: [(events: Int, seconds: Double, megabytes: Double)] = []
        for _ in 0..<3 {
            smallRuns.append(try childReplay(smallPath))
            largeRuns.append(try childReplay(gamelogPath))
        }
        func medianRun(_ runs: [(events: Int, seconds: Double, megabytes: Double)]) -> (events: Int, seconds: Double, megabytes: Double) {
            runs.sorted { $0.megabytes < $1.megabytes }[runs.count / 2]
        }
        let small = medianRun(smallRuns), large = medianRun(largeRuns)
        func spread(_ runs: [(events: Int, seconds: Double, megabytes: Double)]) -> String {
            String(format: "%.1f-%.1f", runs.map(\.megabytes).min() ?? 0, runs.map(\.megabytes).max() ?? 0)
        }

        // MARK: Seek

        status("seek")
        let index = try GameIndex(store: store)
        var generator = SeededGenerator(seed: 99)
        let conversations = try index.conversations()
        var openAndJump: [Double] = [], jumpOnly: [Double] = []
        for _ in 0..<300 {
            let conversation = conversations[Int(generator.next() % UInt64(conversations.count))]
            let start = now()
            let replayer = try Replayer(store: store, conversation: conversation, streams: try index.streams(of: conversation), games: .standard)
            _ = try replayer.state(at: Int(generator.next() % UInt64(replayer.stepCount + 1)))
            openAndJump.append(Double(now() - start) / 1e6)
            for _ in 0..<10 {
                let step = Int(generator.next() % UInt64(replayer.stepCount + 1))
                let jumpStart = now()
                _ = try replayer.state(at: step)
                jumpOnly.append(Double(now() - jumpStart) / 1e6)
            }
        }

        // MARK: The table

        func rate(_ events: Int, _ time: Double) -> Double { Double(events) / time }
        func line(_ label: String, _ value: String, _ note: String = "") -> String {
            label.padding(toLength: 66, withPad: " ", startingAt: 0) + value.leftPadded(18) + "  " + note
        }
        func verdict(_ met: Bool) -> String { met ? "met" : "MISSED" }
        let gamelogRate = rate(count, gamelogAppend), limitRate = rate(count, limitAppend)
        // Issue 40: none an event on the appending thread (at most a batch's own, 1 in 20 events).
        let allocationsAnEvent = appendAllocations.map { (Double($0.thisThread) / Double(smallCount), Double($0.everywhere) / Double(smallCount)) }
        let allocationFigures = allocationsAnEvent.map { String(format: "%.2f / %.2f", $0.0, $0.1) } ?? "not counted"
        let allocationNote = allocationsAnEvent.map { "target none an event on the appending thread: \(verdict($0.0 < 0.05))" }
            ?? "(counted on Linux with glibc only)"
        let replayRate = rate(count, replayVerified)
        let gamelogBytes = Double(fileSize(gamelogPath)) / Double(count)
        let peerBytes = Double(peerFile) / Double(count)

        print("""
            workload: \(number(Double(count))) events from simulated games (\(gameCount) games), \(number(Double(smallCount))) for the small log

            APPEND, batches of 1,000 events per transaction                                 events/s
            \(line("gamelog (blocks of 64, deflate + dictionary, chain, catalog rows)", number(gamelogRate)))
            \(line("  the same events without catalog tags (the row until session 49)", number(rate(count, untaggedAppend))))
            \(line("limit: raw SQLite C API, same blocks (compressed) and catalog rows", number(limitRate)))
            \(line("peer: Python eventsourcing 9.5.6, SQLite + ZlibCompressor", number(peerRate)))
            \(line("  gamelog / peer", String(format: "%.2fx", gamelogRate / peerRate), "target >= 10x: \(verdict(gamelogRate >= 10 * peerRate))"))
            \(line("  gamelog / limit", String(format: "%.2fx", gamelogRate / limitRate), "target >= 0.4x: \(verdict(gamelogRate >= 0.4 * limitRate))"))
            \(line("  heap allocations an event: appending thread / every thread", allocationFigures, allocationNote))

            BYTES PER EVENT                                                                    bytes
            \(line("raw canonical payload (JSON, sorted keys)", String(format: "%.1f", Double(rawPayloadBytes) / Double(count))))
            \(line("peer: whole file", String(format: "%.1f", peerBytes), String(format: "(its compressed state alone %.1f)", Double(peerState) / Double(count))))
            \(line("gamelog: whole file, with ids, hashes, indexes", String(format: "%.1f", gamelogBytes), String(format: "(compressed blocks alone %.1f)", Double(storedPayloadBytes) / Double(count))))
            \(line("  gamelog / peer", String(format: "%.2fx", gamelogBytes / peerBytes), "target <= 0.35x: \(verdict(gamelogBytes <= 0.35 * peerBytes))"))

            REPLAY, every projection of every conversation                                 events/s
            \(line("gamelog full replay, hash chain verified", number(replayRate), "target >= 500,000: \(verdict(replayRate >= 500_000))"))
            \(line("gamelog full replay, chain not verified", number(rate(count, replayUnverified))))
            \(line("read of every event from the blocks (inflated, not decoded)", number(rate(count, eventRead))))
            \(line("limit: raw read of every block row, C API", number(rate(count, rawRead))))
            \(line("  gamelog / read of every event", String(format: "%.2fx", replayRate / rate(count, eventRead)), "target >= 0.45x: \(verdict(replayRate >= 0.45 * rate(count, eventRead)))"))
            \(line("  gamelog / raw read of the rows", String(format: "%.3fx", replayRate / rate(count, rawRead))))

            SEEK to a random step of a random game                                               ms
            \(line("open the game and jump, median", String(format: "%.3f", percentile(openAndJump, 0.5)), "target < 5 ms: \(verdict(percentile(openAndJump, 0.5) < 5))"))
            \(line("open the game and jump, p99", String(format: "%.3f", percentile(openAndJump, 0.99))))
            \(line("jump within an open game, median", String(format: "%.3f", percentile(jumpOnly, 0.5))))
            \(line("jump within an open game, p99", String(format: "%.3f", percentile(jumpOnly, 0.99))))

            REPLAY MEMORY, peak RSS of a process doing one full replay                           MB
            \(line("\(number(Double(small.events))) events, median of 3", String(format: "%.1f", small.megabytes), String(format: "(runs %@; %@ events/s)", spread(smallRuns), number(rate(small.events, small.seconds)))))
            \(line("\(number(Double(large.events))) events, median of 3", String(format: "%.1f", large.megabytes), String(format: "(runs %@; %@ events/s)", spread(largeRuns), number(rate(large.events, large.seconds)))))
            \(line("  growth for \(String(format: "%.0f", Double(large.events) / Double(small.events)))x the events", String(format: "%.2fx", large.megabytes / small.megabytes), "target <= 1.3x for 10x: \(verdict(large.megabytes <= small.megabytes * 1.3))"))
            """)
        // Each missed target names where its profile is and the next step (issue 40).
        let eventReadRate = rate(count, eventRead), seekMedian = percentile(openAndJump, 0.5)
        var missed: [String] = []
        if gamelogRate < 10 * peerRate || gamelogRate < 0.4 * limitRate {
            missed.append("append: profile in docs/BENCHMARKS.md, \"Session 30\", \"Session 37\" and \"Session 49\" (the appending thread: claiming each id in block_ids a third, the commit a sixth, the blocks' rows an eighth, the catalog's rows a tenth since the append carries the recorder's tags; the hashing thread: the log's chain, one digest after another); next: fewer statements an event on the appending thread")
        }
        if let (appending, _) = allocationsAnEvent, appending >= 0.05 {
            missed.append("allocations on the appending thread: profile in docs/BENCHMARKS.md, \"Session 45\" (valgrind's dhat: none an event since a batch's ids are claimed together; a batch's, a block's and a recording's remain); next: a batch's statements and arrays reused from batch to batch")
        }
        if replayRate < 500_000 || replayRate < 0.45 * eventReadRate {
            missed.append("full replay: profile in docs/BENCHMARKS.md, \"Session 49\" (perf, both cores: the decoding threads two thirds of the CPU (decoding payloads a quarter of theirs, inflating a sixth, the chain an eighth, the rest the scan's events: each one's payload and hash arrays and their copies through the chain check), folding a quarter; 8.1 allocations an event); next: an event's hash held inline from the block to the check, then the payload decoded from the inflated block without an array of its own")
        }
        if gamelogBytes > 0.35 * peerBytes {
            missed.append("bytes: profile in docs/BENCHMARKS.md, \"Session 15\"; next: larger blocks or a dictionary trained on the log")
        }
        if seekMedian >= 5 {
            missed.append("seek: profile in docs/BENCHMARKS.md, \"Before blocks. Replay\" (opening a game reads its conversation); next: stored snapshots read first")
        }
        if large.megabytes > small.megabytes * 1.3 {
            missed.append("replay memory: profile in docs/BENCHMARKS.md, \"The figures\" (the heads and the catalog held whole); next: the heads kept as they are folded, not after")
        }
        if !missed.isEmpty {
            print("\nMISSED TARGETS, where each one's profile is and the next step")
            for note in missed { print("  - " + note) }
        }
        precondition(touched > 0)
    }
}
