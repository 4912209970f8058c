import Foundation

/// An id an event names, kept in the catalog so that readers find the recordings that
/// name it without scanning the log. The store gives kinds no meaning; its users do
/// (gamelog: a conversation, a game).
public struct EventTag: Hashable, Sendable {
    /// What kind of id: a number the store's users agree on, at least 1.
    public struct Kind: RawRepresentable, Hashable, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
    }
    public var kind: Kind
    public var id: UUID

    public init(kind: Kind, id: UUID) {
        self.kind = kind
        self.id = id
    }

    /// Hashes the kind and the id, the id as two words (``UUIDKey``): an append looks
    /// each event's tags up in its catalog rows, and a `UUID` hashes byte by byte.
    public func hash(into hasher: inout Hasher) {
        let key = UUIDKey(id)
        hasher.combine(kind.rawValue)
        hasher.combine(key.high)
        hasher.combine(key.low)
    }
}

/// One row of the catalog: a recording (stream) names an id, first at `position`.
public struct CatalogEntry: Hashable, Sendable {
    public var tag: EventTag
    public var stream: UUID
    public var position: Int64

    package init(tag: EventTag, stream: UUID, position: Int64) {
        self.tag = tag
        self.stream = stream
        self.position = position
    }
}
