import Foundation

/// Everything the event store can refuse or detect. Each case names the problem and,
/// in ``description``, the way out.
public enum EventStoreError: Error, Equatable, CustomStringConvertible {
    // Opening
    case databaseNotFound(path: String)
    /// The path names a folder, not a file.
    case isAFolder(path: String)
    /// The folder that would hold a new database does not exist.
    case folderNotFound(path: String, folder: String)
    case notADatabase(path: String, reason: String)
    case notAGamelogDatabase(path: String, applicationID: Int32)
    case newerSchema(path: String, found: Int, supported: Int)
    case olderSchema(path: String, found: Int, current: Int)
    case migrationMismatch(path: String, version: Int, name: String)
    case damagedDatabase(path: String, detail: String)
    case readOnly(path: String, detail: String)
    case storageFull(path: String, detail: String)

    // Appending
    case versionConflict(stream: UUID, expected: ExpectedVersion, actual: Int64)
    case invalidEvent(id: UUID, reason: String)
    case invalidDictionary(reason: String)
    /// A checkpoint differs from the one stored under the same key and sequence.
    case checkpointConflict(device: String, sequence: Int64)
    /// A device's tree cannot take this event: the file holds only part of the tree, a
    /// recording is already another device's, or a leaf is taken.
    case treeConflict(device: String, detail: String)
    /// A signed head differs from the one stored for the same key and size: the
    /// device's history forked (one of the two logs was forged).
    case headConflict(device: String, size: Int64)
    /// A cosignature does not verify for the head it names, or names a head the log lacks.
    case invalidCosignature(device: String, size: Int64, witness: String)
    /// The file's schema holds objects no migration made (a trigger, a view, an index,
    /// a changed table): it was made or changed by something other than gamelog.
    case foreignSchema(path: String, detail: String)
    /// A copy of a shared store holds events in blocks, which it cannot send back (it
    /// sends rows): something other than the shared store appended to it.
    case blocksInCopy(path: String)
    /// The log does not verify, so an operation that rewrites how its events are stored
    /// (``EventStore/packRowsIntoBlocks(progress:)``) left them as they are.
    case damagedLog(path: String, detail: String)

    // Reading and verifying: each names the global position
    case missingEvent(position: Int64)
    case outOfOrder(position: Int64, detail: String)
    case hashMismatch(position: Int64)
    case corruptPayload(position: Int64, detail: String)
    case unknownCodec(position: Int64, codec: Int64)
    case unknownDictionary(position: Int64, dictionaryID: Int64)
    case streamVersionGap(position: Int64, stream: UUID, expected: Int64, found: Int64)
    /// A row of the block index tables (`block_ids`, `block_streams`, `block_leaves`)
    /// disagrees with the blocks' events: readers of one recording would miss events.
    case blockIndexMismatch(position: Int64, detail: String)

    /// The position the problem was found at, for errors found while reading.
    public var position: Int64? {
        switch self {
        case .missingEvent(let p), .hashMismatch(let p): return p
        case .outOfOrder(let p, _), .corruptPayload(let p, _), .unknownCodec(let p, _),
             .unknownDictionary(let p, _), .streamVersionGap(let p, _, _, _), .blockIndexMismatch(let p, _): return p
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .databaseNotFound(let path):
            return "no gamelog database at \(path)."
        case .isAFolder(let path):
            return "\(path) is a folder, not a database file; nothing was changed."
        case .folderNotFound(let path, let folder):
            return "cannot create \(path): the folder \(folder) does not exist; nothing was created."
        case .notADatabase(let path, let reason):
            return "\(path) is not an SQLite database (\(reason)); the file was not changed."
        case .notAGamelogDatabase(let path, let applicationID):
            return "\(path) is an SQLite database but not a gamelog one (application_id \(applicationID)); the file was not changed."
        case .newerSchema(let path, let found, let supported):
            return "\(path) uses gamelog schema version \(found), newer than the \(supported) this gamelog understands. Upgrade gamelog; the file was not changed."
        case .olderSchema(let path, let found, let current):
            return "\(path) uses gamelog schema version \(found); this gamelog writes version \(current) and reads it after a migration (reading never changes the file)."
        case .migrationMismatch(let path, let version, let name):
            return "\(path) records migration \(version) (\(name)) with different SQL than this gamelog carries. The database was made by another build of gamelog; it was not changed."
        case .damagedDatabase(let path, let detail):
            return "\(path) is damaged: \(detail). Restore it from a backup or re-import the devices' logs; the file was not changed."
        case .readOnly(let path, let detail):
            return "cannot write to \(path): \(detail). Check the file's and its folder's permissions."
        case .storageFull(let path, let detail):
            return "no space left to write \(path): \(detail). Free some disk space and try again; nothing of this batch was stored (earlier batches are kept)."
        case .versionConflict(let stream, let expected, let actual):
            return "stream \(stream.uuidString.lowercased()) is at version \(actual), not \(expected); nothing was written. Re-read the stream and retry."
        case .invalidEvent(let id, let reason):
            return "event \(id.uuidString.lowercased()) is invalid: \(reason); nothing was written."
        case .invalidDictionary(let reason):
            return "invalid dictionary: \(reason); nothing was stored."
        case .checkpointConflict(let device, let sequence):
            return "device \(device)'s checkpoint \(sequence) differs from the one already stored under its key: one of the two logs was forged; nothing was stored."
        case .treeConflict(let device, let detail):
            return "device \(SafeText.line(device))'s tree cannot take this event: \(detail); nothing was written."
        case .headConflict(let device, let size):
            return "device \(SafeText.line(device)) signed two different trees of \(size) events: its history forked, and one of the two logs was forged; nothing was stored."
        case .invalidCosignature(let device, let size, let witness):
            return "witness \(SafeText.line(witness))'s cosignature of device \(SafeText.line(device))'s head at \(size) events does not verify for a head this log holds; nothing was stored."
        case .foreignSchema(let path, let detail):
            return "\(path) holds schema objects gamelog did not make (\(detail)): it was changed by another program, and gamelog will not run SQL it was given. Re-import the devices' exported logs into a new file; this one was not changed."
        case .blocksInCopy(let path):
            return "\(path), a copy of a shared store, holds events in blocks, which cannot be sent back to the store: something other than gamelog's shared store appended to it. Delete the copy (it is made again from the store); the store was not changed."
        case .damagedLog(let path, let detail):
            return "\(path) does not verify (\(detail)); its events were left as they are."
        case .missingEvent(let position):
            return "event at position \(position) is missing: a row was deleted."
        case .outOfOrder(let position, let detail):
            return "event at position \(position) is out of order: \(detail)."
        case .hashMismatch(let position):
            return "event at position \(position) does not match its hash: the row or its predecessor was changed."
        case .corruptPayload(let position, let detail):
            return "event at position \(position) has a corrupt payload: \(detail)."
        case .unknownCodec(let position, let codec):
            return "event at position \(position) uses unknown codec \(codec); it was written by a newer gamelog."
        case .unknownDictionary(let position, let dictionaryID):
            return "event at position \(position) names dictionary \(dictionaryID), which is not stored."
        case .blockIndexMismatch(let position, let detail):
            return "the block index disagrees with the events\(position > 0 ? " at position \(position)" : ""): \(detail); it was changed outside gamelog. Export the log and import it into a new file to rebuild it."
        case .streamVersionGap(let position, let stream, let expected, let found):
            return "event at position \(position) has version \(found) in stream \(stream.uuidString.lowercased()), expected \(expected)."
        }
    }
}
