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
        func shorten(_ text: String) -> String {
            text.replacing(/([0-9A-Fa-f]{8})-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}/) { String($0.output.1).lowercased() }
        }
        func value(_ text: String?) -> String? {
            guard var text else { return nil }
            if path.hasSuffix("At"), let micros = Int64(text) {
                let date = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
                text = date.formatted(.iso8601)
            }
            text = shorten(text)
            return text.count > 120 ? String(text.prefix(110)) + "… (\(text.count - 110) more characters)" : text
        }
        return StateChange(path: shorten(path), before: value(before), after: value(after)).description
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
        guard case .object(let object)? = (try? JSONValue(encoding: self)).map({ JSONStyle.normalize($0) }) else { return [:] }
        return object.filter { ["devices", "games", "kind", "step", "position"].contains($0.key) }
    }

    /// What differs between two states, path by path, in a stable order.
    public static func diff(_ a: ConversationState, _ b: ConversationState) -> [StateChange] {
        var changes: [StateChange] = []
        var left = a.presentation(), right = b.presentation()
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
