import EventStore
import Foundation
import RecordedEvents

/// An exported log (JSON Lines) to import, mapped from its file rather than read
/// into memory, so a log of millions of events costs only its index.
public struct ExportFile: Sendable {
    /// The name errors give for this file.
    public let name: String
    /// The file's bytes (mapped).
    public let contents: Data

    /// Maps the file at `path`. Pipes and devices (`/dev/stdin`, `<(...)`), which
    /// cannot be mapped, are read to their end instead, and so is `-`: standard input.
    public init(path: String) throws {
        name = path == "-" ? "standard input" : path
        let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
        if type == .typeDirectory {
            throw InterchangeError.unreadableFile(file: path, detail: "it is a folder, not an exported log")
        }
        do {
            if path == "-" {
                contents = FileHandle.standardInput.readDataToEndOfFile()
            } else if type == .typeRegular || type == nil {
                contents = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
            } else {
                guard let handle = FileHandle(forReadingAtPath: path) else {
                    throw CocoaError(.fileReadNoPermission, userInfo: [NSFilePathErrorKey: path])
                }
                defer { try? handle.close() }
                contents = try handle.readToEnd() ?? Data()
            }
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw InterchangeError.unreadableFile(file: path, detail: reason)
        }
    }

    /// A log already in memory (tests, pipes).
    public init(name: String, contents: Data) {
        self.name = name
        self.contents = contents
    }
}

/// What a file import did.
public struct ImportSummary: Hashable, Sendable {
    /// Events read from the files, repeats included.
    public var read: Int
    /// Events the database did not hold before.
    public var stored: Int
}

/// The stage an import is in, for progress reports.
public enum ImportStage: Sendable {
    /// Reading and checking every line (done and total count bytes).
    case checking
    /// Appending to the database (done and total count events).
    case storing
}

/// Exported logs read and checked line by line, ready to store: an index of where
/// each event's line lies and what orders it, about 60 bytes an event.
public struct ImportPlan: Sendable {
    let files: [ExportFile]
    let lines: [Interchange.LineRef]
    let keys: [Interchange.MergeKey]

    /// Events found in the files, repeats included.
    public var count: Int { lines.count }

    /// The fields of event `index`, parsed again from its line.
    func fields(_ index: Int) throws -> ExportLine.Fields {
        let ref = lines[index], file = files[Int(ref.file)]
        return try file.contents.withUnsafeBytes { all in
            try Interchange.parse(UnsafeRawBufferPointer(rebasing: all[ref.start..<ref.end]), file: file.name, line: Int(ref.line))
        }
    }
}

extension Interchange {
    /// Reads and checks every line of `files` (each an exported log, e.g. one per
    /// device) without storing anything: a malformed line or an unreadable payload
    /// throws, naming the file and line.
    public static func check(files: [ExportFile], progress: ((_ bytesDone: Int, _ bytesTotal: Int) -> Void)? = nil) throws -> ImportPlan {
        let totalBytes = files.reduce(0) { $0 + $1.contents.count }
        var lines: [LineRef] = []
        var keys: [MergeKey] = []
        var bytesBefore = 0
        for (fileIndex, file) in files.enumerated() {
            try file.contents.withUnsafeBytes { (all: UnsafeRawBufferPointer) in
                var lineNumber = 0
                var start = 0
                while start < all.count {
                    lineNumber += 1
                    var end = start
                    while end < all.count && all[end] != 0x0A { end += 1 }
                    defer { start = end + 1 }
                    let (from, to) = trimmed(all, start, end)
                    if from == to { continue }
                    let fields = try parse(UnsafeRawBufferPointer(rebasing: all[from..<to]), file: file.name, line: lineNumber)
                    do {
                        _ = try RecordedEvent.decode(type: fields.type, typeVersion: fields.typeVersion, payload: fields.payload)
                    } catch {
                        throw InterchangeError.invalidPayload(file: file.name, line: lineNumber, detail: String(describing: error))
                    }
                    lines.append(LineRef(file: Int32(fileIndex), line: Int32(clamping: lineNumber), start: from, end: to))
                    keys.append(MergeKey(recordedAt: fields.recordedAt, streamVersion: fields.streamVersion, stream: fields.stream))
                    if lines.count % 16_384 == 0 { progress?(bytesBefore + end, totalBytes) }
                }
            }
            bytesBefore += file.contents.count
        }
        progress?(totalBytes, totalBytes)
        return ImportPlan(files: files, lines: lines, keys: keys)
    }

    /// Merges checked logs into `store`, like ``import(_:into:batchSize:progress:)``:
    /// events already stored (by id) are skipped, events go in order of recording
    /// time, and every stream must arrive gapless, or nothing is stored. Each line is
    /// parsed again when its batch is stored, so memory holds only the plan.
    public static func `import`(_ plan: ImportPlan, into store: EventStore, batchSize: Int = 1_000,
                                progress: ((_ eventsDone: Int, _ eventsTotal: Int) -> Void)? = nil) throws -> ImportSummary {
        let stored = try merge(
            count: plan.lines.count, key: { plan.keys[$0] },
            event: { index in
                let fields = try plan.fields(index)
                return NewEvent(id: fields.id, stream: fields.stream, type: fields.type, typeVersion: fields.typeVersion,
                                recordedAt: Timestamp(microsecondsSince1970: fields.recordedAt), payload: fields.payload)
            },
            into: store, batchSize: batchSize, progress: { progress?($0, plan.lines.count) })
        return ImportSummary(read: plan.lines.count, stored: stored)
    }

    /// ``check(files:progress:)`` then ``import(_:into:batchSize:progress:)``.
    public static func `import`(files: [ExportFile], into store: EventStore, batchSize: Int = 1_000,
                                progress: ((ImportStage, Int, Int) -> Void)? = nil) throws -> ImportSummary {
        let plan = try check(files: files) { progress?(.checking, $0, $1) }
        return try self.import(plan, into: store, batchSize: batchSize) { progress?(.storing, $0, $1) }
    }

    /// Where one line lies in its file.
    struct LineRef {
        var file: Int32
        var line: Int32
        var start: Int
        var end: Int
    }

    /// The line without surrounding spaces, tabs or a carriage return.
    private static func trimmed(_ all: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> (Int, Int) {
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D }
        var from = start, to = end
        while from < to && isBlank(all[from]) { from += 1 }
        while to > from && isBlank(all[to - 1]) { to -= 1 }
        return (from, to)
    }

    /// One line's fields: the fast reader for lines as `export` writes them, else
    /// `JSONDecoder`, the reference.
    static func parse(_ line: UnsafeRawBufferPointer, file: String, line number: Int) throws -> ExportLine.Fields {
        if let fields = ExportLine.parse(line) { return fields }
        let event: ExportedEvent
        do {
            event = try JSONDecoder().decode(ExportedEvent.self, from: Data(line))
        } catch {
            throw InterchangeError.malformedLine(file: file, line: number, detail: "\(error)")
        }
        return ExportLine.Fields(id: event.id, payload: Array(event.payload.utf8), position: event.position,
                                 recordedAt: event.recordedAt, stream: event.stream, streamVersion: event.streamVersion,
                                 type: event.type, typeVersion: event.typeVersion)
    }
}
