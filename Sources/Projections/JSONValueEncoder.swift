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
        let root = Slot()
        try encode(value, into: root, at: [])
        return root.resolved
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

    final class ObjectNode { var entries: [String: Slot] = [:] }
    final class ArrayNode { var items: [Slot] = [] }

    static func encode<T: Encodable>(_ value: T, into slot: Slot, at path: [any CodingKey]) throws {
        switch value {
        case let data as Data: slot.content = .value(.string(data.base64EncodedString()))
        case let url as URL: slot.content = .value(.string(url.absoluteString))
        case let string as String: slot.content = .value(.string(string))
        case let flag as Bool: slot.content = .value(.bool(flag))
        case let number as Int: slot.content = .value(.integer(Int64(number)))
        case let number as Int64: slot.content = .value(.integer(number))
        case let number as Double: slot.content = .value(try Self.number(number, at: path))
        default: try value.encode(to: Encoder(slot: slot, codingPath: path))
        }
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
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            let node: ObjectNode
            if case .object(let existing)? = slot.content { node = existing } else {
                node = ObjectNode()
                slot.content = .object(node)
            }
            return KeyedEncodingContainer(Keyed<Key>(node: node, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            let node: ArrayNode
            if case .array(let existing)? = slot.content { node = existing } else {
                node = ArrayNode()
                slot.content = .array(node)
            }
            return Unkeyed(node: node, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(slot: slot, codingPath: codingPath) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: ObjectNode
        let codingPath: [any CodingKey]

        private func slot(_ key: Key) -> Slot {
            let slot = Slot()
            node.entries[key.stringValue] = slot
            return slot
        }

        mutating func encodeNil(forKey key: Key) throws { slot(key).content = .value(.null) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try JSONValueEncoder.encode(value, into: slot(key), at: codingPath + [key])
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            Encoder(slot: slot(key), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Encoder(slot: slot(key), codingPath: codingPath + [key]).unkeyedContainer()
        }
        mutating func superEncoder() -> any Swift.Encoder {
            let slot = Slot()
            node.entries["super"] = slot
            return Encoder(slot: slot, codingPath: codingPath)
        }
        mutating func superEncoder(forKey key: Key) -> any Swift.Encoder { Encoder(slot: slot(key), codingPath: codingPath + [key]) }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let node: ArrayNode
        let codingPath: [any CodingKey]
        var count: Int { node.items.count }

        private func next() -> Slot {
            let slot = Slot()
            node.items.append(slot)
            return slot
        }

        mutating func encodeNil() throws { next().content = .value(.null) }
        mutating func encode<T: Encodable>(_ value: T) throws { try JSONValueEncoder.encode(value, into: next(), at: codingPath) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            Encoder(slot: next(), codingPath: codingPath).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Encoder(slot: next(), codingPath: codingPath).unkeyedContainer() }
        mutating func superEncoder() -> any Swift.Encoder { Encoder(slot: next(), codingPath: codingPath) }
    }

    struct Single: SingleValueEncodingContainer {
        let slot: Slot
        let codingPath: [any CodingKey]

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
        mutating func encode<T: Encodable>(_ value: T) throws { try JSONValueEncoder.encode(value, into: slot, at: codingPath) }
    }
}
