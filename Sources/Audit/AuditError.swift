import EventStore

/// Why an audit could not run.
public enum AuditError: Error, CustomStringConvertible, Equatable {
    /// The whole log's own checks (SQLite's structure, the chain through every row, every
    /// device tree, the catalog) read a SQLite file, and `location` is not one. One game's
    /// audit reads any ``SignedLogReader``.
    case wholeLogNeedsAFile(location: String)

    public var description: String {
        switch self {
        case .wholeLogNeedsAFile(let location):
            return "the whole log's checks read a SQLite file, and \(SafeText.line(location)) is not one (one game's checks read it as it is)"
        }
    }
}

extension Auditor {
    /// `store` as the SQLite file the whole log's checks read.
    static func wholeLog(_ store: any SignedLogReader) throws -> EventStore {
        guard let file = store as? EventStore else { throw AuditError.wholeLogNeedsAFile(location: store.location) }
        return file
    }
}
