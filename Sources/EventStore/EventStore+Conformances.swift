import EventLog
import Foundation

extension EventStore: EventLogReader {
    public var location: String { path }
}

extension EventStore: EventLogWriter {
    public func importTransaction(_ body: (any EventLogImport) throws -> Void) throws {
        try importing { try body($0) }
    }
}

extension EventStore.ImportTransaction: EventLogImport {}
