import EventStore
import Foundation
import GRDB
import TestSupport
import Testing

/// On both storage forms: a block's body is compressed as one, a row's payload alone.
@Suite struct CompressionTests {
    static let layouts: [EventStore.Layout] = [.blocks, .rows]

    /// The table and the compressed column of a storage form.
    func stored(_ layout: EventStore.Layout) -> (table: String, column: String) {
        layout == .rows ? ("events", "payload") : ("event_blocks", "body")
    }

    @Test(arguments: layouts) func incompressiblePayloadIsStoredRaw(layout: EventStore.Layout) throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path, layout: layout)
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<64).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try store.append([NewEvent(id: UUID(), stream: UUID(), type: "noise", recordedAt: Timestamp(microsecondsSince1970: 1), payload: noise)])
        let codec = try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT codec FROM \(stored(layout).table)") }
        #expect(codec == 0)
        #expect(try store.events().first?.payload == noise)
    }

    @Test(arguments: layouts) func aSecondDictionaryLeavesOlderEventsReadable(layout: EventStore.Layout) throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path, layout: layout)
        // Full blocks, so that the second append does not continue (and recompress) the first's.
        store.blockCapacity = 20
        let firstDictionary = Array(#"{"callback":"didReceive","device":"A","n":"#.utf8)
        let secondDictionary = Array(#"style":"expanded","url":"?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0"}"#.utf8)
        try store.addDictionary(name: "first", bytes: firstDictionary)
        let early = sampleEvents(20)
        try store.append(early)
        try store.addDictionary(name: "second", bytes: secondDictionary)
        let late = sampleEvents(20)
        try store.append(late)

        let used = try DatabaseQueue(path: path).read {
            try Row.fetchAll($0, sql: "SELECT DISTINCT dictionary_id FROM \(stored(layout).table) ORDER BY 1").map { $0[0] as Int64? }
        }
        let ids = try store.dictionaries().map(\.id)
        #expect(used.count == 2)
        #expect(used.compactMap { $0 } == ids.suffix(2))

        // A new process, with no cached inflaters, reads both generations.
        let reader = try EventStore(path: path, access: .readOnly)
        #expect(try reader.events().map(\.payload) == (early + late).map(\.payload))
        #expect(try reader.verifyIntegrity().isSound)
    }

    @Test(arguments: layouts) func shippedDictionaryCompressesTypicalEvents(layout: EventStore.Layout) throws {
        let folder = try TemporaryFolder()
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path, layout: layout)
        try store.append(sampleEvents(100))
        let (table, column) = stored(layout)
        let (raw, compressed) = try DatabaseQueue(path: path).read { db in
            let row = try Row.fetchOne(db, sql: "SELECT sum(raw_size), sum(length(\(column))) FROM \(table)")!
            return (row[0] as Int, row[1] as Int)
        }
        #expect(compressed * 2 < raw)
    }
}
