import EventStore
import Foundation
import Testing

/// Some events of a block read from the start of its body (``EventBlock/events(inPrefix:bodySize:wanted:)``),
/// against the whole body read by ``EventBlock/init(body:)``.
@Suite struct BlockPrefixTests {
    /// A block of `count` events of a few streams, payloads of varied length (some empty).
    func block(_ count: Int, seed: UInt64) -> EventBlock {
        var random = seed
        func next(_ bound: Int) -> Int {
            random = random &* 6364136223846793005 &+ 1442695040888963407
            return Int((random >> 33) % UInt64(bound))
        }
        let events = (0..<count).map { index in
            EventBlock.Event(id: UUID(), hash: (0..<32).map { _ in UInt8(next(256)) }, streamRowID: Int64(1 + next(6)),
                             streamVersion: Int64(1 + next(500)), typeRowID: Int64(1 + next(30)), typeVersion: Int64(1 + next(2)),
                             recordedAt: 1_764_000_000_000_000 + Int64(index * 1_000 + next(900)),
                             leaf: next(3) == 0 ? nil : Int64(next(10_000)),
                             payload: (0..<next(900)).map { _ in UInt8(next(256)) })
        }
        return EventBlock(events: events)
    }

    /// What a reader does: starts with 4 KB (or a given start) and gives as much as asked.
    func read(_ body: [UInt8], start: Int = 4_096, wanted: Set<Int64>) throws -> (found: [(index: Int, event: EventBlock.Event)], count: Int, lastHash: [UInt8], asks: Int) {
        var length = min(start, body.count), asks = 0
        while true {
            let answer = try body.withUnsafeBufferPointer { whole in
                var taken: Set<Int64> = []
                return try EventBlock.events(inPrefix: UnsafeBufferPointer(rebasing: whole[0..<length]), bodySize: body.count) {
                    wanted.contains($0) && taken.insert($0).inserted
                }
            }
            switch answer {
            case .needs(let bytes):
                #expect(bytes > length && bytes <= body.count)
                length = bytes
                asks += 1
                if asks > 64 { Issue.record("no end to the asks"); return ([], 0, [], asks) }
            case .events(let found, let count, let lastHash):
                return (found, count, lastHash, asks)
            }
        }
    }

    @Test(arguments: [1, 2, 64, 300]) func theWantedEventsAreTheWholeBodysFirstOfEachStream(count: Int) throws {
        var checked = 0
        for seed in UInt64(1)...6 {
            let block = block(count, seed: seed)
            let body = block.body()
            let whole = try EventBlock(body: body).events
            for wanted: Set<Int64> in [[], [1], [2, 5], [1, 2, 3, 4, 5, 6], [99]] {
                for start in [1, 100, 4_096] {
                    let read = try read(body, start: start, wanted: wanted)
                    let expected = wanted.sorted().compactMap { stream in whole.firstIndex { $0.streamRowID == stream } }.sorted()
                    #expect(read.found.map(\.index) == expected)
                    #expect(read.found.map(\.event) == expected.map { whole[$0] })
                    #expect(read.count == whole.count)
                    #expect(read.lastHash == whole.last?.hash)
                    checked += read.found.count
                }
            }
        }
        #expect(checked > 0)
    }

    @Test func aFewEarlyEventsNeedOnlyTheStartOfTheBody() throws {
        let block = block(64, seed: 9)
        let body = block.body()
        let stream = block.events[0].streamRowID
        var length = 100
        var found: [(index: Int, event: EventBlock.Event)]?
        while found == nil {
            let answer = try body.withUnsafeBufferPointer { whole in
                var taken = false
                return try EventBlock.events(inPrefix: UnsafeBufferPointer(rebasing: whole[0..<length]), bodySize: body.count) {
                    // Its first event only.
                    guard $0 == stream, !taken else { return false }
                    taken = true
                    return true
                }
            }
            switch answer {
            case .needs(let bytes): length = bytes
            case .events(let events, _, _): found = events
            }
        }
        #expect(found?.first?.index == 0)
        // The columns and the first payload: far less than the whole body.
        #expect(length < body.count / 2, "\(length) of \(body.count) bytes")
    }

    @Test func aDamagedBodyIsRefusedNotLoopedOn() throws {
        let body = block(64, seed: 3).body()
        var wrongFormat = body
        wrongFormat[0] = 7
        #expect(throws: EventBlock.Malformed.self) { try read(wrongFormat, wanted: [1]) }
        // A body that says it is longer than it is: its columns claim payloads past its end.
        var cut = Array(body.prefix(body.count - 10))
        #expect(throws: EventBlock.Malformed.self) { try read(cut, wanted: Set(1...6)) }
        // A count past what the body holds.
        cut = [1, 0xFF, 0x1F] + Array(repeating: 0, count: 200)
        #expect(throws: EventBlock.Malformed.self) { try read(cut, wanted: [1]) }
    }
}
