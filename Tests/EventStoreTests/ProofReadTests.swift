@testable import EventStore
import Foundation
import GRDB
import Testing
import TestSupport

/// What a proof reads of a device's tree (its leaves by tile, its stored nodes), and what
/// a reader keeps of it between proofs.
@Suite struct ProofReadTests {
    /// Two devices recording turn about, several recordings each: every tile of one tree
    /// lies among the other's events.
    func interleavedLog(_ folder: TemporaryFolder, rounds: Int = 40) throws -> (path: String, keys: [String: DeviceKey], streams: [String: Set<UUID>]) {
        let path = folder.path("log.sqlite")
        let store = try EventStore(path: path)
        let keys = ["A": try DeviceKey.random(device: "A"), "B": try DeviceKey.random(device: "B")]
        var streams: [String: Set<UUID>] = [:]
        for round in 0..<rounds {
            for device in ["A", "B"] {
                // A new recording every fourth round: each tree holds ten.
                let stream = round % 4 == 0 ? UUID() : streams[device]!.max { $0.uuidString < $1.uuidString }!
                if round % 4 == 0 { streams[device, default: []].insert(stream) }
                try append(store, 5, stream: stream, device: device, keys: keys, time: Int64(round * 10))
            }
        }
        return (path, keys, streams)
    }

    private func append(_ store: EventStore, _ count: Int, stream: UUID, device: String, keys: [String: DeviceKey], time: Int64) throws {
        let events = sampleEvents(count, stream: stream, startingAt: 1_700_000_000_000_000 + time * 1_000)
        try store.append(events, signing: { _ in keys[device] })
    }

    func treeID(_ path: String, device: String) throws -> Int64 {
        try DatabaseQueue(path: path).read { try Int64.fetchOne($0, sql: "SELECT id FROM trees WHERE device = ?", arguments: [device])! }
    }

    /// Each leaf hash of `device`'s events, by leaf, as the events themselves give them.
    func expectedLeaves(_ path: String, streams: Set<UUID>) throws -> [Int64: [UInt8]] {
        try EventStore(path: path, access: .readOnly).leafHashes(streams: streams)
    }

    @Test func aTilesLeavesAreItsTreesAloneWhereDevicesInterleave() throws {
        let folder = try TemporaryFolder()
        let (path, _, streams) = try interleavedLog(folder)
        let reader = try EventStore(path: path, access: .readOnly)
        var checked = 0
        for device in ["A", "B"] {
            let tile = try reader.leafHashes(tree: try treeID(path, device: device), range: 0..<256)
            let expected = try expectedLeaves(path, streams: streams[device]!)
            // 40 rounds of 5 events: 200 leaves each, every one in the first tile.
            #expect(expected.count == 200)
            // Compared apart: a failure prints the counts, not two tables of 200 hashes.
            let same = tile == expected
            #expect(same, "device \(device): \(tile.count) leaves read, \(expected.count) of its own")
            checked += tile.count
        }
        #expect(checked == 400)
    }

