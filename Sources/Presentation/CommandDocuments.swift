import EventStore
import Foundation
import Projections

/// The JSON documents the commands print for scripts (`--json`) and read back (`verify
/// --trust`, `--heads`, `keys enroll --public-key`), one typed value each, so a field
/// is spelled in one place and printed in gamelog's one style (``JSONStyle``).
public enum CommandDocuments {
    /// A document as gamelog prints it: keys sorted, identifiers in lower case, `/` unescaped.
    public static func text(_ document: some Encodable) throws -> String {
        try JSONStyle.text(encoding: document)
    }

    /// A device's public signing key (`keys --json`, `keys new --json`; `verify --trust` reads a list of them).
    public struct Key: Codable, Sendable, Equatable {
        public var device: String
        public var publicKey: String
        public var verifierKey: String
        /// What the key signed in the log (absent from `keys new`).
        public var checkpoints: Int?
        public var heads: Int?
        public var treeSize: Int?
        public var testKey: Bool?

        /// A key as a log shows it: what it signed there (`keys --json`, `verify --json`).
        public init(_ signer: Signer) {
            device = signer.device
            publicKey = Hex.string(signer.publicKey)
            verifierKey = TreeHead.verifierKey(device: signer.device, publicKey: signer.publicKey)
            checkpoints = signer.checkpoints
            heads = signer.heads
            treeSize = Int(signer.treeSize)
            testKey = signer.isTestKey
        }

        /// A key just made (`keys new --json`): it has signed nothing yet.
        public init(new key: DeviceKey) {
            device = key.device
            publicKey = Hex.string(key.publicKey)
            verifierKey = key.verifierKey
        }
    }

    /// A device's enrollment at a collector (`keys enroll`, `POST /v1/devices`).
    public struct Enrollment: Codable, Sendable {
        public var device: String
        public var publicKey: String

        /// The enrollment of `publicKey` (32 bytes) as `device`.
        public init(device: String, publicKey: [UInt8]) {
            self.device = device
            self.publicKey = Hex.string(publicKey)
        }
    }

    /// What a keys file entry needs to be read back (other fields are ignored).
    public struct KeyReference: Decodable, Sendable {
        public var device: String?
        public var publicKey: String?
        /// `keys --json` says a key is a test key: a trust file that keeps the mark refuses it.
        public var testKey: Bool?
    }

    /// A device's latest signed head with the witnesses' cosignatures (`heads --json`).
    public struct Head: Codable, Sendable {
        public var device: String
        public var publicKey: String
        public var size: Int64
        public var root: String
        public var signedAt: Int64
        public var note: String
        public var cosignedNote: String
        public var cosignatures: [Cosignature]

        public struct Cosignature: Codable, Sendable {
            public var witness: String
            public var publicKey: String
            public var line: String
        }

        /// The document of a head and the cosignatures this log or collector holds for it:
        /// one place for `heads --json` and a collector's `GET /v1/heads`, which must agree.
        public init(_ cosigned: CosignedHead) {
            let head = cosigned.head
            device = head.device
            publicKey = Hex.string(head.publicKey)
            size = head.size
            root = Hex.string(head.root)
            signedAt = head.signedAt.microsecondsSince1970
            note = head.note
            cosignedNote = cosigned.note
            cosignatures = cosigned.cosignatures.map {
                Cosignature(witness: $0.witness, publicKey: Hex.string($0.witnessKey), line: $0.line)
            }
        }
    }

    /// What a heads file entry needs to be read back (`verify --heads`).
    public struct HeadReference: Decodable, Sendable {
        public var note: String?
        public var publicKey: String?
        /// The witnesses' cosignatures of the head (`heads --json`, a collector's heads).
        public var cosignatures: [Head.Cosignature]?
    }

    /// A collector's answer: its error text, or a device's accepted tree size.
    public struct CollectorReply: Decodable, Sendable {
        public var error: String?
        public var size: Int?
        /// The accepted head's note with its cosignatures (a device's head, `GET /v1/devices/KEY`).
        public var note: String?
        /// The collector's cosigning key, hex.
        public var witnessKey: String?
    }

    /// One device's push (`push --json`).
    public struct Push: Codable, Sendable {
        public var device: String
        public var publicKey: String
        /// The events the collector held before the push, and after it.
        public var from: Int
        public var to: Int
        public var sent: Int
        /// The newest head the collector cosigned (empty when nothing was sent).
        public var note: String

