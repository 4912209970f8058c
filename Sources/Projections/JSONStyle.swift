import Foundation

/// The one JSON style of everything gamelog prints for scripts (`--json`, the web
/// viewer's API): keys as the model names them, sorted; identifiers (UUIDs) in lower
/// case, as values and as keys; enumeration cases by name, never Swift's `_0`
/// wrappers; presentation styles by name (`compact`, `expanded`, `transcript`);
/// booleans as `true`/`false`; times as ISO 8601 text or microseconds since 1970 in
/// fields that say so. Stored payloads keep their own canonical form (docs/FORMAT.md).
public enum JSONStyle {
    /// A value rewritten to gamelog's style.
    public static func normalize(_ value: JSONValue, key: String? = nil) -> JSONValue {
        switch value {
        case .object(let dictionary):
            // `{"_0": x}` is how Swift spells a case's unlabeled value: the value alone reads better.
            if dictionary.count == 1, let inner = dictionary["_0"] { return normalize(inner, key: key) }
            var out: [String: JSONValue] = [:]
            out.reserveCapacity(dictionary.count)
            for (k, v) in dictionary {
                // Beside labeled values, an unlabeled one is the case's `value`.
                let name = k == "_0" ? "value" : isUUID(k) ? k.lowercased() : k
                out[name] = normalize(v, key: k)
            }
            return .object(out)
        case .array(let array):
            return .array(array.map { normalize($0, key: key) })
        case .string(let string):
            if isUUID(string) { return .string(string.lowercased()) }
            // Bytes, not `contains("$")`: with Foundation imported that is a locale-aware
            // search, which was two fifths of normalizing a game page's state.
            return .string(string.utf8.contains(UInt8(ascii: "$")) ? lowercasingMentions(string) : string)
        case .integer(let number) where key == "style":
            let names = ["compact", "expanded", "transcript"]
            return names.indices.contains(Int(number)) ? .string(names[Int(number)]) : value
        default:
            return value
        }
    }

    /// `normalize` over encoded JSON text.
    public static func normalize(json data: Data) throws(JSONValue.ParseError) -> JSONValue {
        normalize(try JSONValue(parsing: data))
    }

    /// Canonical text: keys sorted by their UTF-8 bytes (the same on every platform;
    /// Foundation's own sorting compares digits as numbers), no whitespace, `/`
    /// unescaped, strings escaped as `JSONEncoder` escapes them.
    public static func text(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        write(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The same text indented two spaces a level, for a person to read (the viewer's payload panel).
    public static func indentedText(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        write(value, into: &out, indent: 0)
        return String(decoding: out, as: UTF8.self)
    }

    // Written as UTF-8 bytes: appending to a `String` scalar by scalar was half of an API
    // page's time (a page of 100 games' summaries).

    /// - Parameter indent: nil for canonical text; else the current line's indentation, in spaces.
    private static func write(_ value: JSONValue, into out: inout [UInt8], indent: Int? = nil) {
        let inner = indent.map { $0 + 2 }
        func newline(_ level: Int?) {
            guard let level else { return }
            out.append(UInt8(ascii: "\n"))
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level))
        }
        switch value {
        case .object(let dictionary):
            out.append(UInt8(ascii: "{"))
            for (n, key) in dictionary.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                newline(inner)
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(UInt8(ascii: " ")) }
                write(dictionary[key]!, into: &out, indent: inner)
            }
            if !dictionary.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "}"))
        case .array(let array):
            out.append(UInt8(ascii: "["))
            for (n, item) in array.enumerated() {
                if n > 0 { out.append(UInt8(ascii: ",")) }
                newline(inner)
                write(item, into: &out, indent: inner)
            }
            if !array.isEmpty { newline(indent) }
            out.append(UInt8(ascii: "]"))
        case .string(let string):
            writeString(string, into: &out)
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let flag):
            out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let number):
            out.append(contentsOf: String(number).utf8)
        case .double(let number):
            // As JSONEncoder writes a Double (the only kind our documents hold).
            out.append(contentsOf: (try? JSONEncoder().encode(number)).map(Array.init) ?? Array("null".utf8))
        }
    }

    private static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Bytes of 0x80 and above are parts of scalars past ASCII, written as they are.
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "\n"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\r"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case UInt8(ascii: "\t"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// An `Encodable` value in gamelog's style, as text.
    public static func text(encoding value: some Encodable) throws -> String {
        text(normalize(try JSONValue(encoding: value)))
    }

    /// `$<UUID>` mentions in captions, in lower case like every other identifier.
    static func lowercasingMentions(_ text: String) -> String {
        var out = "", rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            out += rest[...dollar]
            let after = rest.index(after: dollar)
            let candidate = rest[after...].prefix(36)
            if isUUID(String(candidate)) {
                out += candidate.lowercased()
                rest = rest[candidate.endIndex...]
            } else {
                rest = rest[after...]
            }
        }
        return out + rest
    }

    static func isUUID(_ text: String) -> Bool {
        // Every key and string is asked: most are not 36 bytes, and need no copy to say so.
        text.utf8.count == 36 && JSONStyleRewriter.isUUID(Array(text.utf8))
    }
}
