import AllocationCount
import ArgumentParser
import EventStore
import Foundation
import Games
import GRDB
import Measure
import Projections
import RecordedEvents
import Replay
import StoredEvents

/// Every event of a workload log, ready to append again, with the catalog tags the
/// recorder gives it (so the appended log has the catalog a recorded one has, and a
/// full replay of it reads what a replay of a recorded log reads).
func loadWorkload(_ path: String) throws -> [NewEvent] {
    var events: [NewEvent] = []
    var decoder = StreamDecoder()
    try EventStore(path: path, access: .readOnly).scan { e in
        let tags = decoder.catalogTags(stream: e.stream, type: e.type, typeVersion: e.typeVersion, payload: e.payload)
        events.append(NewEvent(id: e.id, stream: e.stream, type: e.type, typeVersion: e.typeVersion,
                               recordedAt: e.recordedAt, payload: e.payload, tags: tags))
    }
    return events
}

/// Seconds to append `events` to the store at `path`, in batches of 1,000, in blocks of
/// `blockSize` events (or as rows).
func appendAll(_ events: ArraySlice<NewEvent>, to path: String, blockSize: Int = EventBlock.defaultCapacity,
               layout: EventStore.Layout = .blocks) throws -> Double {
    let store = try EventStore(path: path, layout: layout)
    store.blockCapacity = blockSize
    return try seconds {
        var index = events.startIndex
        while index < events.endIndex {
            try store.append(Array(events[index..<min(index + 1000, events.endIndex)]))
            index += 1000
        }
    }
}

/// Heap allocations `body` made on the calling thread and on every thread (nil where the
/// benchmark cannot count them: see Sources/AllocationCount).
func countingAllocations(_ body: () throws -> Void) rethrows -> (thisThread: UInt64, everywhere: UInt64)? {
    guard gamelog_allocations_countable() == 1 else {
        try body()
        return nil
    }
    gamelog_count_allocations(1)
    defer { gamelog_count_allocations(0) }
    let thread = gamelog_allocations_on_this_thread(), all = gamelog_allocations_everywhere()
    try body()
    return (gamelog_allocations_on_this_thread() - thread, gamelog_allocations_everywhere() - all)
}

/// Appends a workload to a fresh file alone, for a profiler:
/// `perf record -g -- gamelog-bench append-only W.sqlite OUT.sqlite`.
struct AppendOnly: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Append a workload to a fresh file, nothing else (for a profiler).")
    @Argument(help: "The workload log.") var workload: String
    @Argument(help: "The file to append to (replaced).") var output: String
    @Option(help: "Events per block.") var blockSize = EventBlock.defaultCapacity
    @Flag(help: "One row per event, as before blocks.") var rows = false

    func run() throws {
        let events = try loadWorkload(workload)
        var time = 0.0
        let allocations = try countingAllocations {
            time = try appendAll(events[...], to: fresh(output), blockSize: blockSize, layout: rows ? .rows : .blocks)
        }
        try DatabaseQueue(path: output).writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        let bytes = (try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        print(events.count, "events appended at", Int(Double(events.count) / time), "events/s;",
              String(format: "%.1f", Double(bytes) / Double(events.count)), "bytes an event;",
              allocations.map { String(format: "%.2f allocations an event on the appending thread, %.2f on every thread",
                                       Double($0.thisThread) / Double(events.count), Double($0.everywhere) / Double(events.count)) }
                ?? "allocations not counted on this platform")
    }
}

/// One full replay in this process, printing "events seconds peak-RSS-MB": the table
/// runs it as a child so that each figure is one replay's memory alone.
struct ReplayMemory: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "One full replay; prints events, seconds and peak memory (MB).")
    @Argument(help: "The log to replay.") var database: String

    func run() throws {
        let store = try EventStore(path: database, access: .readOnly)
        let total = try store.count().events
        // The replay alone: every conversation folded, each dropped when finished.
        var games = 0
        let time = try seconds { try FullReplay.run(store: store, games: .standard) { games += $0.state.games.count } }
        precondition(games > 0)
        print(total, time, peakRSSMegabytes())
    }
}

/// A full replay's stages one after another on one thread, each the one before plus one
/// more step, so each difference is what that step costs (issue 40's profile by stage).
struct ReplayStages: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay-stages",
        abstract: "A full replay's stages on one thread: read, chain, decode, fold (CPU seconds of each).")
    @Argument(help: "The log.") var database: String
    @Option(help: "Runs of each stage (the median is printed).") var runs: Int = 3

    func run() throws {
        let store = try EventStore(path: database, access: .readOnly)
        // The process's CPU: every stage but the last runs on this thread alone, and the
        // last is asked for one lane.
        let cpu = processCPUSeconds
        func stage(_ name: String, _ body: () throws -> Int) rethrows {
            var times: [Double] = []
            var count = 0
            for _ in 0..<runs {
                let start = cpu()
                count = try body()
                times.append(cpu() - start)
            }
            precondition(count > 0, "\(name) met nothing")
            print(name.padding(toLength: 34, withPad: " ", startingAt: 0), String(format: "%.3f s of CPU", percentile(times, 0.5)), count)
        }
        try stage("recordings' first events") { var n = 0; try store.scanStreamHeads { _ in n += 1 }; return n }
        try stage("  ... first half of them") { var n = 0; try store.scanStreamHeads(part: 0, of: 2) { _ in n += 1 }; return n }
        try stage("  ... second half of them") { var n = 0; try store.scanStreamHeads(part: 1, of: 2) { _ in n += 1 }; return n }
        try stage("read") { var n = 0; try store.scan(verify: false) { _ in n += 1 }; return n }
        try stage("read, chain") { var n = 0; try store.scan { _ in n += 1 }; return n }
        try stage("read, chain, decode") {
            var decoder = StreamDecoder()
            var n = 0
            try store.scan { stored in
                _ = try ReplayEvent(stored, decoder: &decoder, keepingHash: false)
                n += 1
            }
            return n
        }
        try stage("full replay on one lane") {
            var n = 0
            try FullReplay.run(store: store, lanes: 1, games: .standard) { n += $0.events }
            return n
        }
    }
}

/// Full replays with chosen parameters, in one process: for tuning them, and for a
/// profiler (`--lanes 1` folds on the calling thread alone).
struct ReplayParameters: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay-parameters",
        abstract: "Full replays with chosen lanes, chunk size and kept events; prints events, seconds, peak MB and the pass's statistics.")
    @Argument(help: "The log.") var database: String
    @Option(help: "Decoding threads (1: everything on the calling thread).") var lanes: Int?
    @Option(help: "Events a decoding thread hands over at once.") var chunk: Int = 4_096
    @Option(help: "Events open conversations may keep in all.") var kept: Int = 50_000
    @Flag(help: "Do not check the hash chain.") var unverified = false
    @Option(help: "Replays, one after another.") var times: Int = 1
    func run() throws {
        let store = try EventStore(path: database, access: .readOnly)
        for _ in 0..<times {
            var n = 0
            var statistics: FullReplay.Statistics?
            let time = try seconds {
                statistics = try FullReplay.run(store: store, verify: !unverified, lanes: lanes, chunkSize: chunk, keepingAtMost: kept,
                                                games: .standard) { n += $0.events }
            }
            print(n, time, peakRSSMegabytes(), "reordered \(statistics?.reorderedConversations ?? -1), most open \(statistics?.mostOpenConversations ?? -1)")
        }
    }
}
