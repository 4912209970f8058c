import Foundation

/// Keeps the game summaries of the conversations a collector wrote to current, off the
/// request path: an upload is answered when its group commits; its recordings are noted
/// here and folded in the next pass, at most one pass running at a time and one starting
/// at most every ``interval``, so a conversation that many pushes grow is folded once a
/// pass, not once a push.
final class SummaryRefresher: Sendable {
    let writer: GameSummaryWriter
    let metrics: CollectorMetrics
    /// The least time between two passes' starts.
    let interval: Duration

    private struct State {
        var pending: Set<UUID> = []
        var running = false
        var idle: [CheckedContinuation<Void, Never>] = []
    }
    private let state = NSLockedValue(State())

    init(writer: GameSummaryWriter, metrics: CollectorMetrics, interval: Duration = .seconds(1)) {
        self.writer = writer
        self.metrics = metrics
        self.interval = interval
    }

    /// Notes recordings that were just stored into; starts a pass if none runs.
    func note(_ streams: Set<UUID>) {
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
    func settled() async {
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
                metrics.storedSummaries(try await writer.refresh(streams: streams).written)
            } catch {
                // The rows stay as they were (a reader folds what is not current); the
                // next upload into these conversations notes them again.
                metrics.summaryPassFailed()
            }
            let elapsed = ContinuousClock.now - started
            if elapsed < interval { try? await Task.sleep(for: interval - elapsed) }
        }
    }
}
