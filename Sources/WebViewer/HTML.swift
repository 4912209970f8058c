/// HTML text in which anything interpolated is escaped unless it is HTML already:
/// every page is built from these, so text from a log (a device name, a caption, a
/// URL) can only ever appear as text. `HTML.trusted` is for the viewer's own constants.
/// Public so that the tools that measure it (`gamelog-templates`) measure this very type.
public struct HTML: ExpressibleByStringInterpolation, CustomStringConvertible, Sendable {
    public private(set) var text: String

    public init(stringLiteral value: String) { text = value }

    public init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }

    /// Markup written by the viewer itself, never by a log.
    public static func trusted(_ markup: String) -> HTML { HTML(stringLiteral: markup) }

    public var description: String { text }

    public static func + (a: HTML, b: HTML) -> HTML { .trusted(a.text + b.text) }
    public static func += (a: inout HTML, b: HTML) { a.text += b.text }

    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        public init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + interpolationCount * 16) }

        public mutating func appendLiteral(_ literal: String) { text += literal }
        /// Text: escaped.
        public mutating func appendInterpolation(_ value: some StringProtocol) { text += HTML.escape(String(value)) }
        /// Numbers and other values: their description, escaped.
        public mutating func appendInterpolation(_ value: some CustomStringConvertible) { text += HTML.escape(value.description) }
        /// HTML: as it is.
        public mutating func appendInterpolation(_ html: HTML) { text += html.text }
        public mutating func appendInterpolation(_ list: [HTML]) { for item in list { text += item.text } }
    }

    /// `&`, `<`, `>`, `"` and `'` as character references: safe in text and in quoted attributes.
    /// Works on UTF-8 bytes: the five are ASCII, never part of a longer scalar, and walking
    /// Characters (grapheme breaking) was a tenth of a busy viewer's time.
    public static func escape(_ text: String) -> String {
        func special(_ byte: UInt8) -> Bool { byte == 0x26 || byte == 0x3C || byte == 0x3E || byte == 0x22 || byte == 0x27 }
        guard text.utf8.contains(where: special) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 32)
        for byte in text.utf8 {
            switch byte {
            case 0x26: out.append(contentsOf: "&amp;".utf8)
            case 0x3C: out.append(contentsOf: "&lt;".utf8)
            case 0x3E: out.append(contentsOf: "&gt;".utf8)
            case 0x22: out.append(contentsOf: "&quot;".utf8)
            case 0x27: out.append(contentsOf: "&#39;".utf8)
            default: out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Array where Element == HTML {
    func joined(separator: HTML = "") -> HTML {
        var out: HTML = ""
        for (index, item) in enumerated() {
            if index > 0 { out += separator }
            out += item
        }
        return out
    }
}
