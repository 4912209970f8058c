import EventLog
import Foundation
import Testing

/// The log's tables key ids by ``UUIDKey`` (two words) and hash tags by their ids' words:
/// a key stands for its id alone, and tables keyed so find what tables keyed by `UUID` find.
@Suite struct UUIDKeyTests {
    @Test func aKeyStandsForItsIdAlone() {
        var generator = SystemRandomNumberGenerator()
        var ids = (0..<5_000).map { _ in UUID() }
        // Ids one bit apart, in every byte: each word must count whole.
        let base = UUID()
        for byte in 0..<16 {
            var bytes = base.uuid
            withUnsafeMutableBytes(of: &bytes) { $0[byte] ^= UInt8(1) << UInt8.random(in: 0...7, using: &generator) }
            ids.append(UUID(uuid: bytes))
        }
        ids.append(base)
        var table: [UUIDKey: UUID] = [:]
        for id in ids {
            #expect(UUIDKey(id).uuid == id)
            #expect(UUIDKey(id) == UUIDKey(UUID(uuidString: id.uuidString)!))
            table[UUIDKey(id)] = id
        }
        #expect(table.count == Set(ids).count && table.count == 5_017)
        var found = 0
        for id in ids {
            #expect(table[UUIDKey(id)] == id)
            found += 1
        }
        #expect(found == 5_017)
    }

    @Test func tagsAreOneWhenTheirKindAndIdAre() {
        let ids = (0..<1_000).map { _ in UUID() }
        var tags = Set<EventTag>()
        for id in ids {
            for kind in 1...3 { tags.insert(EventTag(kind: EventTag.Kind(rawValue: kind), id: id)) }
            // The same tag again, made from the id's text: no new member.
            tags.insert(EventTag(kind: EventTag.Kind(rawValue: 1), id: UUID(uuidString: id.uuidString)!))
        }
        #expect(tags.count == 3_000)
        #expect(ids.allSatisfy { tags.contains(EventTag(kind: EventTag.Kind(rawValue: 2), id: $0)) })
        #expect(!tags.contains(EventTag(kind: EventTag.Kind(rawValue: 4), id: ids[0])))
    }
}
