import EventLog
import Foundation
import ZlibCodec

/// Compresses a batch's payloads on background threads while the appending thread
/// works through the same batch in order (id lookups, hashing, inserts).
///
/// Compression is most of an append's CPU time, and each payload is compressed on
/// its own, so the parts are independent. The batch is cut into chunks taken in log
/// order by background lanes (one per core but one) and by the appender itself:
/// when it reaches a chunk nobody has taken, it compresses that chunk instead of
/// waiting, so every core stays busy until the batch is stored.
///
/// Call ``finish()`` before the append returns, also on error paths: lanes use the
/// compressor's deflaters, which the next batch reuses, and a deflater must never
/// run on two threads at once.
final class CompressionPipeline: @unchecked Sendable {
    typealias Encoded = (codec: PayloadCodec, dictionaryID: Int64?, bytes: [UInt8])

    /// Below this many events the batch is compressed inline: starting threads costs
    /// more than it saves.
    static let inlineLimit = 256
    static let chunkSize = 64

    private let events: [NewEvent]
    private let compressor: EventStore.Compressor
    private let results: UnsafeMutableBufferPointer<Encoded>
    private let chunkCount: Int
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var nextChunk = 0
    private var chunkDone: [Bool]
    private var failure: Error?
    /// Lanes compressing a chunk right now. `finish()` waits only for these: a lane
    /// the system starts late finds no chunk left and leaves without touching its
    /// deflater, so an append never waits for a thread to be scheduled (a caller that
    /// is itself one of a busy pool's threads could otherwise wait on the pool).
    private var busyLanes = 0

    init(events: [NewEvent], compressor: EventStore.Compressor) {
        self.events = events
        self.compressor = compressor
        results = .allocate(capacity: events.count)
        results.initialize(repeating: (.raw, nil, []))
        chunkCount = (events.count + Self.chunkSize - 1) / Self.chunkSize
        chunkDone = [Bool](repeating: false, count: chunkCount)
        if events.count < Self.inlineLimit || compressor.deflaters.count < 2 {
            // Inline: everything is compressed now, on the caller's thread.
            runLane(0)
        } else {
            // Deflater 0 is the appender's own (see `encoded(_:)`).
            for lane in 1..<compressor.deflaters.count {
                DispatchQueue.global(qos: .userInitiated).async { self.runLane(lane) }
            }
        }
    }

    deinit {
        results.deinitialize()
        results.deallocate()
    }

    /// The stored form of event `index`. Call in increasing order of `index`, from
    /// the appending thread only: if no lane has taken the event's chunk yet, this
    /// compresses it here with deflater 0; if a lane is on it, this waits.
    func encoded(_ index: Int) throws -> Encoded {
        let chunk = index / Self.chunkSize
        condition.lock()
        if !chunkDone[chunk] && failure == nil && nextChunk <= chunk {
            // Chunks are taken in order, so every chunk before this one is taken too.
            nextChunk = chunk + 1
            condition.unlock()
            compress(chunk: chunk, with: compressor.deflaters[0])
            condition.lock()
        }
        defer { condition.unlock() }
        while !chunkDone[chunk] && failure == nil { condition.wait() }
        if let failure { throw failure }
        return results[index]
    }

    /// Stops handing out chunks and waits until no lane is compressing one.
    func finish() {
        condition.lock()
        nextChunk = chunkCount
        while busyLanes > 0 { condition.wait() }
        condition.unlock()
    }

    private func runLane(_ lane: Int) {
        let deflater = compressor.deflaters[lane]
        while true {
            condition.lock()
            guard nextChunk < chunkCount, failure == nil else {
                condition.unlock()
                return
            }
            let chunk = nextChunk
            nextChunk += 1
            busyLanes += 1
            condition.unlock()
            compress(chunk: chunk, with: deflater, lane: true)
        }
    }

    /// Compresses one chunk (taken by the caller) and marks it done.
    private func compress(chunk: Int, with deflater: RawDeflater, lane: Bool = false) {
        var thrown: Error?
        for index in (chunk * Self.chunkSize)..<min(events.count, (chunk + 1) * Self.chunkSize) {
            do {
                results[index] = try EventStore.encode(events[index].payload, deflater: deflater,
                                                       dictionaryID: compressor.dictionaryID)
            } catch {
                thrown = error
                break
            }
        }
        condition.lock()
        if let thrown, failure == nil { failure = thrown }
        if lane { busyLanes -= 1 }
        chunkDone[chunk] = true
        condition.broadcast()
        condition.unlock()
    }
}
