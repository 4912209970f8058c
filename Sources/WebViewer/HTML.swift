/// HTML text in which anything interpolated is escaped unless it is HTML already:
/// every page is built from these, so text from a log (a device name, a caption, a
/// URL) can only ever appear as text. `HTML.trusted` is for the viewer's own constants.
struct HTML: ExpressibleByStringInterpolation, CustomStringConvertible, Sendable {
    private(set) var text: String

    init(stringLiteral value: String) { text = value }

    init(stringInterpolation: StringInterpolation) { text = stringInterpolation.text }

    /// Markup written by the viewer itself, never by a log.
    static func trusted(_ markup: String) -> HTML { HTML(stringLiteral: markup) }

    var description: String { text }

    static func + (a: HTML, b: HTML) -> HTML { .trusted(a.text + b.text) }
    static func += (a: inout HTML, b: HTML) { a.text += b.text }

    struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + interpolationCount * 16) }

        mutating func appendLiteral(_ literal: String) { text += literal }
        /// Text: escaped.
        mutating func appendInterpolation(_ value: some StringProtocol) { text += HTML.escape(String(value)) }
        /// Numbers and other values: their description, escaped.
        mutating func appendInterpolation(_ value: some CustomStringConvertible) { text += HTML.escape(value.description) }
        /// HTML: as it is.
        mutating func appendInterpolation(_ html: HTML) { text += html.text }
        mutating func appendInterpolation(_ list: [HTML]) { for item in list { text += item.text } }
    }

    /// `&`, `<`, `>`, `"` and `'` as character references: safe in text and in quoted attributes.
    static func escape(_ text: String) -> String {
        guard text.contains(where: { "&<>\"'".contains($0) }) else { return text }
        var out = ""
        out.reserveCapacity(text.count + 16)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
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
