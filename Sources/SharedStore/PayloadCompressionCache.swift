import EventStore
import Foundation

/// Payloads as the store keeps them, by their bytes and dictionary, for a collector's
/// uploads: a game's events repeat the same payloads (each lifecycle callback, an input
/// whose ids are written as references to the recording's), and in a load of simulated
/// games 47% of the payloads were one met before. Compressing is deterministic (the
/// same bytes, dictionary and level give the same output), so a payload found here is
/// stored exactly as compressing it again would store it.
///
/// Bounded by `budget` bytes (payloads and their compressed forms): two generations,
/// the older dropped when the newer fills half of it, and what the older holds moved to
/// the newer when asked for again.
package final class PayloadCompressionCache: @unchecked Sendable {
    private struct Key: Hashable {
        /// The dictionary's ``PayloadCompressionCache/token(of:)``.
        var dictionary: Int64?
        var payload: [UInt8]
        /// The payload's bytes hashed once, as one buffer (an array of bytes hashes byte by
        /// byte through `Hasher`, which cost more than the deflate this saves), by `Hasher`:
        /// keyed with this process's random seed, so no one can search offline for payloads
        /// that share a digest (an unkeyed mix of words, before, could be searched: each
        /// lookup compares with every payload of its digest). 85 ns an event more than the
        /// mix (150 against 68 for 300-500 bytes). Equal payloads have equal digests; two
        /// that differ are told apart by `==`.
        let digest: Int

        init(dictionary: Int64?, payload: [UInt8]) {
            self.dictionary = dictionary
            self.payload = payload
            var hasher = Hasher()
            payload.withUnsafeBytes { hasher.combine(bytes: $0) }
            digest = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(dictionary)
            hasher.combine(digest)
        }

        static func == (a: Key, b: Key) -> Bool {
            a.digest == b.digest && a.dictionary == b.dictionary && a.payload.count == b.payload.count
                && a.payload.withUnsafeBytes { x in
                    b.payload.withUnsafeBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
                }
        }
    }

    private let lock = NSLock()
    private var current: [Key: PayloadEncoder.Encoded] = [:]
    private var previous: [Key: PayloadEncoder.Encoded] = [:]
    private var currentBytes = 0
    /// The dictionaries met, each with the number that stands for it in the keys: a store's
    /// dictionary never changes, but a collector may be pointed at a store restored from
    /// elsewhere, whose dictionary of the same id holds other bytes.
    private var dictionaries: [Int64: (bytes: [UInt8], token: Int64)] = [:]
    private var nextToken: Int64 = 1
    /// The most bytes kept (payloads and their compressed forms).
    package let budget: Int

    package init(budget: Int = 32 << 20) { self.budget = budget }

    /// The number that stands for `dictionary` (nil: none) in ``encoded(_:dictionary:encode:)``:
    /// the same for the same id and bytes, a new one when an id comes with other bytes, so
    /// nothing compressed with the old bytes is found for the new (an upload still
    /// compressing with them keeps its payloads under the old one).
    package func token(of dictionary: SharedStore.Dictionary?) -> Int64? {
        guard let dictionary else { return nil }
        return lock.withLock {
            if let known = dictionaries[dictionary.id], known.bytes == dictionary.bytes { return known.token }
            let token = nextToken
            nextToken += 1
            dictionaries[dictionary.id] = (dictionary.bytes, token)
            return token
        }
    }

    /// `payload` as `encode` (which compresses it with the dictionary `token` stands for)
    /// stores it: from the cache when met before, else encoded now (outside the lock) and kept.
    package func encoded(_ payload: [UInt8], dictionary token: Int64?,
                         encode: () throws -> PayloadEncoder.Encoded) rethrows -> PayloadEncoder.Encoded {
        let key = Key(dictionary: token, payload: payload)
        if let found = lookUp(key) { return found }
        let value = try encode()
        keep(key, value)
        return value
    }

    /// How many payloads were found here rather than compressed (for tests).
    package var hits: Int { lock.withLock { hitCount } }
    private var hitCount = 0

    /// Bytes held now, for tests of the bound.
    package var heldBytes: Int {
        lock.withLock { Self.bytes(of: current) + Self.bytes(of: previous) }
    }

    private static func bytes(of generation: [Key: PayloadEncoder.Encoded]) -> Int {
        generation.reduce(0) { $0 + $1.key.payload.count + $1.value.bytes.count }
    }

    private func lookUp(_ key: Key) -> PayloadEncoder.Encoded? {
        lock.withLock {
            if let found = current[key] {
                hitCount += 1
                return found
            }
            guard let found = previous.removeValue(forKey: key) else { return nil }
            hitCount += 1
            insert(key, found)
            return found
        }
    }

    private func keep(_ key: Key, _ value: PayloadEncoder.Encoded) {
        lock.withLock { if current[key] == nil { insert(key, value) } }
    }

    /// Called with the lock held.
    private func insert(_ key: Key, _ value: PayloadEncoder.Encoded) {
        let size = key.payload.count + value.bytes.count
        // A payload larger than a generation is not kept (it would evict everything for itself).
        guard size <= budget / 2 else { return }
        if currentBytes + size > budget / 2 {
            previous = current
            current = [:]
            currentBytes = 0
        }
        current[key] = value
        currentBytes += size
    }
}
