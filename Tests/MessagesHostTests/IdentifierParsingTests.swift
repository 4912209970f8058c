import Foundation
import MessagesModel
import Testing

@Suite struct IdentifierParsingTests {
    @Test func parsesWhatFoundationParses() {
        for _ in 0..<2_000 {
            let id = UUID()
            #expect(UUID(hyphenated: id.uuidString) == id)
            #expect(UUID(hyphenated: id.uuidString.lowercased()) == id)
            #expect(UUID(hyphenated: id.uuidString[...]) == id)
        }
    }

    @Test func writesWhatFoundationWrites() {
        var checked = 0
        for id in (0..<2_000).map({ _ in UUID() }) + [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
                                                        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255))] {
            #expect(id.hyphenatedString == id.uuidString)
            checked += 1
        }
        #expect(checked == 2_002)
    }

    @Test(arguments: [
        "", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5FF",
        "E621E1F8C36C-495A-93FC-0C247A3E6E5F0", "E621E1F8-C36C-495A-93FC_0C247A3E6E5F",
        "G621E1F8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5 ",
        "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}", "E621E1F8-C36C-495A-93FC-0C247A3É6E5F",
    ])
    func rejectsEverythingElse(_ text: String) {
        #expect(UUID(hyphenated: text) == nil)
        #expect(UUID(uuidString: text) == nil)
    }

    /// Every byte value at every place of the 36, read in one piece (an array, where
    /// digits are read without a branch) and as a sequence: accepted exactly where the
    /// place wants it (a hyphen, or a hex digit of either case), with Foundation's value.
    /// (Foundation's own reading is laxer: `sscanf` lets a space, a sign or an `x` through
    /// at some places; an id in a log is written one way only.)
    @Test func everyByteAtEveryPlaceIsReadAsFoundationReadsIt() {
        let id = UUID()
        var checked = 0
        for text in [id.uuidString, id.uuidString.lowercased()] {
            let base = Array(text.utf8)
            for place in 0..<36 {
                for byte in 0...255 {
                    var bytes = base
                    bytes[place] = UInt8(byte)
                    let wanted = [8, 13, 18, 23].contains(place) ? byte == 45 : (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
                    let expected = wanted ? UUID(uuidString: String(decoding: bytes, as: UTF8.self)) : nil
                    #expect(!wanted || expected != nil)
                    #expect(UUID(hyphenatedUTF8: bytes) == expected, "byte \(byte) at \(place)")
                    #expect(UUID(hyphenatedUTF8: bytes.lazy.map { $0 }) == expected, "byte \(byte) at \(place), as a sequence")
                    checked += 1
                }
            }
        }
        #expect(checked == 2 * 36 * 256)
    }

    /// A device's owner is found by comparing its name table's keys with the id in place.
    @Test func anIdIsSpelledByItsOwnStringAlone() {
        var compared = 0
        for _ in 0..<500 {
            let id = UUID(), other = UUID()
            #expect(id.isSpelled(by: id.hyphenatedString))
            #expect(!id.isSpelled(by: id.uuidString.lowercased()), "name tables are keyed by the upper-case spelling")
            #expect(!id.isSpelled(by: other.hyphenatedString))
            #expect(!id.isSpelled(by: String(id.hyphenatedString.dropLast())))
            #expect(!id.isSpelled(by: id.hyphenatedString + "0"))
            compared += 1
        }
        #expect(compared == 500)
    }

    /// Ids hash as two words of their UUID: equal ids hash alike, and tables of them hold
    /// every id once and find each.
    @Test func idsHashAsTheirUUIDs() {
        let ids = (0..<5_000).map { _ in MessageID(UUID()) }
        let set = Set(ids), table = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
        #expect(set.count == ids.count)
        for (index, id) in ids.enumerated() {
            #expect(table[MessageID(id.uuid)] == index)
            #expect(id.hashValue == MessageID(id.uuid).hashValue)
        }
        #expect(ConversationID(ids[0].uuid).hashValue == ConversationID(ids[0].uuid).hashValue)
        #expect(!set.contains(MessageID(UUID())))
    }

    @Test func captionsResolveMentionsInEitherCase() {
        let bob = ParticipantID(UUID())
        let names = [bob: "Bob"]
        #expect(ParticipantNames.resolve("$\(bob.uuid.uuidString) to move", names: names) == "Bob to move")
        #expect(ParticipantNames.resolve("$\(bob.uuid.uuidString.lowercased())!", names: names) == "Bob!")
        #expect(ParticipantNames.resolve("$nobody $", names: names) == "$nobody $")
    }
}
