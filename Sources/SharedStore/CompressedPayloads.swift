import EventLog
import EventStore
import Foundation
import PostgresNIO

/// Payloads compressed as the store keeps them (level 6, one dictionary), made before
/// a write so that the write need not: see ``PostgresLogWriter/precompressed``.
package struct CompressedPayloads: Sendable {
    /// The dictionary they were compressed with (nil: none).
    package let dictionaryID: Int64?
    /// By event id; nil for an id met with two payloads (a hostile upload): the writer
    /// compresses what it stores. Every id met is a key, for ``merging(_:)``. (A group's
    /// payloads are looked up, merged and checked for overlap by id, on its writer too:
    /// keyed by `UUID`, hashing the ids was a tenth of what compressing them cost.)
    private var byID: [UUIDKey: PayloadEncoder.Encoded?] = [:]

    /// Compresses each payload `forEach` gives with `dictionary`.
    /// - Parameter cache: payloads compressed before (by any upload), reused when the
    ///   same bytes come again with the same dictionary.
    package init(dictionary: SharedStore.Dictionary?, cache: PayloadCompressionCache? = nil,
                 forEach: ((UUID, [UInt8]) throws -> Void) throws -> Void) throws {
        dictionaryID = dictionary?.id
        let encoder = PayloadEncoder(dictionaryID: dictionary?.id, dictionary: dictionary?.bytes ?? [])
        let dictionaryToken = cache?.token(of: dictionary)
        var byID: [UUIDKey: PayloadEncoder.Encoded?] = [:]
        try forEach { id, payload in
            let encoded = cache?.encoded(payload, dictionary: dictionaryToken) { encoder.encode(payload) } ?? encoder.encode(payload)
            let key = UUIDKey(id)
            guard case .some(let seen) = byID.updateValue(encoded, forKey: key) else { return }
            // One id twice: compressing is deterministic and lossless, so two payloads
            // are one exactly when their compressed forms are.
            if seen?.codec != encoded.codec || seen?.bytes != encoded.bytes { byID[key] = .some(nil) }
        }
        self.byID = byID
    }

    /// Several uploads' payloads as one (nil unless one dictionary compressed them all, and
    /// no id is two of theirs).
    package static func merging(_ parts: [CompressedPayloads]) -> CompressedPayloads? {
        guard var merged = parts.first else { return nil }
        // Room for all of them at once: grown part by part, the table was rehashed as often.
        merged.byID.reserveCapacity(parts.reduce(0) { $0 + $1.byID.count })
        for part in parts.dropFirst() {
            guard part.dictionaryID == merged.dictionaryID else { return nil }
            var shared = false
            merged.byID.merge(part.byID) { mine, _ in
                shared = true
                return mine
            }
            if shared { return nil }
        }
        return merged
    }

    /// Event `id`'s payload as the store keeps it, if compressed here with `dictionaryID`.
    package func payload(of id: UUID, dictionaryID: Int64?) -> PayloadEncoder.Encoded? {
        guard dictionaryID == self.dictionaryID else { return nil }
        return byID[UUIDKey(id)] ?? nil
    }
}

extension SharedStore {
    /// A compression dictionary of the store.
    package struct Dictionary: Sendable {
        package var id: Int64
        package var bytes: [UInt8]

        package init(id: Int64, bytes: [UInt8]) {
            self.id = id
            self.bytes = bytes
        }
    }

    /// The store's newest dictionary, the one its writes compress with (nil: none).
    package func newestDictionary() async throws -> Dictionary? {
        try await withConnection { connection in
            let rows = try await connection.query("SELECT id, bytes FROM dictionaries ORDER BY id DESC LIMIT 1", logger: Self.logger)
            for try await (id, bytes) in rows.decode((Int64, ByteBuffer).self) {
                return Dictionary(id: id, bytes: Array(bytes.readableBytesView))
            }
            return nil
        }
    }
}
