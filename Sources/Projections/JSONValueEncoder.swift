import Foundation

/// Encodes an `Encodable` value straight into a ``JSONValue``: the value `JSONEncoder`
/// (sorted keys, default strategies) and the reader would make of it together, without
/// the text between them. The viewer's diffs, `state --json` and the API encode whole
/// conversation states on every request; writing them out and reading them back was
/// the larger part of that (session 13's profile).
///
/// Matches `JSONEncoder` where its defaults differ from a type's own `encode(to:)`:
/// `Data` as Base64 text, `URL` as its absolute string, non-finite numbers refused. A
/// number the reader would read as an integer (a whole one that fits in 64 bits) is one.
enum JSONValueEncoder {
    static func encode(_ value: some Encodable) throws -> JSONValue {
        if let scalar = try scalar(value, at: { [] }) { return scalar }
        let root = Slot()
        try value.encode(to: Encoder(slot: root, path: Path(parent: nil, key: nil)))
        return root.resolved
    }

    /// Where a container is, kept as a chain to its parent and made into `[CodingKey]`
    /// only when asked (an error, or a type that reads its coding path): a state encodes
    /// thousands of values, and an array of the whole path each was most of it.
    final class Path {
        let parent: Path?
        let key: (any CodingKey)?
        init(parent: Path?, key: (any CodingKey)?) {
            self.parent = parent
            self.key = key
        }
        func appending(_ key: any CodingKey) -> Path { Path(parent: self, key: key) }
        var keys: [any CodingKey] {
            var keys: [any CodingKey] = []
            var node: Path? = self
            while let current = node {
                if let key = current.key { keys.append(key) }
                node = current.parent
            }
            return keys.reversed()
        }
    }

    /// Where one value goes: filled by a container or a single value.
    final class Slot {
        enum Content {
            case value(JSONValue)
            case object(ObjectNode)
            case array(ArrayNode)
        }
        var content: Content?

        var resolved: JSONValue {
            switch content {
            case .value(let value)?: return value
            case .object(let node)?: return .object(node.entries.mapValues(\.resolved))
            case .array(let node)?: return .array(node.items.map(\.resolved))
            // A type that asked for no container: JSONEncoder writes an empty object.
            case nil: return .object([:])
            }
        }
    }

    /// A container's member: a value known at once (no slot made for it), or a slot a
    /// nested container fills.
    enum Entry {
        case value(JSONValue)
        case slot(Slot)

        var resolved: JSONValue {
            switch self {
            case .value(let value): value
            case .slot(let slot): slot.resolved
            }
        }
    }

    final class ObjectNode { var entries: [String: Entry] = [:] }
    final class ArrayNode { var items: [Entry] = [] }

