import TestSupport
import EventStore
import Foundation
import GRDB

func sampleEvents(_ count: Int, stream: UUID = UUID(), startingAt time: Int64 = 1_700_000_000_000_000) -> [NewEvent] {
    (0..<count).map { n in
        let json = #"{"callback":"didReceive","device":"A","n":\#(n),"style":"expanded","url":"?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0"}"#
        return NewEvent(id: UUID(), stream: stream, type: n.isMultiple(of: 2) ? "callback.didReceive" : "action.insert",
                        recordedAt: Timestamp(microsecondsSince1970: time + Int64(n)), payload: Array(json.utf8))
    }
}

/// Opens the file with GRDB directly, as an attacker with raw SQL would.
func tamper(_ path: String, _ sql: String) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.writeWithoutTransaction { try $0.execute(sql: sql) }
}

func fileBytes(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}

/// Flips one bit of the stored (compressed) payload of the row at `position`, with raw SQL.
func flipStoredRowByte(_ path: String, position: Int64, offset: Int? = nil) throws {
    let queue = try DatabaseQueue(path: path)
    try queue.write { db in
        var payload = try Data.fetchOne(db, sql: "SELECT payload FROM events WHERE position = ?", arguments: [position])!
        let index = offset ?? payload.count / 2
        payload[index] ^= 0x10
        try db.execute(sql: "UPDATE events SET payload = ? WHERE position = ?", arguments: [payload, position])
    }
}

/// Flips one bit of the payload of the event at `position`, in its stored block.
func flipByte(_ path: String, position: Int64, offset: Int? = nil) throws {
    try BlockSurgery.flipPayloadByte(path, position: position, offset: offset)
}
