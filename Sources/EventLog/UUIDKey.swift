import Foundation

/// A `UUID` as a hash table's key: its sixteen bytes as two words, hashed as two words.
/// `UUID` hashes its bytes through `Hasher`'s byte path, which cost a collector's writer
/// and an append several times what hashing two words does, at every lookup of an event's
/// id or recording (docs/BENCHMARKS.md, session 45). Equal ids have equal keys.
package struct UUIDKey: Hashable, Sendable {
    package let high: UInt64, low: UInt64

    @inlinable
    package init(_ uuid: UUID) {
        (high, low) = withUnsafeBytes(of: uuid.uuid) { raw in
            (raw.loadUnaligned(as: UInt64.self), raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// The id the key stands for.
    package var uuid: UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: high, as: UInt64.self)
            raw.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: bytes)
    }
}
