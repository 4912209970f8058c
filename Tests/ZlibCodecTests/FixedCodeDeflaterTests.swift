import MessagesModel
import Testing
import ZlibCodec

/// Reproducible bytes, so a failure names the message that broke.
extension SeededGenerator {
    mutating func bytes(_ count: Int, alphabet: Int = 256) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next() % UInt64(alphabet)) }
    }

    static func noise(seed: UInt64, _ count: Int, alphabet: Int = 256) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return generator.bytes(count, alphabet: alphabet)
    }
}

/// `FixedCodeDeflater` writes deflate streams itself, so zlib's inflater (an
/// implementation it shares nothing with) is the judge of every stream here.
@Suite struct FixedCodeDeflaterTests {
    /// JSON like a recorded callback's payload, with an id that differs in each.
    static func payload(_ n: Int) -> [UInt8] {
        Array(("""
        {"callback":"didReceive","conversation":{"localParticipantIdentifier":"\(n % 7)A1B2C3D4-0000-4000-8000-00000000000\(n % 10)",\
        "selectedMessage":{"url":"?game=battleship&turn=\(n)&cells=\(String(repeating: "0", count: n % 100))1"}},\
        "style":"\(n % 3 == 0 ? "expanded" : "compact")","step":\(n * 37)}
        """).utf8)
    }

    static let jsonDictionary: [UInt8] = (0..<40).flatMap { payload($0 * 13) }

    func roundTrip(_ message: [UInt8], dictionary: [UInt8], _ deflater: FixedCodeDeflater,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
        let packed = deflater.compress(message)
        let unpacked = try RawInflater(dictionary: dictionary).decompress(packed, expectedSize: message.count)
        // The first difference, not two arrays of thousands of bytes.
        let differsAt = (0..<min(unpacked.count, message.count)).first { unpacked[$0] != message[$0] }
        #expect(unpacked.count == message.count && differsAt == nil,
                "a message of \(message.count) bytes came back as \(unpacked.count), differing first at \(differsAt.map(String.init) ?? "its end")",
                sourceLocation: sourceLocation)
        return packed
    }

    @Test func messagesOfEverySizeRoundTripThroughZlib() throws {
        let dictionaries: [[UInt8]] = [[], Array("ab".utf8), Self.jsonDictionary,
                                       // Longer than the window: its last 32 KiB count, as zlib's.
                                       Self.jsonDictionary + SeededGenerator.noise(seed: 9, 40_000, alphabet: 4) + Self.jsonDictionary]
        var generator = SeededGenerator(seed: 1)
        var checked = 0
        for dictionary in dictionaries {
            let deflater = FixedCodeDeflater(dictionary: dictionary)
            for size in [0, 1, 2, 3, 4, 5, 7, 8, 9, 257, 258, 259, 1_000, 5_000, 40_000, 100_000] {
                for alphabet in [1, 3, 256] {
                    _ = try roundTrip(generator.bytes(size, alphabet: alphabet), dictionary: dictionary, deflater)
                    checked += 1
                }
            }
            for n in 0..<300 {
                _ = try roundTrip(Self.payload(n), dictionary: dictionary, deflater)
                checked += 1
            }
        }
        #expect(checked == 4 * (16 * 3 + 300))
    }

    /// Every length code and every distance code, at both ends of its range: a block of
    /// noise, then its first `length` bytes again `distance` bytes after they began.
    @Test func everyLengthAndDistanceCodeIsWrittenRight() throws {
        let deflater = FixedCodeDeflater()
        let distances = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 24, 25, 32, 33, 48, 49, 64, 65, 96, 97, 128, 129,
                         192, 193, 256, 257, 384, 385, 512, 513, 768, 769, 1024, 1025, 1536, 1537, 2048, 2049,
                         3072, 3073, 4096, 4097, 6144, 6145, 8192, 8193, 12288, 12289, 16384, 16385, 24576, 24577,
                         32767, 32768]
        let lengths = [4, 5, 10, 11, 12, 13, 14, 16, 17, 18, 19, 22, 23, 26, 27, 30, 31, 34, 35, 42, 43, 50, 51, 58, 59,
                       66, 67, 82, 83, 98, 99, 114, 115, 130, 131, 162, 163, 194, 195, 226, 227, 257, 258]
        var generator = SeededGenerator(seed: 2)
        var checked = 0
        for distance in distances {
            let prefix = generator.bytes(distance)
            let alone = deflater.compress(prefix)
            for length in lengths {
                // Where the distance is shorter than the length the copy overlaps itself.
                var message = prefix
                for index in 0..<length { message.append(message[index]) }
                let packed = try roundTrip(message, dictionary: [], deflater)
                // The repeat costs a match's few bytes, not its literals (at 8 or 9 bits each).
                #expect(packed.count <= alone.count + 5, "length \(length), distance \(distance)")
                checked += 1
            }
        }
        #expect(checked == distances.count * lengths.count)
    }

    @Test func theDictionaryIsMatchedAndOnlyItsLast32KiBCount() throws {
        let far = SeededGenerator.noise(seed: 3, 1_000)
        let near = SeededGenerator.noise(seed: 4, 1_000)
        let dictionary = far + SeededGenerator.noise(seed: 5, 40_000) + near
        let deflater = FixedCodeDeflater(dictionary: dictionary)
        // Within the window: a few matches of 258 bytes.
        let fromNear = try roundTrip(near, dictionary: dictionary, deflater)
        #expect(fromNear.count < 40)
        // Out of it: noise again, a literal each byte.
        let fromFar = try roundTrip(far, dictionary: dictionary, deflater)
        #expect(fromFar.count > 1_000)
        // zlib's own deflater sees the same window.
        let zlib = try RawDeflater(dictionary: dictionary, largestWindow: true)
        #expect(try zlib.compress(far).count > 1_000)
    }

    /// One deflater serves many messages: nothing of one is matched in the next.
    @Test func messagesDoNotReachIntoEachOther() throws {
        let deflater = FixedCodeDeflater(dictionary: Self.jsonDictionary)
        let first = SeededGenerator.noise(seed: 6, 2_000)
        _ = try roundTrip(first, dictionary: Self.jsonDictionary, deflater)
        let again = try roundTrip(first, dictionary: Self.jsonDictionary, deflater)
        #expect(again.count > 2_000)
        var checked = 0
        var generator = SeededGenerator(seed: 7)
        for round in 0..<2_000 {
            let size = Int(generator.next() % 600)
            let message = round % 2 == 0 ? generator.bytes(size, alphabet: 5) : Self.payload(round)
            _ = try roundTrip(message, dictionary: Self.jsonDictionary, deflater)
            checked += 1
        }
        #expect(checked == 2_000)
    }

    /// The price of fixed codes: output near zlib's level 6 on payloads like the ones it
    /// is for (docs/BENCHMARKS.md, session 36: 10% larger on recorded payloads).
    @Test func outputStaysNearZlibsOnSmallPayloads() throws {
        let fixed = FixedCodeDeflater(dictionary: Self.jsonDictionary)
        let zlib = try RawDeflater(level: 6, dictionary: Self.jsonDictionary)
        var fixedBytes = 0, zlibBytes = 0, raw = 0
        for n in 1_000..<1_500 {
            let message = Self.payload(n)
            fixedBytes += try roundTrip(message, dictionary: Self.jsonDictionary, fixed).count
            zlibBytes += try zlib.compress(message).count
            raw += message.count
        }
        #expect(raw > 0)
        #expect(fixedBytes * 4 < raw)
        #expect(Double(fixedBytes) < Double(zlibBytes) * 1.15)
    }
}
