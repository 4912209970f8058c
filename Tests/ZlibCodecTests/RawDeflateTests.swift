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

/// Inflating only the start of a stream (a block's columns and its first few events).
@Suite struct RawInflatePrefixTests {
    /// 60 KB that repeats itself a little, as a block body does.
    let body: [UInt8] = (0..<60_000).map { UInt8(truncatingIfNeeded: ($0 * 7919) % 251 + ($0 / 1000)) }

    @Test func eachAnswerSeesTheStreamsFirstBytes() throws {
        let packed = try RawDeflater(largestWindow: true).compress(body)
        let asks = [100, 4_096, 30_000, body.count]
        var seen: [Int] = []
        try RawInflater().decompressPrefix(packed, size: body.count, first: 50) { prefix in
            #expect(Array(prefix) == Array(body[0..<prefix.count]))
            seen.append(prefix.count)
            return asks.first { $0 > prefix.count }
        }
        // Out exactly as far as asked each time, the whole stream last.
        #expect(seen == [50] + asks)
    }

    @Test func anAnswerOfNilStopsEarly() throws {
        let packed = try RawDeflater().compress(body)
        var calls = 0
        try RawInflater().decompressPrefix(packed, size: body.count, first: 10_000) { prefix in
            calls += 1
            #expect(prefix.count == 10_000)
            return nil
        }
        #expect(calls == 1)
    }

    @Test func damageAndWrongSizesAreRefused() throws {
        let packed = try RawDeflater().compress(body)
        let inflater = try RawInflater()
        // The stream holds fewer bytes than the size claims.
        #expect(throws: ZlibError.self) {
            try inflater.decompressPrefix(packed, size: body.count + 1, first: body.count + 1) { _ in nil }
        }
        // A cut stream, read to its end.
        #expect(throws: ZlibError.self) {
            try inflater.decompressPrefix(Array(packed.prefix(packed.count / 2)), size: body.count, first: 4_096) { $0.count < body.count ? body.count : nil }
        }
        // More than the stream holds, or no more than is out: refused, not looped on.
        #expect(throws: ZlibError.self) {
            try inflater.decompressPrefix(packed, size: body.count, first: 100) { _ in body.count + 1 }
        }
        #expect(throws: ZlibError.self) {
            try inflater.decompressPrefix(packed, size: body.count, first: 100) { $0.count }
        }
        // Still whole after all that.
        try inflater.decompressPrefix(packed, size: body.count, first: body.count) { prefix in
            #expect(Array(prefix) == body)
            return nil
        }
    }
}
