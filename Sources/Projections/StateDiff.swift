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

    public init(path: String, before: String?, after: String?, beforeJSON: String? = nil, afterJSON: String? = nil) {
        self.path = path
        self.before = before
        self.after = after
        self.beforeJSON = beforeJSON
        self.afterJSON = afterJSON
    }

    /// The change as a JSON object in gamelog's style: `{path, before, after}` with JSON values.
    public var jsonObject: [String: Any] {
        func value(_ text: String?) -> Any {
            text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) } ?? NSNull()
        }
        return ["path": path, "before": value(beforeJSON), "after": value(afterJSON)]
    }

    /// Whether the change is the game's bookkeeping (where its events start and end), which
    /// every step of a game moves: left out of the diffs people read, kept in `--json`.
    public var isBookkeeping: Bool {
        ["lastPosition", "lastStep", "firstPosition", "firstStep", "startedAt", "endedAt"].contains { path.hasSuffix("." + $0) }
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
    public func presentation() -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let object = (try? encoder.encode(self)).flatMap { try? JSONStyle.normalize(json: $0) } as? [String: Any] ?? [:]
        return object.filter { ["devices", "games", "kind", "step", "position"].contains($0.key) }
    }

    /// What differs between two states, path by path, in a stable order.
    public static func diff(_ a: ConversationState, _ b: ConversationState) -> [StateChange] {
        var changes: [StateChange] = []
        var left = a.presentation(), right = b.presentation()
        left["step"] = nil; right["step"] = nil
        left["position"] = nil; right["position"] = nil
        compare(left, right, path: "", into: &changes)
        return changes
    }

    private static func render(_ value: Any) -> String {
        if let string = value as? String { return string }
        // JSONSerialization hands booleans back as NSNumbers of type char; show them
        // as JSON does, not as 0 and 1.
        if let number = value as? NSNumber, String(cString: number.objCType) == "c" {
            return number.boolValue ? "true" : "false"
        }
        if JSONSerialization.isValidJSONObject(value),
           let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]) {
            return String(decoding: data, as: UTF8.self)
        }
        return "\(value)"
    }

    private static func isScalars(_ values: [Any]) -> Bool {
        values.allSatisfy { !($0 is [String: Any]) && !($0 is [Any]) }
    }

    private static func compare(_ a: Any?, _ b: Any?, path: String, into changes: inout [StateChange]) {
        switch (a, b) {
        case (let x as [String: Any], let y as [String: Any]):
            for key in Set(x.keys).union(y.keys).sorted() {
                compare(x[key], y[key], path: path.isEmpty ? key : "\(path).\(key)", into: &changes)
            }
        case (let x as [Any], let y as [Any]) where x.count == y.count || !(isScalars(x) && isScalars(y)):
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
                                           beforeJSON: a.flatMap { try? JSONStyle.text($0) }, afterJSON: b.flatMap { try? JSONStyle.text($0) }))
            }
        }
    }
}
