import Crypto
import EventStore
import Foundation
import NIOCore
import PostgresNIO

/// What a collector reads and writes in the store besides the log: enrolled devices,
/// access tokens, and the heads it accepted (read straight from the store's rows).
extension SharedStore {
    /// The role an access token grants.
    public enum TokenRole: String, Sendable {
        /// Enrolls devices.
        case admin
        /// Reads the collector's API and viewer.
        case reader
    }

    /// The outcome of enrolling a device key.
    public enum Enrollment: Hashable, Sendable {
        case enrolled
        /// The key was enrolled already under this name.
        case alreadyEnrolled
        /// The key is enrolled under another name.
        case enrolledAs(String)
        /// The name is enrolled with another key (a device signs with one key).
        case nameTaken
    }

    /// The name the key is enrolled under, if it is.
    public func enrolledDevice(publicKey: [UInt8]) async throws -> String? {
        try await withConnection { connection in
            var binds = PostgresBindings()
            binds.append(ByteBuffer(bytes: publicKey))
            return try await run(connection, "SELECT device FROM enrolled_devices WHERE public_key = $1", binds).first?.decode(String.self)
        }
    }

    /// Enrolls a device's key under its name (a key signs as one device only).
    public func enroll(device: String, publicKey: [UInt8]) async throws -> Enrollment {
        try await withConnection { connection in
            try await run(connection, "BEGIN")
            // Serialises enrollments, so two keys cannot take one name at once.
            try await run(connection, "LOCK TABLE enrolled_devices IN SHARE ROW EXCLUSIVE MODE")
            var named = PostgresBindings()
            named.append(device)
            named.append(ByteBuffer(bytes: publicKey))
            if try await !run(connection, "SELECT 1 FROM enrolled_devices WHERE device = $1 AND public_key <> $2", named).isEmpty {
                try await run(connection, "ROLLBACK")
                return .nameTaken
            }
            var binds = PostgresBindings()
            binds.append(ByteBuffer(bytes: publicKey))
            binds.append(device)
            binds.append(Timestamp(Date()).microsecondsSince1970)
            let inserted = try await run(connection, """
                INSERT INTO enrolled_devices (public_key, device, enrolled_at) VALUES ($1, $2, $3)
                ON CONFLICT (public_key) DO NOTHING RETURNING device
                """, binds)
            var lookup = PostgresBindings()
            lookup.append(ByteBuffer(bytes: publicKey))
            let name = inserted.isEmpty
                ? try await run(connection, "SELECT device FROM enrolled_devices WHERE public_key = $1", lookup).first?.decode(String.self) : device
            try await run(connection, "COMMIT")
            if !inserted.isEmpty { return .enrolled }
            return name == device ? .alreadyEnrolled : .enrolledAs(name ?? "?")
        }
    }

    /// Makes a token for `role` if the store has none yet; returns it then (it is never
    /// stored, only its SHA-256), else nil.
    public func makeFirstToken(_ role: TokenRole) async throws -> String? {
        try await withConnection { connection in
            try await inTransaction(connection) {
                try await run(connection, "LOCK TABLE access_tokens IN EXCLUSIVE MODE")
                var binds = PostgresBindings()
                binds.append(role.rawValue)
                let count = try await run(connection, "SELECT count(*) FROM access_tokens WHERE role = $1", binds).first?.decode(Int64.self) ?? 0
                guard count == 0 else { return nil }
                var random = SystemRandomNumberGenerator()
                let token = "gl" + role.rawValue.prefix(1) + "_" + Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
                    .base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
                binds.append(ByteBuffer(bytes: Array(SHA256.hash(data: Array(token.utf8)))))
                binds.append(Timestamp(Date()).microsecondsSince1970)
                try await run(connection, "INSERT INTO access_tokens (role, sha256, created_at) VALUES ($1, $2, $3)", binds)
                return token
            }
        }
    }

    /// The role `token` grants, if any.
    public func role(ofToken token: String) async throws -> TokenRole? {
        try await withConnection { connection in
            var binds = PostgresBindings()
            binds.append(ByteBuffer(bytes: Array(SHA256.hash(data: Array(token.utf8)))))
            return try await run(connection, "SELECT role FROM access_tokens WHERE sha256 = $1", binds).first
                .flatMap { TokenRole(rawValue: try $0.decode(String.self)) }
        }
    }

    /// The newest head the store holds of each device (of one, given its key), with
    /// the cosignatures stored for it.
    public func latestHeads(publicKey: [UInt8]? = nil) async throws -> [CosignedHead] {
        try await withConnection { connection in
            var binds = PostgresBindings()
            var filter = ""
            if let publicKey {
                binds.append(ByteBuffer(bytes: publicKey))
                filter = "WHERE t.public_key = $1"
            }
            let heads = try await run(connection, """
                SELECT t.id, t.device, t.public_key, h.size, h.root, h.signed_at, h.flags, h.signature
                FROM trees t JOIN LATERAL (SELECT * FROM tree_heads WHERE tree_id = t.id ORDER BY size DESC LIMIT 1) h ON true
                \(filter) ORDER BY t.device, t.public_key
                """, binds)
            var out: [CosignedHead] = []
            for row in heads {
                let (tree, device, key, size, root, signedAt, flags, signature) =
                    try row.decode((Int64, String, ByteBuffer, Int64, ByteBuffer, Int64, Int64, ByteBuffer).self)
                let head = TreeHead(device: device, publicKey: Array(key.readableBytesView), size: size, root: Array(root.readableBytesView),
                                    signedAt: Timestamp(microsecondsSince1970: signedAt), isTestKey: flags == 1,
                                    signature: Array(signature.readableBytesView))
                var lookup = PostgresBindings()
                lookup.append(tree)
                lookup.append(size)
                var cosignatures: [Cosignature] = []
                for cosigned in try await run(connection, """
                    SELECT witness, witness_key, cosigned_at, signature FROM cosignatures WHERE tree_id = $1 AND size = $2 ORDER BY witness
                    """, lookup) {
                    let (witness, witnessKey, at, signature) = try cosigned.decode((String, ByteBuffer, Int64, ByteBuffer).self)
                    cosignatures.append(Cosignature(witness: witness, witnessKey: Array(witnessKey.readableBytesView), cosignedAt: UInt64(max(0, at)),
                                                    signature: Array(signature.readableBytesView)))
                }
                out.append(CosignedHead(head: head, cosignatures: cosignatures))
            }
            return out
        }
    }
}
