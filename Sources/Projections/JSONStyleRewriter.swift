/// ``JSONStyle`` for canonical payloads as a single pass over their bytes, for `log
/// --json` on long logs: decoding every payload into Foundation objects and encoding
/// it again cost ten times the plain listing. It reads the canonical JSON gamelog
/// stores (docs/FORMAT.md) and returns nil for anything else, so callers fall back to
/// ``JSONStyle/normalize(json:)``, the reference; tests hold the two equal.
public enum JSONStyleRewriter {
    public static func rewrite(_ json: [UInt8]) -> [UInt8]? {
        var reader = Reader(bytes: json)
        var out: [UInt8] = []
        out.reserveCapacity(json.count)
        guard reader.value(into: &out, key: nil), reader.index == json.count else { return nil }
        return out
    }

    /// Whether the bytes spell a UUID in the 36-character form (either case).
    static func isUUID(_ raw: [UInt8]) -> Bool {
        guard raw.count == 36 else { return false }
        for (i, b) in raw.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 { guard b == UInt8(ascii: "-") else { return false } }
            else { guard (48...57).contains(b) || (65...70).contains(b) || (97...102).contains(b) else { return false } }
        }
        return true
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        mutating func value(into out: inout [UInt8], key: [UInt8]?) -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(into: &out, key: key)
            case UInt8(ascii: "["):
                index += 1
                out.append(UInt8(ascii: "["))
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; out.append(UInt8(ascii: "]")); return true }
                while true {
                    guard value(into: &out, key: key), index < bytes.count else { return false }
                    let byte = bytes[index]
                    index += 1
                    out.append(byte)
                    if byte == UInt8(ascii: "]") { return true }
                    guard byte == UInt8(ascii: ",") else { return false }
                }
            case UInt8(ascii: "\""):
                guard let raw = string() else { return false }
                out.append(UInt8(ascii: "\""))
                out += Self.isUUID(raw) ? Self.lowercased(raw) : raw.contains(UInt8(ascii: "$")) ? Self.mentionsLowercased(raw) : raw
                out.append(UInt8(ascii: "\""))
                return true
            default:
                // A number or a literal: copied, but a style number reads as its name.
                let start = index
                while index < bytes.count, !Self.delimiters.contains(bytes[index]) { index += 1 }
                guard index > start else { return false }
                let token = Array(bytes[start..<index])
                if key == Array("style".utf8), token.count == 1, let digit = token.first, (48...50).contains(digit) {
                    out += Array("\"\(["compact", "expanded", "transcript"][Int(digit - 48)])\"".utf8)
                } else {
                    out += token
                }
                return true
            }
        }

        /// An object's members, renamed and sorted as ``JSONStyle`` does; `{"_0":x}` is x.
        mutating func object(into out: inout [UInt8], key outerKey: [UInt8]?) -> Bool {
            index += 1
            var members: [(key: [UInt8], originalKey: [UInt8], value: [UInt8])] = []
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                out += Array("{}".utf8)
                return true
            }
            while true {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string(),
                      index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
                var value: [UInt8] = []
                let isWrapper = key == Array("_0".utf8)
                guard self.value(into: &value, key: isWrapper ? outerKey : key) else { return false }
                members.append((key, key, value))
                guard index < bytes.count else { return false }
                let byte = bytes[index]
                index += 1
                if byte == UInt8(ascii: "}") { break }
                guard byte == UInt8(ascii: ",") else { return false }
            }
            if members.count == 1, members[0].originalKey == Array("_0".utf8) {
                out += members[0].value
                return true
            }
            for i in members.indices {
                if members[i].key == Array("_0".utf8) { members[i].key = Array("value".utf8) }
                else if Self.isUUID(members[i].key) { members[i].key = Self.lowercased(members[i].key) }
            }
            members.sort { $0.key.lexicographicallyPrecedes($1.key) }
            out.append(UInt8(ascii: "{"))
            for (n, member) in members.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "\""))
                out += member.key
                out += Array("\":".utf8)
                out += member.value
            }
            out.append(UInt8(ascii: "}"))
            return true
        }

        /// A string's raw bytes between its quotes (escapes kept as written).
        mutating func string() -> [UInt8]? {
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return Array(bytes[start..<index])
        }

        static let delimiters: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")]

        static func isUUID(_ raw: [UInt8]) -> Bool { JSONStyleRewriter.isUUID(raw) }

        static func lowercased(_ raw: [UInt8]) -> [UInt8] { raw.map { (65...90).contains($0) ? $0 + 32 : $0 } }

        static func mentionsLowercased(_ raw: [UInt8]) -> [UInt8] {
            var out = raw
            var i = 0
            while i < out.count {
                if out[i] == UInt8(ascii: "$"), i + 37 <= out.count, isUUID(Array(out[(i + 1)...(i + 36)])) {
                    for j in (i + 1)...(i + 36) where (65...90).contains(out[j]) { out[j] += 32 }
                    i += 37
                } else {
                    i += 1
                }
            }
            return out
        }
    }
}