    /// A store reading its file as immutable keeps the names of recordings and event types
    /// its reads found (each read looked them up again, a statement each); a store that
    /// writes does not (a write rolled back frees the row ids it took), nor one that
    /// follows another process's appends (it reads the file as it is now).
    @Test func readersKeepTheNamesTheyFoundAndWritersDoNot() throws {
        let folder = try TemporaryFolder()
        let (path, _, streams) = try interleavedLog(folder, rounds: 8)
        let reader = try EventStore(path: path, access: .readOnly)
        let names = try #require(reader.knownNames)
        let first = try reader.events()
        let (types, streamRows) = try DatabaseQueue(path: path).read { db in
            (try Row.fetchAll(db, sql: "SELECT id, name FROM event_types").map { (Int64.fromDatabaseValue($0[0])!, String.fromDatabaseValue($0[1])!) },
             try Row.fetchAll(db, sql: "SELECT id, uuid FROM streams").map { (Int64.fromDatabaseValue($0[0])!, UUID(bytes: Data.fromDatabaseValue($0[1])!)!) })
        }
        #expect(!types.isEmpty && streamRows.count == streams.values.map(\.count).reduce(0, +))
        for (id, name) in types { #expect(names.type(id) == name) }
        for (id, uuid) in streamRows { #expect(names.kept(stream: id) == uuid) }
        // Read again from what it kept: the same events, named the same.
        let again = try reader.events()
        #expect(again.count == first.count && first.count == 80 && again.map(\.type) == first.map(\.type) && again.map(\.stream) == first.map(\.stream))
        #expect(try EventStore(path: path, access: .readOnly, followingAppends: true).knownNames == nil)
        #expect(try EventStore(path: path).knownNames == nil)
    }

    /// Blocks decoded while a memo is given are read again from it, and only for a row
    /// exactly like the one decoded: a block changed meanwhile is read as it is now.
    @Test func aBlockMemoAnswersOnlyForTheRowItDecoded() throws {
        let folder = try TemporaryFolder()
        let (path, _, _) = try interleavedLog(folder, rounds: 8)
        // A reader that sees the file as it is now, as a follower of appends does.
        let reader = try EventStore(path: path, access: .readOnly, followingAppends: true)
        let memo = BlockMemo()
        try reader.remembering(blocks: memo) {
            let first = try reader.events()
            #expect(first.count == 80 && memo.count >= 2)
            #expect(try reader.events() == first)
            // A payload changed in the block that holds position 10, written back as a forger would.
            try DatabaseQueue(path: path).write { db in
                var block = try BlockSurgery.open(db, holding: 10)
                let index = Int(10 - block.first)
                block.events[index].payload = Array(String(decoding: block.events[index].payload, as: UTF8.self)
                    .replacingOccurrences(of: "1", with: "2").utf8)
                try BlockSurgery.write(block, db)
            }
            #expect(throws: EventStoreError.self) { _ = try reader.events() }
        }
        // Outside its scope the memo is not used: the change is found all the same.
        #expect(throws: EventStoreError.self) { _ = try reader.events() }
    }

    @Test func aPartialTileIsReadAgainOnceItsTreeGrows() throws {
        let folder = try TemporaryFolder()
        let (path, keys, streams) = try interleavedLog(folder, rounds: 60)
        // A reader that sees what is appended after it opened (as `serve --follow` reads).
        let reader = try EventStore(path: path, access: .readOnly, followingAppends: true)
        let tree = try treeID(path, device: "A")
        // 300 leaves: the first tile is full, the second holds 44.
        #expect(try reader.leafHashes(tree: tree, range: 0..<256).count == 256)
        let before = try reader.leafHashes(tree: tree, range: 256..<512)
        #expect(before.count == 44)
        #expect(reader.proofCache.counts.tiles == 2)
        // Asked again at the same size: the same leaves.
        #expect(try reader.leafHashes(tree: tree, range: 256..<512) == before)

        let writer = try EventStore(path: path)
        try append(writer, 7, stream: streams["A"]!.first!, device: "A", keys: keys, time: 10_000)
        let after = try reader.leafHashes(tree: tree, range: 256..<512)
        #expect(after.count == 51)
        let expected = try expectedLeaves(path, streams: streams["A"]!).filter { (256..<512).contains($0.key) }
        let same = after == expected
        #expect(same, "\(after.count) leaves read, \(expected.count) in the tile")
        #expect(before.allSatisfy { after[$0.key] == $0.value })
    }

    @Test func readersOfOneLogCanShareWhatTheyRead() throws {
        let folder = try TemporaryFolder()
        let (path, _, _) = try interleavedLog(folder)
        let first = try EventStore(path: path, access: .readOnly)
        let second = try #require(try first.anotherReader() as? EventStore)
        #expect(second.proofCache === first.proofCache)
        let tree = try treeID(path, device: "B")
        _ = try first.leafHashes(tree: tree, range: 0..<256)
        let node = try first.storedNode(tree: tree, range: 0..<256)
        #expect(node == nil, "a tree of 200 leaves stores no tile")
        // A tile not yet full is kept with its tree's size; nothing else was found to keep.
        #expect(second.proofCache.counts == (nodes: 0, tiles: 1))
        #expect(try second.leafHashes(tree: tree, range: 0..<256) == (try first.leafHashes(tree: tree, range: 0..<256)))
    }
}
