import Foundation

/// Keeps the game summaries of the conversations a collector wrote to current, off the
/// request path: an upload is answered when its group commits; its recordings are noted
/// here and folded in the next pass, at most one pass running at a time and one starting
/// at most every ``interval``, so a conversation that many pushes grow is folded once a
/// pass, not once a push.
///
/// Summaries are a cache for readers (a page folds a conversation whose row is not
/// current), so they give way to uploads: before each batch of conversations, while
/// uploads are being checked or stored, a pass waits for a moment without any, at most
/// ``patience`` times as long as its last batch took. Under a steady stream of uploads
/// the passes take about a `1 / (patience + 1)` share of one core (their work done later,
/// and once for every push a conversation had meanwhile); once the uploads pause, all of it.
package final class SummaryRefresher: Sendable {
    let writer: GameSummaryWriter
    let metrics: CollectorMetrics
    /// The least time between two passes' starts.
    let interval: Duration
    /// How many times its last batch's time a pass waits for the uploads to pause.
    let patience: Int
    /// Whether uploads are being checked or stored right now.
    let busy: @Sendable () -> Bool

    private struct State {
        var pending: Set<UUID> = []
        var running = false
        var idle: [CheckedContinuation<Void, Never>] = []
        /// When the batch under way started, and how long the one before it took.
        var batchStarted: ContinuousClock.Instant?
        var lastBatch: Duration = .milliseconds(100)
    }
    private let state = NSLockedValue(State())

    package init(writer: GameSummaryWriter, metrics: CollectorMetrics, interval: Duration = .seconds(1), patience: Int = 3,
                 busy: @escaping @Sendable () -> Bool = { false }) {
        self.writer = writer
        self.metrics = metrics
        self.interval = interval
        self.patience = patience
        self.busy = busy
    }

    /// Notes recordings that were just stored into; starts a pass if none runs.
    package func note(_ streams: Set<UUID>) {
        guard !streams.isEmpty else { return }
        let start = state.withLock { state -> Bool in
            state.pending.formUnion(streams)
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if start { Task { await self.run() } }
    }

    /// Returns once every recording noted so far was folded (or its pass failed).
    package func settled() async {
        await withCheckedContinuation { done in
            let now = state.withLock { state -> Bool in
                guard state.running else { return true }
                state.idle.append(done)
                return false
            }
            if now { done.resume() }
        }
    }

    private func run() async {
        while true {
            let started = ContinuousClock.now
            let streams = state.withLock { state -> Set<UUID>? in
                guard !state.pending.isEmpty else {
                    state.running = false
                    for waiting in state.idle { waiting.resume() }
                    state.idle = []
                    return nil
                }
                defer { state.pending = [] }
                return state.pending
            }
            guard let streams else { return }
            do {
                metrics.storedSummaries(try await writer.refresh(streams: streams, beforeEachBatch: { await self.giveWay() }).written)
            } catch {
                // The rows stay as they were (a reader folds what is not current); the
                // next upload into these conversations notes them again.
                metrics.summaryPassFailed()
            }
            endBatch()
            let elapsed = ContinuousClock.now - started
            if elapsed < interval { try? await Task.sleep(for: interval - elapsed) }
        }
    }

    /// Waits while uploads are in flight, at most ``patience`` times the last batch's time.
    private func giveWay() async {
        endBatch()
        let waiting = ContinuousClock.now
        let deadline = waiting + state.withLock { $0.lastBatch } * patience
        var waited = false
        while busy(), ContinuousClock.now < deadline {
            waited = true
            try? await Task.sleep(for: .milliseconds(10))
        }
        let now = ContinuousClock.now
        if waited { metrics.summaryPassWaited(seconds: now.duration(since: waiting)) }
        state.withLock { $0.batchStarted = now }
    }

    private func endBatch() {
        state.withLock { state in
            if let started = state.batchStarted { state.lastBatch = .now - started }
            state.batchStarted = nil
        }
    }
}
