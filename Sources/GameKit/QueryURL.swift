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
        if url.count > maximumLength { return .failure(.tooLong(url.count)) }
        guard let components = URLComponents(string: url) else { return .failure(.unparsable) }
        if let scheme = components.scheme?.lowercased(), scheme != "http", scheme != "https" {
            return .failure(.badScheme(scheme))
        }
        return .success(QueryURL(items: (components.queryItems ?? []).map { ($0.name, $0.value) }))
    }

    /// `base` with `items` as its query, encoded as `URLComponents` does (the seeds' way).
    public static func encode(base: String, items: [(String, String)]) -> String {
        var components = URLComponents(string: base) ?? URLComponents()
        components.queryItems = items.map { URLQueryItem(name: $0.0, value: $0.1) }
        return components.string ?? base
    }
}
