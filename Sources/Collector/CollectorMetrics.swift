import Foundation

/// What a collector counts, served at `GET /metrics` in the Prometheus text format
/// (version 0.0.4): uploads accepted and refused by reason, events stored, enrollments,
/// and how long uploads took. One collector process's own counts since it started.
public final class CollectorMetrics: @unchecked Sendable {
    /// Why an upload or request was turned away, as a metric label.
    public enum Refusal: String, CaseIterable, Sendable {
        case malformed, notEnrolled = "not_enrolled", conflict, tooLarge = "too_large", storeFailed = "store_failed"
    }

    /// Upper bounds of the upload latency histogram's buckets, in seconds.
    public static let buckets: [Double] = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    private let lock = NSLock()
    private var accepted = 0, events = 0, enrollments = 0, storedTogether = 0, summaries = 0, summaryFailures = 0
    private var summaryWaits = 0.0
    private var followedKept = 0, followedWrittenAgain = 0
    private var refused: [Refusal: Int] = [:]
    private var latency = [Int](repeating: 0, count: CollectorMetrics.buckets.count + 1)
    private var latencySum = 0.0

    public init() {}

    public func acceptedUpload(events stored: Int, seconds: Double) {
        lock.withLock {
            accepted += 1
            events += stored
            observe(seconds)
        }
    }

    public func refusedUpload(_ reason: Refusal, seconds: Double) {
        lock.withLock {
            refused[reason, default: 0] += 1
            observe(seconds)
        }
    }

    public func enrolled() { lock.withLock { enrollments += 1 } }

    /// Uploads a write stored as one import with others (see `Collector`'s group writes).
    public func storedTogether(_ uploads: Int) { lock.withLock { storedTogether += uploads } }

    /// How many uploads were stored as one import with others so far.
    public var uploadsStoredTogether: Int { lock.withLock { storedTogether } }

    /// A group written following the write before it (see `GroupCommit`): kept, or written again the usual way.
    public func followedWrite(kept: Bool) { lock.withLock { kept ? (followedKept += 1) : (followedWrittenAgain += 1) } }

    /// Groups written following the write before them: kept, and written again.
    public var followedWrites: (kept: Int, writtenAgain: Int) { lock.withLock { (followedKept, followedWrittenAgain) } }

    /// Conversations whose game summaries a pass after the collector's writes stored.
    public func storedSummaries(_ conversations: Int) { lock.withLock { summaries += conversations } }

    /// A pass that could not keep the summaries current (the store failed; the next pass tries again).
    public func summaryPassFailed() { lock.withLock { summaryFailures += 1 } }

    /// Time a summary pass waited for uploads in flight before a batch (see `Collector`).
    public func summaryPassWaited(seconds: Double) { lock.withLock { summaryWaits += seconds } }

    private func observe(_ seconds: Double) {
        latency[Self.buckets.firstIndex { seconds <= $0 } ?? Self.buckets.count] += 1
        latencySum += seconds
    }

    /// The Prometheus text exposition of every metric.
    public var text: String {
        lock.withLock {
            var out = """
                # HELP gamelog_uploads_accepted_total Uploads stored and cosigned.
                # TYPE gamelog_uploads_accepted_total counter
                gamelog_uploads_accepted_total \(accepted)
                # HELP gamelog_uploads_refused_total Uploads refused, by reason.
                # TYPE gamelog_uploads_refused_total counter

                """
            for reason in Refusal.allCases { out += "gamelog_uploads_refused_total{reason=\"\(reason.rawValue)\"} \(refused[reason] ?? 0)\n" }
            out += """
                # HELP gamelog_events_stored_total Events stored from accepted uploads.
                # TYPE gamelog_events_stored_total counter
                gamelog_events_stored_total \(events)
                # HELP gamelog_uploads_stored_together_total Accepted uploads a write stored as one import with others.
                # TYPE gamelog_uploads_stored_together_total counter
                gamelog_uploads_stored_together_total \(storedTogether)
                # HELP gamelog_group_writes_followed_total Groups written while the write before them was stored, kept or written again.
                # TYPE gamelog_group_writes_followed_total counter
                gamelog_group_writes_followed_total{outcome="kept"} \(followedKept)
                gamelog_group_writes_followed_total{outcome="written_again"} \(followedWrittenAgain)
                # HELP gamelog_game_summaries_stored_total Conversations whose game summaries were stored after uploads.
                # TYPE gamelog_game_summaries_stored_total counter
                gamelog_game_summaries_stored_total \(summaries)
                # HELP gamelog_game_summary_passes_failed_total Passes over changed conversations that failed (tried again).
                # TYPE gamelog_game_summary_passes_failed_total counter
                gamelog_game_summary_passes_failed_total \(summaryFailures)
                # HELP gamelog_game_summary_wait_seconds_total Time summary passes gave way to uploads in flight.
                # TYPE gamelog_game_summary_wait_seconds_total counter
                gamelog_game_summary_wait_seconds_total \(summaryWaits)
                # HELP gamelog_enrollments_total Devices enrolled through this collector.
                # TYPE gamelog_enrollments_total counter
                gamelog_enrollments_total \(enrollments)
                # HELP gamelog_upload_seconds Time to answer an upload, accepted or refused.
                # TYPE gamelog_upload_seconds histogram

                """
            var cumulative = 0
            for (index, bound) in Self.buckets.enumerated() {
                cumulative += latency[index]
                out += "gamelog_upload_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
            }
            cumulative += latency[Self.buckets.count]
            out += "gamelog_upload_seconds_bucket{le=\"+Inf\"} \(cumulative)\n"
            out += "gamelog_upload_seconds_sum \(latencySum)\ngamelog_upload_seconds_count \(cumulative)\n"
            return out
        }
    }
}

extension ContinuousClock.Instant {
    /// Seconds from `earlier` to this instant.
    func duration(since earlier: ContinuousClock.Instant) -> Double {
        let elapsed = self - earlier
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
