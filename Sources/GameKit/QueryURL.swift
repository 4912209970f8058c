import Foundation

/// A message URL split the way `URLComponents` splits it, with the checks every
/// game's decoder shares: the documented 5,000-character limit and the schemes the
/// seeds use (none, http or https).
public struct QueryURL: Sendable {
    /// The query items in order, repeated names kept (Battleship's `Ship_Location`).
    public var items: [(name: String, value: String?)]

    /// Messages' documented limit on a message URL, in characters.
    public static let maximumLength = 5_000

    /// Why a URL could not be split into query items.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        case tooLong(Int)
        case badScheme(String)
        case unparsable

        public var description: String {
            switch self {
            case .tooLong(let n): return "the URL has \(n) characters, more than \(QueryURL.maximumLength)"
            case .badScheme(let s): return "the URL's scheme '\(s)' is not http or https (or none)"
            case .unparsable: return "the text is not a URL"
            }
        }
    }

    /// Accepts the seeds' scheme-less URLs, and http(s) ones; refuses other schemes.
    public static func parse(_ url: String) -> Result<QueryURL, Failure> {
        // Every fold reads the URL of every copy of every game message: the games' own
        // URLs take a path that splits them without Foundation.
        if let items = plainItems(url) { return .success(QueryURL(items: items)) }
        if url.count > maximumLength { return .failure(.tooLong(url.count)) }
        guard let components = URLComponents(string: url) else { return .failure(.unparsable) }
        if let scheme = components.scheme?.lowercased(), scheme != "http", scheme != "https" {
            return .failure(.badScheme(scheme))
        }
        return .success(QueryURL(items: (components.queryItems ?? []).map { ($0.name, $0.value) }))
    }

    /// The query items of a URL that `URLComponents` would split the same way with nothing
    /// to decode: a path and a query of letters, digits and `-._~/,`, items `name=value`
    /// joined by `&`. Nil for anything else (a scheme, an authority, a fragment, a percent
    /// escape, an item without exactly one `=` or with an empty name), which goes to
    /// `URLComponents`.
    static func plainItems(_ url: String) -> [(name: String, value: String?)]? {
        var url = url
        return url.withUTF8 { bytes -> [(name: String, value: String?)]? in
            guard !bytes.isEmpty, bytes.count <= maximumLength, bytes[0] != UInt8(ascii: "/") else { return nil }
            var items: [(name: String, value: String?)] = []
            var query: Int?
            var itemStart = 0, equals: Int?
            func endItem(_ end: Int) -> Bool {
                guard let equals, equals > itemStart else { return false }
                items.append((String(decoding: UnsafeBufferPointer(rebasing: bytes[itemStart..<equals]), as: UTF8.self),
                              String(decoding: UnsafeBufferPointer(rebasing: bytes[(equals + 1)..<end]), as: UTF8.self)))
                return true
            }
            for index in bytes.indices {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                     UInt8(ascii: "~"), UInt8(ascii: ","):
                    continue
                case UInt8(ascii: "/"):
                    if query != nil { return nil }
                case UInt8(ascii: "?"):
                    if query != nil { return nil }
                    query = index
                    itemStart = index + 1
                case UInt8(ascii: "="):
                    guard query != nil, equals == nil else { return nil }
                    equals = index
                case UInt8(ascii: "&"):
                    guard query != nil, endItem(index) else { return nil }
                    itemStart = index + 1
                    equals = nil
                default:
                    return nil
                }
            }
            guard let query else { return [] }
            if query == bytes.count - 1 { return nil }
            return endItem(bytes.count) ? items : nil
        }
    }

    /// `base` with `items` as its query, encoded as `URLComponents` does (the seeds' way).
    public static func encode(base: String, items: [(String, String)]) -> String {
        var components = URLComponents(string: base) ?? URLComponents()
        components.queryItems = items.map { URLQueryItem(name: $0.0, value: $0.1) }
        return components.string ?? base
    }
}
