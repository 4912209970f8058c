import Testing
import ZlibCodec

@Suite struct RawDeflateTests {
    let sample = Array(#"{"callback":"didReceive","style":"expanded","url":"?0=0&0=0&1=1"}"#.utf8)
    let dictionary = Array(#""callback":"didReceive","style":"expanded","url":"?0=0&0=0&0=0"#.utf8)

    @Test func roundTripWithoutDictionary() throws {
        let packed = try RawDeflater().compress(sample)
        #expect(try RawInflater().decompress(packed) == sample)
    }

    @Test func dictionaryShrinksAndRoundTrips() throws {
        let plain = try RawDeflater().compress(sample)
        let primed = try RawDeflater(dictionary: dictionary).compress(sample)
        #expect(primed.count < plain.count)
        #expect(try RawInflater(dictionary: dictionary).decompress(primed, expectedSize: sample.count) == sample)
    }

    @Test func oneDeflaterServesManyMessages() throws {
        let deflater = try RawDeflater(dictionary: dictionary)
        let inflater = try RawInflater(dictionary: dictionary)
        for n in 0..<200 {
            let message = Array("message number \(n) \(String(repeating: "x", count: n))".utf8)
            #expect(try inflater.decompress(deflater.compress(message)) == message)
        }
    }

    /// Raw deflate carries no dictionary id: a wrong dictionary cannot be told from the
    /// stream itself. It decodes, to other bytes of the same length, which is why every
    /// event names its dictionary and is covered by its hash.
    @Test func wrongDictionaryDecodesToOtherBytes() throws {
        let primed = try RawDeflater(dictionary: dictionary).compress(sample)
        let other = Array(String(repeating: "z", count: dictionary.count).utf8)
        let result = try RawInflater(dictionary: other).decompress(primed, expectedSize: sample.count)
        #expect(result.count == sample.count)
        #expect(result != sample)
        // The right dictionary gives the sample back: the difference is the dictionary's alone.
        #expect(try RawInflater(dictionary: dictionary).decompress(primed, expectedSize: sample.count) == sample)
    }

    @Test func truncatedInputIsATypedError() throws {
        let packed = try RawDeflater().compress(Array(repeating: 7, count: 10_000) + sample)
        #expect(throws: ZlibError.self) { try RawInflater().decompress(Array(packed.dropLast(packed.count / 2))) }
    }

    /// docs/FORMAT.md: nothing may follow the deflate stream, so a stored payload with
    /// bytes appended (outside the hash, which covers the decoded bytes) is found.
    @Test func bytesAfterTheStreamAreAnError() throws {
        let packed = try RawDeflater().compress(sample)
        #expect(try RawInflater().decompress(packed, expectedSize: sample.count) == sample)
        #expect(throws: ZlibError.corruptInput(message: "1 bytes follow the end of the deflate stream")) {
            try RawInflater().decompress(packed + [0], expectedSize: sample.count)
        }
    }

    @Test func garbageIsATypedError() throws {
        #expect(throws: ZlibError.self) { try RawInflater().decompress([0xFF, 0xFF, 0xFF, 0xFF, 0x00]) }
    }

    @Test func decompressionBombIsStoppedAtTheLimit() throws {
        let packed = try RawDeflater().compress([UInt8](repeating: 0, count: 1 << 20))
        #expect(throws: ZlibError.outputTooLarge(limit: 4096)) {
            try RawInflater().decompress(packed, limit: 4096)
        }
    }

    @Test func sizeMismatchIsReported() throws {
        let packed = try RawDeflater().compress(sample)
        #expect(throws: ZlibError.self) { try RawInflater().decompress(packed, expectedSize: sample.count + 1) }
    }
}