        /// The push of `owner`'s tree to a collector that holds `accepted` of its
        /// events, before anything is sent.
        public init(owner: TreeOwner, accepted: Int64) {
            device = owner.device
            publicKey = Hex.string(owner.publicKey)
            (from, to, sent, note) = (Int(accepted), Int(accepted), 0, "")
        }

        /// The collector took `sent` more events, now holds `acceptedSize`, and cosigned
        /// its head in `note`.
        public mutating func record(sent events: Int, acceptedSize: Int64, note: String) {
            sent += events
            to = Int(acceptedSize)
            self.note = note
        }
    }

    /// A log's schema, size, dictionaries, head and catalog (`info --json`).
    public struct Info: Codable, Sendable {
        public var database: String
        public var schemaVersion: Int
        public var events: Int64
        public var lastPosition: Int64
        public var streams: Int
        public var headHash: String
        public var bytes: Int
        public var dictionaries: [Dictionary]
        public var catalogComplete: Bool
        public var catalogThrough: Int64
        /// Events kept as rows (written before blocks) and in blocks, and the blocks.
        public var rowEvents: Int64
        public var blockEvents: Int64
        public var blocks: Int64

        public struct Dictionary: Codable, Sendable {
            public var id: Int64
            public var name: String
            public var bytes: Int
        }

        /// What `info` says of a log in another store: its events are rows, in no blocks.
        public init(database: String, schemaVersion: Int, events: Int64, lastPosition: Int64, streams: Int, headHash: [UInt8],
                    bytes: Int, dictionaries: [(id: Int64, name: String, size: Int)], catalogThrough: Int64) {
            self.database = database
            self.schemaVersion = schemaVersion
            (self.events, self.lastPosition, self.streams) = (events, lastPosition, streams)
            self.headHash = Hex.string(headHash)
            self.bytes = bytes
            self.dictionaries = dictionaries.map { Dictionary(id: $0.id, name: $0.name, bytes: $0.size) }
            catalogComplete = catalogThrough == lastPosition
            self.catalogThrough = catalogThrough
            (rowEvents, blockEvents, blocks) = (events, 0, 0)
        }

        /// What `info` says of the log at `store`.
        public init(describing store: EventStore) throws {
            database = store.path
            schemaVersion = try store.schemaVersion()
            (events, lastPosition) = try store.count()
            streams = try store.streams().count
            headHash = Hex.string(try store.headHash())
            bytes = store.fileSize
            dictionaries = try store.dictionaries().map { Dictionary(id: $0.id, name: $0.name, bytes: $0.size) }
            let coverage = try store.catalogCoverage()
            catalogComplete = coverage.map { $0.through == $0.last } ?? false
            catalogThrough = coverage?.through ?? 0
            hasCatalog = coverage != nil
            rowEvents = try store.storedAsRows()
            (blocks, blockEvents) = try store.storedInBlocks()
        }

        /// False for a log from before the catalog (schema 6); not printed.
        public var hasCatalog = true

        enum CodingKeys: String, CodingKey {
            case database, schemaVersion, events, lastPosition, streams, headHash, bytes, dictionaries, catalogComplete,
                 catalogThrough, rowEvents, blockEvents, blocks
        }
    }

    /// What a `simulate --json` run did.
    public struct Simulation: Codable, Sendable {
        public var games = 0
        public var finished = 0
        public var alreadyRecorded = 0
        public var eventsWritten = 0
        public var seconds = 0.0
        public var seed: UInt64
        public var database: String
        /// How the games ended, counted by kind and outcome.
        public var outcomes: [String: Int] = [:]
        public var network: String
        /// With `--coverage`: how often each behaviour of the specifications occurred.
        public var coverage: [String: Int]? = nil

        /// A run about to play with `seed` into `database`: nothing counted yet.
        public init(seed: UInt64, database: String, network: String) {
            (self.seed, self.database, self.network) = (seed, database, network)
        }
    }

    /// A command that failed, for scripts that asked for JSON (`verify --json`).
    public struct Failure: Codable, Sendable {
        public var ok = false
        public var error: String
        public var hint: String

        public init(error: String, hint: String) {
            self.error = error
            self.hint = hint
        }
    }
}