    /// The value of the types `JSONEncoder` writes its own way, and of the scalars, told
    /// apart by their type (a dynamic cast for each of them, at every value, cost more than
    /// the encoding); nil for anything else.
    @inline(__always)
    static func scalar<T: Encodable>(_ value: T, at path: () -> [any CodingKey]) throws -> JSONValue? {
        if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        if T.self == Int.self { return .integer(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Int64.self { return .integer(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Double.self { return try number(unsafeBitCast(value, to: Double.self), at: path()) }
        if T.self == Data.self { return .string(unsafeBitCast(value, to: Data.self).base64EncodedString()) }
        if T.self == URL.self { return .string(unsafeBitCast(value, to: URL.self).absoluteString) }
        return nil
    }

    /// `value` as the member `entry` makes of it.
    static func entry<T: Encodable>(_ value: T, at path: @autoclosure () -> Path) throws -> Entry {
        if let scalar = try scalar(value, at: { path().keys }) { return .value(scalar) }
        let slot = Slot()
        try value.encode(to: Encoder(slot: slot, path: path()))
        return .slot(slot)
    }

    static func number(_ value: Double, at path: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "\(value) is not a JSON number"))
        }
        return JSONValue(number: value)
    }

    static func integer<T: BinaryInteger>(_ value: T) -> JSONValue {
        if let exact = Int64(exactly: value) { return .integer(exact) }
        return .double(Double(value))
    }

    struct Encoder: Swift.Encoder {
        let slot: Slot
        let path: Path
        var codingPath: [any CodingKey] { path.keys }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            let node: ObjectNode
            if case .object(let existing)? = slot.content { node = existing } else {
                node = ObjectNode()
                slot.content = .object(node)
            }
            return KeyedEncodingContainer(Keyed<Key>(node: node, path: path))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            let node: ArrayNode
            if case .array(let existing)? = slot.content { node = existing } else {
                node = ArrayNode()
                slot.content = .array(node)
            }
            return Unkeyed(node: node, path: path)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(slot: slot, path: path) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: ObjectNode
        let path: Path
        var codingPath: [any CodingKey] { path.keys }

        /// An encoder for the member `key`, whose slot it fills.
        private func member(_ key: Key) -> Encoder {
            let slot = Slot()
            node.entries[key.stringValue] = .slot(slot)
            return Encoder(slot: slot, path: path.appending(key))
        }

        mutating func encodeNil(forKey key: Key) throws { node.entries[key.stringValue] = .value(.null) }
        mutating func encode(_ value: String, forKey key: Key) throws { node.entries[key.stringValue] = .value(.string(value)) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { node.entries[key.stringValue] = .value(.bool(value)) }
        mutating func encode(_ value: Int, forKey key: Key) throws { node.entries[key.stringValue] = .value(.integer(Int64(value))) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { node.entries[key.stringValue] = .value(.integer(value)) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            node.entries[key.stringValue] = try JSONValueEncoder.entry(value, at: path.appending(key))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            member(key).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            member(key).unkeyedContainer()
        }
        mutating func superEncoder() -> any Swift.Encoder {
            let slot = Slot()
            node.entries["super"] = .slot(slot)
            return Encoder(slot: slot, path: path)
        }
        mutating func superEncoder(forKey key: Key) -> any Swift.Encoder { member(key) }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: ArrayNode
        let path: Path
        var codingPath: [any CodingKey] { path.keys }
        var count: Int { node.items.count }

        /// The next item's place, as `JSONEncoder` names it ("Index 3").
        private var nextPath: Path { path.appending(IndexKey(intValue: node.items.count)) }

        /// An encoder for the next item, whose slot it fills.
        private func next() -> Encoder {
            let encoder = Encoder(slot: Slot(), path: nextPath)
            node.items.append(.slot(encoder.slot))
            return encoder
        }

        mutating func encodeNil() throws { node.items.append(.value(.null)) }
        mutating func encode(_ value: String) throws { node.items.append(.value(.string(value))) }
        mutating func encode<T: Encodable>(_ value: T) throws { node.items.append(try JSONValueEncoder.entry(value, at: nextPath)) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            next().container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { next().unkeyedContainer() }
        mutating func superEncoder() -> any Swift.Encoder { next() }
    }

    struct IndexKey: CodingKey {
        let intValue: Int?
        var stringValue: String { "Index \(intValue ?? 0)" }
        init(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { nil }
    }

    struct Single: SingleValueEncodingContainer {
        let slot: Slot
        let path: Path
        var codingPath: [any CodingKey] { path.keys }

        mutating func encodeNil() throws { slot.content = .value(.null) }
        mutating func encode(_ value: Bool) throws { slot.content = .value(.bool(value)) }
        mutating func encode(_ value: String) throws { slot.content = .value(.string(value)) }
        mutating func encode(_ value: Double) throws { slot.content = .value(try JSONValueEncoder.number(value, at: codingPath)) }
        // JSONEncoder writes a Float as its own shortest text, which reads back as that Double.
        mutating func encode(_ value: Float) throws {
            slot.content = .value(try JSONValueEncoder.number(Double(String(describing: value)) ?? Double(value), at: codingPath))
        }
        mutating func encode(_ value: Int) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode(_ value: Int8) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode(_ value: Int16) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode(_ value: Int32) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode(_ value: Int64) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt8) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt16) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt32) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode(_ value: UInt64) throws { slot.content = .value(JSONValueEncoder.integer(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            if let scalar = try JSONValueEncoder.scalar(value, at: { codingPath }) {
                slot.content = .value(scalar)
            } else {
                try value.encode(to: Encoder(slot: slot, path: path))
            }
        }
    }
}
