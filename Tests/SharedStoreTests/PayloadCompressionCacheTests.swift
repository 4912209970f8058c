import EventStore
import Foundation
import SharedStore
import Testing

/// A collector reuses the compressed form of a payload it met before: stored exactly as
/// compressing it again would store it, within a bounded memory.
struct PayloadCompressionCacheTests {
    private static let dictionary = SharedStore.Dictionary(id: 1, bytes: Array(#"{"body":{"callback":"willBecomeActive","conversation":{"id":"$c"}},"context":{"isActive":true,"style":0}}"#.utf8))

    /// Payloads like a game's: a few that repeat often, many met once.
    private static func payloads(count: Int) -> [[UInt8]] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { index in
            let text = index % 3 == 0
                ? #"{"body":{"openConversation":{"_0":"$c"}},"context":{"isActive":false,"style":\#(index % 2)}}"#
                : #"{"body":{"move":{"cell":\#(UInt64.random(in: 0...UInt64.max, using: &generator))}},"context":{"isActive":true,"style":1}}"#
            return Array(text.utf8)
        }
    }

    private static func compressed(_ payloads: [[UInt8]], ids: [UUID], dictionary: SharedStore.Dictionary = dictionary,
                                   cache: PayloadCompressionCache?) throws -> CompressedPayloads {
        try CompressedPayloads(dictionary: dictionary, cache: cache) { each in
            for (id, payload) in zip(ids, payloads) { try each(id, payload) }
        }
    }

    @Test func aPayloadMetBeforeIsStoredAsCompressingItAgainWould() throws {
        let payloads = Self.payloads(count: 600)
        let encoder = PayloadEncoder(dictionaryID: Self.dictionary.id, dictionary: Self.dictionary.bytes)
        let cache = PayloadCompressionCache()
        var compared = 0
        // Two uploads through one cache: the second finds every payload of the first.
        for upload in 0..<2 {
            let ids = payloads.map { _ in UUID() }
            let cached = try Self.compressed(payloads, ids: ids, cache: cache)
            // Two payloads repeat within an upload: 200 events, two distinct.
            #expect(cache.hits == (upload == 0 ? 198 : 798))
            for (id, payload) in zip(ids, payloads) {
                let expected = encoder.encode(payload)
                let found = try #require(cached.payload(of: id, dictionaryID: Self.dictionary.id))
                #expect(found.codec == expected.codec && found.dictionaryID == expected.dictionaryID && found.bytes == expected.bytes)
                compared += 1
            }
        }
        #expect(compared == 1_200)
    }

    @Test func theCacheKeepsToItsBudget() throws {
        let cache = PayloadCompressionCache(budget: 64 << 10)
        let payloads = Self.payloads(count: 5_000)
        _ = try Self.compressed(payloads, ids: payloads.map { _ in UUID() }, cache: cache)
        #expect(cache.heldBytes > 0)
        #expect(cache.heldBytes <= 64 << 10)
    }

    @Test func aDictionaryWhoseBytesChangedUnderItsIdFindsNothingCompressedWithTheOldBytes() throws {
        let cache = PayloadCompressionCache()
        let payloads = Self.payloads(count: 30)
        _ = try Self.compressed(payloads, ids: payloads.map { _ in UUID() }, cache: cache)
        let before = cache.hits
        let other = SharedStore.Dictionary(id: Self.dictionary.id, bytes: Array("another dictionary".utf8))
        let ids = payloads.map { _ in UUID() }
        let again = try Self.compressed(payloads, ids: ids, dictionary: other, cache: cache)
        let encoder = PayloadEncoder(dictionaryID: other.id, dictionary: other.bytes)
        // Nothing compressed with the old bytes is reused: each is what the new dictionary makes.
        for (id, payload) in zip(ids, payloads) {
            #expect(again.payload(of: id, dictionaryID: other.id)?.bytes == encoder.encode(payload).bytes)
        }
        // Only the repeats within this upload: ten of its payloads are two, five times each.
        #expect(cache.hits - before == 8)
    }

    /// An id given twice with two payloads (a hostile upload) has no compressed payload
    /// here: the writer compresses what it stores. Twice with one payload, it keeps it.
    @Test func anIdWithTwoPayloadsIsLeftToTheWriter() throws {
        let payloads = Self.payloads(count: 40)
        let ids = payloads.map { _ in UUID() }
        let encoder = PayloadEncoder(dictionaryID: Self.dictionary.id, dictionary: Self.dictionary.bytes)
        for cache in [nil, PayloadCompressionCache()] {
            // Ids 0 and 1 again: id 0 with another payload (a `move` for an `openConversation`), id 1 with its own.
            let twice = try CompressedPayloads(dictionary: Self.dictionary, cache: cache) { each in
                for (id, payload) in zip(ids, payloads) { try each(id, payload) }
                try each(ids[0], payloads[1])
                try each(ids[1], payloads[1])
            }
            #expect(payloads[0] != payloads[1])
            #expect(twice.payload(of: ids[0], dictionaryID: Self.dictionary.id) == nil)
            #expect(twice.payload(of: ids[1], dictionaryID: Self.dictionary.id)?.bytes == encoder.encode(payloads[1]).bytes)
            let kept = ids.dropFirst().filter { twice.payload(of: $0, dictionaryID: Self.dictionary.id) != nil }
            #expect(kept.count == 39)
            // Asked with another dictionary, it has nothing.
            #expect(twice.payload(of: ids[1], dictionaryID: 2) == nil)
        }
    }

    /// Uploads' payloads merge into one set when no id is two uploads', and one
    /// dictionary compressed them all; otherwise not at all.
    @Test func partsMergeOnlyWithoutASharedIdAndWithOneDictionary() throws {
        let payloads = Self.payloads(count: 90)
        let ids = payloads.map { _ in UUID() }
        let cache = PayloadCompressionCache()
        let parts = try stride(from: 0, to: 90, by: 30).map { start in
            try Self.compressed(Array(payloads[start..<(start + 30)]), ids: Array(ids[start..<(start + 30)]), cache: cache)
        }
        let merged = try #require(CompressedPayloads.merging(parts))
        let encoder = PayloadEncoder(dictionaryID: Self.dictionary.id, dictionary: Self.dictionary.bytes)
        var found = 0
        for (id, payload) in zip(ids, payloads) {
            #expect(merged.payload(of: id, dictionaryID: Self.dictionary.id)?.bytes == encoder.encode(payload).bytes)
            found += 1
        }
        #expect(found == 90)
        // One id in two parts, even with the same payload: not merged.
        let again = try Self.compressed([payloads[45]], ids: [ids[45]], cache: cache)
        #expect(CompressedPayloads.merging(parts + [again]) == nil)
        // Another dictionary: not merged.
        let other = SharedStore.Dictionary(id: 2, bytes: Self.dictionary.bytes)
        let elsewhere = try Self.compressed([payloads[0]], ids: [UUID()], dictionary: other, cache: cache)
        #expect(CompressedPayloads.merging(parts + [elsewhere]) == nil)
        #expect(CompressedPayloads.merging([]) == nil)
    }
}
