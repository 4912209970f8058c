import EventStore

/// Why a replay could not start or move.
public enum ReplayError: Error, Hashable, Sendable, CustomStringConvertible {
    case noSuchGame(String)
    case ambiguousGame(String, candidates: [String])
    case stepOutOfRange(Int, count: Int)
    case undecodableEvent(position: Int64, detail: String)
    /// A catalog row names an id its event does not: the catalog was changed, and the
    /// game it would assemble is not the log's.
    case catalogContradictsEvents(position: Int64, detail: String)
    /// The log's catalog does not cover every event, and this store can only be read
    /// through it (a shared store read natively); a SQLite log is folded whole instead.
    case incompleteCatalog(location: String)

    public var description: String {
        switch self {
        case .noSuchGame(let id):
            return "no game or conversation id starts with '\(id)'."
        case .ambiguousGame(let id, let candidates):
            let shown = candidates.prefix(5).joined(separator: ", ")
            let more = candidates.count > 5 ? " and \(candidates.count - 5) more" : ""
            return "'\(id)' matches \(candidates.count) games (\(shown)\(more)); give more of the id."
        case .stepOutOfRange(let step, let count):
            return "step \(step) is outside 0...\(count) for this game."
        case .undecodableEvent(let position, let detail):
            return "event at position \(position) cannot be decoded: \(detail)."
        case .catalogContradictsEvents(let position, let detail):
            return "the game catalog contradicts the event at position \(position) (\(detail)): the catalog was changed, so no game is shown from it."
        case .incompleteCatalog(let location):
            return "the catalog of \(location) does not cover every event, so its games cannot be listed from it."
        }
    }
}
