// Replay on an existing log: raw read rate (the limit), full replay of all projections
// (every conversation folded), opening a game, and jumping to random steps (median,
// p99), with peak memory and a sweep of the snapshot interval.
import ArgumentParser
import EventStore
import Foundation
import Games
import Measure
import MessagesModel
import Projections
import Replay

struct ReplayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay of an existing log: read, full replay, opening games, jumps, snapshot intervals.")

    @Argument(help: "The log.") var database: String
    @Option(help: "Games to sample for opening and jumping.") var samples: Int = 200

    func run() throws {
        let store = try EventStore(path: database, access: .readOnly)
        let total = try store.count().events
        print("log: \(total) events")

        var start = now()
        var rawCount = 0
        try store.scan(verify: false) { _ in rawCount += 1 }
        let rawSeconds = Double(now() - start) / 1e9

        // A read checks its events' digests in batches, side by side where the processor
        // allows; a read with a limit, one at a time: three runs of each, interleaved.
        var verifiedCount = 0, oneAtATimeCount = 0
        var batchedRuns: [Double] = [], oneAtATimeRuns: [Double] = []
        for _ in 0..<3 {
            start = now()
            verifiedCount = 0
            try store.scan { _ in verifiedCount += 1 }
            batchedRuns.append(Double(now() - start) / 1e9)
            start = now()
            oneAtATimeCount = 0
            try store.scan(EventQuery(limit: Int.max)) { _ in oneAtATimeCount += 1 }
            oneAtATimeRuns.append(Double(now() - start) / 1e9)
        }
        let verifiedSeconds = percentile(batchedRuns, 0.5), oneAtATimeSeconds = percentile(oneAtATimeRuns, 0.5)

        start = now()
        let catalog = try GameCatalog(store: store, games: .standard)
        let replaySeconds = Double(now() - start) / 1e9
        let replayRSS = peakRSSMegabytes()

        var generator = SeededGenerator(seed: 99)
        let conversations: [ConversationID] = catalog.streams.keys.sorted { (a: ConversationID, b: ConversationID) in a.uuid.uuidString < b.uuid.uuidString }
        var openTimes: [Double] = [], jumpTimes: [Double] = []
        for _ in 0..<min(samples, conversations.count) {
            let conversation = conversations.randomElement(using: &generator)!
            start = now()
            let replayer = try Replayer(store: store, conversation: conversation, streams: catalog.streams[conversation]!, games: .standard)
            openTimes.append(Double(now() - start) / 1e6)
            for _ in 0..<20 {
                let step = Int.random(in: 0...replayer.stepCount, using: &generator)
                start = now()
                _ = try replayer.state(at: step)
                jumpTimes.append(Double(now() - start) / 1e6)
            }
        }
        // The snapshot interval K: jump cost against memory held, on the same sampled games.
        var sweep: [String] = []
        for interval in [4, 8, 16, 32, 64, 128] {
            var generator = SeededGenerator(seed: 7)
            var times: [Double] = []
            var snapshotsHeld = 0
            for _ in 0..<min(samples, conversations.count) {
                let conversation = conversations.randomElement(using: &generator)!
                let replayer = try Replayer(store: store, conversation: conversation, streams: catalog.streams[conversation]!,
                                            snapshotInterval: interval, useStoredSnapshots: false, games: .standard)
                _ = try replayer.state(at: replayer.stepCount) // builds every snapshot once
                snapshotsHeld += replayer.stepCount / interval
                for _ in 0..<20 {
                    let step = Int.random(in: 0...replayer.stepCount, using: &generator)
                    start = now()
                    _ = try replayer.state(at: step)
                    times.append(Double(now() - start) / 1e6)
                }
            }
            sweep.append(String(format: "    K = %3d: jump median %.4f ms, p99 %.4f ms, %d snapshots held", interval,
                                percentile(times, 0.5), percentile(times, 0.99), snapshotsHeld))
        }

        func rate(_ n: Int, _ s: Double) -> String { String(format: "%10.0f events/s", Double(n) / s) }
        print("""
            read, no decoding (limit)        \(rate(rawCount, rawSeconds))
            read + hash chain verified       \(rate(verifiedCount, verifiedSeconds))  (digests in batches; median of 3)
              ... one digest at a time       \(rate(oneAtATimeCount, oneAtATimeSeconds))  (a read with a limit: \(String(format: "%.2fx", oneAtATimeSeconds / verifiedSeconds)) the time of batches)
            full replay, all projections     \(rate(Int(total), replaySeconds))  (\(String(format: "%.2f", rawSeconds / replaySeconds))x the limit), peak RSS \(String(format: "%.0f", replayRSS)) MB
            open a game (load its events)    median \(String(format: "%.2f", percentile(openTimes, 0.5))) ms, p99 \(String(format: "%.2f", percentile(openTimes, 0.99))) ms
            jump to a random step            median \(String(format: "%.3f", percentile(jumpTimes, 0.5))) ms, p99 \(String(format: "%.3f", percentile(jumpTimes, 0.99))) ms  (\(jumpTimes.count) jumps, snapshots every 32 steps)
            snapshot interval sweep (warm snapshots)
            """)
        sweep.forEach { print($0) }
    }
}
