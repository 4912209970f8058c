import EventStore
import Foundation
import GRDB
import TestSupport
import Testing

@Suite struct CompressionTests {
    @Test func incompressiblePayloadIsStoredRaw() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try store.append([NewEvent(id: UUID(), stream: UUID(), type: "noise", recordedAt: Timestamp(microsecondsSince1970: 1), payload: noise)])
        let codec = try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT codec FROM events") }
        #expect(codec == 0)
        #expect(try store.events().first?.payload == noise)
    }

    @Test func aSecondDictionaryLeavesOlderEventsReadable() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        let firstDictionary = Array(#"{"callback":"didReceive","device":"A","n":"#.utf8)
        let secondDictionary = Array(#"style":"expanded","url":"?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0"}"#.utf8)
        try store.addDictionary(name: "first", bytes: firstDictionary)
        let early = sampleEvents(20)
        try store.append(early)
        try store.addDictionary(name: "second", bytes: secondDictionary)
        let late = sampleEvents(20)
        try store.append(late)

        let used = try DatabaseQueue(path: path).read {
            try Row.fetchAll($0, sql: "SELECT DISTINCT dictionary_id FROM events ORDER BY 1").map { $0[0] as Int64? }
        }
        let ids = try store.dictionaries().map(\.id)
        #expect(used.count == 2)
        #expect(used.compactMap { $0 } == ids.suffix(2))

        // A new process, with no cached inflaters, reads both generations.
        let reader = try EventStore(path: path, access: .readOnly)
        #expect(try reader.events().map(\.payload) == (early + late).map(\.payload))
        #expect(try reader.verifyIntegrity().isSound)
    }

    @Test func shippedDictionaryCompressesTypicalEvents() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        try store.append(sampleEvents(100))
        let (raw, stored) = try DatabaseQueue(path: path).read { db in
            let row = try Row.fetchOne(db, sql: "SELECT sum(raw_size), sum(length(payload)) FROM events")!
            return (row[0] as Int, row[1] as Int)
        }
        #expect(stored * 2 < raw)
    }
}
