import Foundation

/// Messages resolves `$<uuid>` in captions to the person's name when it shows them.
public enum ParticipantNames {
    /// `text` with every `$<uuid>` that `names` knows replaced by the name. Unknown
    /// identifiers stay as they are, as Messages leaves them.
    public static func resolve(_ text: String, names: [ParticipantID: String]) -> String {
        var out = ""
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            out += rest[..<dollar]
            let candidate = rest[rest.index(after: dollar)...].prefix(36)
            if candidate.count == 36, let uuid = UUID(hyphenated: candidate),
               let name = names[ParticipantID(uuid)] {
                out += name
                rest = rest[candidate.endIndex...]
            } else {
                out += "$"
                rest = rest[rest.index(after: dollar)...]
            }
        }
        return out + rest
    }

    /// The participant identifiers that `text` mentions as `$<uuid>`.
    public static func mentions(in text: String) -> [ParticipantID] {
        var found: [ParticipantID] = []
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            let candidate = rest[rest.index(after: dollar)...].prefix(36)
            if candidate.count == 36, let uuid = UUID(hyphenated: candidate) {
                found.append(ParticipantID(uuid))
                rest = rest[candidate.endIndex...]
            } else {
                rest = rest[rest.index(after: dollar)...]
            }
        }
        return found
    }

    /// `text` with every mentioned identifier replaced through `map` (used when a
    /// message crosses to a device that knows the same people by other identifiers).
    public static func translate(_ text: String, _ map: [ParticipantID: ParticipantID]) -> String {
        var out = text
        for id in mentions(in: text) {
            if let other = map[id] { out = out.replacingOccurrences(of: "$\(id.uuid.uuidString)", with: "$\(other.uuid.uuidString)") }
        }
        return out
    }
}
