import EventStore

/// Why a replay could not start or move.
public enum ReplayError: Error, Hashable, Sendable, CustomStringConvertible {
    case noSuchGame(String)
    case ambiguousGame(String, candidates: [String])
    case stepOutOfRange(Int, count: Int)
    case undecodableEvent(position: Int64, detail: String)

    public var description: String {
        switch self {
        case .noSuchGame(let id):
            return "no game or conversation id starts with '\(id)'. `gamelog games` lists them."
        case .ambiguousGame(let id, let candidates):
            return "'\(id)' matches several games (\(candidates.prefix(5).joined(separator: ", "))); give more of the id."
        case .stepOutOfRange(let step, let count):
            return "step \(step) is outside 0...\(count) for this game."
        case .undecodableEvent(let position, let detail):
            return "event at position \(position) cannot be decoded: \(detail). `gamelog verify` checks the log."
        }
    }
}
