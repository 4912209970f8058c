import Foundation

/// One difference between two states: a path and the values on each side.
public struct StateChange: Hashable, Codable, Sendable, CustomStringConvertible {
    /// E.g. `devices.B.screen.labels[1]`.
    public var path: String
    /// The values as people read them.
    public var before: String?
    public var after: String?
    /// The same values as JSON text (for `--json`, where `false` is a boolean).
    public var beforeJSON: String?
    public var afterJSON: String?

    /// The change as a JSON object in gamelog's style: `{path, before, after}` with JSON values.
    public var jsonValue: JSONValue {
        func value(_ text: String?) -> JSONValue {
            text.flatMap { try? JSONValue(parsing: Array($0.utf8)) } ?? .null
        }
        return .object(["path": .string(path), "before": value(beforeJSON), "after": value(afterJSON)])
    }

    /// Whether the change is the game's bookkeeping (where its events start and end, how many), which
    /// every step of a game moves: left out of the diffs people read, kept in `--json`.
    public var isBookkeeping: Bool {
        ["lastPosition", "lastStep", "firstPosition", "firstStep", "startedAt", "endedAt", "events"].contains { path.hasSuffix("." + $0) }
    }

    /// The change as people read it: identifiers cut to their first 8 characters, times
    /// in ISO 8601, long values folded.
    public var readable: String {
        func value(_ text: String?) -> String? {
            guard var text else { return nil }
            if path.hasSuffix("At"), let micros = Int64(text) {
                let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
                text = date.formatted(.iso8601)
            }
            text = Self.shorteningIdentifiers(text)
            return text.count > 120 ? String(text.prefix(110)) + "… (\(text.count - 110) more characters)" : text
        }
        return StateChange(path: Self.shorteningIdentifiers(path), before: value(before), after: value(after)).description
    }

    /// `text` with every identifier (8-4-4-4-12 hex digits) cut to its first 8 digits,
    /// in lower case. A regular expression did this and was compiled again at each call: an
    /// eighth of the viewer's time on a game page. ASCII text (all of a state's but what a
    /// log's strings bring) is scanned by bytes, which finds the same leftmost matches;
    /// anything else goes through the expression, for its grapheme-cluster semantics.
    static func shorteningIdentifiers(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.count >= 36, utf8.contains(UInt8(ascii: "-")) else { return text }
        guard utf8.allSatisfy({ $0 < 0x80 }) else {
            return text.replacing(/([0-9A-Fa-f]{8})-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/) { String($0.output.1).lowercased() }
        }
        let bytes = Array(utf8)
        func isHex(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
            default: false
            }
        }
        func identifier(at start: Int) -> Bool {
            guard start + 36 <= bytes.count else { return false }
            for offset in 0..<36 {
                let byte = bytes[start + offset]
                guard offset == 8 || offset == 13 || offset == 18 || offset == 23 ? byte == UInt8(ascii: "-") : isHex(byte) else { return false }
            }
            return true
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        var found = false
        while index < bytes.count {
            if identifier(at: index) {
                for byte in bytes[index..<index + 8] {
                    out.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "F") ? byte + 32 : byte)
                }
                index += 36
                found = true
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return found ? String(decoding: out, as: UTF8.self) : text
    }

    public var description: String {
        switch (before, after) {
        case (nil, let a?): return "+ \(path): \(a)"
        case (let b?, nil): return "- \(path): \(b)"
        case (let b?, let a?): return "~ \(path): \(b) → \(a)"
        case (nil, nil): return "  \(path)"
        }
    }
}

extension ConversationState {
    /// The presentable part of the state as a JSON object in gamelog's style
    /// (``JSONStyle``): devices and games, without the reducer's bookkeeping.
    public func presentation() -> [String: JSONValue] {
        // Only the presentable fields are encoded: the bookkeeping (every message's
        // session, every message seen, the activations) was encoded to be cut away.
        // The keys are the state's own, and each value is normalized as it is inside the
        // whole state (`normalize` reads a value and its key, never its parents).
        guard case .object(let object)? = try? JSONStyle.normalize(JSONValue(encoding: Presented(self))) else { return [:] }
        return object
    }

    /// The fields ``presentation(of:)`` keeps, under the keys `ConversationState` encodes them with.
    private struct Presented: Encodable {
        let state: ConversationState
        init(_ state: ConversationState) { self.state = state }

        enum CodingKeys: String, CodingKey { case devices, games, kind, step, position }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(state.devices, forKey: .devices)
            try container.encode(state.games, forKey: .games)
            try container.encode(state.kind, forKey: .kind)
            try container.encode(state.step, forKey: .step)
            try container.encode(state.position, forKey: .position)
        }
    }

    /// The whole state as a JSON value in gamelog's style (``JSONStyle``), bookkeeping
    /// and all: what the viewer's state tree shows, and what ``presentation(of:)`` cuts
    /// the presentable part from (encoding a state is most of a page's work: do it once).
    public func styledJSON() throws -> JSONValue {
        JSONStyle.normalize(try JSONValue(encoding: self))
    }

    /// The presentable part (``presentation()``) of a state's ``styledJSON()``.
    public static func presentation(of styled: JSONValue?) -> [String: JSONValue] {
        guard case .object(let object)? = styled else { return [:] }
        return object.filter { ["devices", "games", "kind", "step", "position"].contains($0.key) }
    }

    /// What differs between two states, path by path, in a stable order.
    public static func diff(_ a: ConversationState, _ b: ConversationState) -> [StateChange] {
        diff(presentations: a.presentation(), b.presentation())
    }

    /// What differs between two states' ``presentation()``s.
    public static func diff(presentations a: [String: JSONValue], _ b: [String: JSONValue]) -> [StateChange] {
        var changes: [StateChange] = []
        var left = a, right = b
        left["step"] = nil; right["step"] = nil
        left["position"] = nil; right["position"] = nil
        compare(.object(left), .object(right), path: "", into: &changes)
        return changes
    }

    private static func render(_ value: JSONValue) -> String {
        if case .string(let string) = value { return string }
        return JSONStyle.text(value)
    }

    private static func compare(_ a: JSONValue?, _ b: JSONValue?, path: String, into changes: inout [StateChange]) {
        switch (a, b) {
        case (.object(let x)?, .object(let y)?):
            for key in Set(x.keys).union(y.keys).sorted() {
                compare(x[key], y[key], path: path.isEmpty ? key : "\(path).\(key)", into: &changes)
            }
        case (.array(let x)?, .array(let y)?) where x.count == y.count || x.contains(where: \.isContainer) || y.contains(where: \.isContainer):
            // Lists of records (transcript bubbles) change item by item: a new bubble
            // reads as one added item, not as the whole list before and after. Lists
            // of scalars (board cells, labels) of another length read best whole.
            for index in 0..<max(x.count, y.count) {
                compare(index < x.count ? x[index] : nil, index < y.count ? y[index] : nil,
                        path: "\(path)[\(index)]", into: &changes)
            }
        case (nil, nil):
            break
        default:
            let before = a.map(render), after = b.map(render)
            if before != after {
                changes.append(StateChange(path: path, before: before, after: after,
                                           beforeJSON: a.map { JSONStyle.text($0) }, afterJSON: b.map { JSONStyle.text($0) }))
            }
        }
    }
}
