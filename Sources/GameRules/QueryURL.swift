import Foundation

/// A URL split as `URLComponents` splits it, with the checks both games' decoders share.
struct QueryURL {
    var items: [(name: String, value: String?)]

    static let maximumLength = 5_000

    enum Failure: Error, Equatable {
        case tooLong(Int)
        case badScheme(String)
        case unparsable
    }

    /// Accepts the seeds' scheme-less URLs, and http(s) ones; refuses other schemes.
    static func parse(_ url: String) -> Result<QueryURL, Failure> {
        if url.count > maximumLength { return .failure(.tooLong(url.count)) }
        guard let components = URLComponents(string: url) else { return .failure(.unparsable) }
        if let scheme = components.scheme?.lowercased(), scheme != "http", scheme != "https" {
            return .failure(.badScheme(scheme))
        }
        return .success(QueryURL(items: (components.queryItems ?? []).map { ($0.name, $0.value) }))
    }

    static func encode(base: String, items: [(String, String)]) -> String {
        var components = URLComponents(string: base) ?? URLComponents()
        components.queryItems = items.map { URLQueryItem(name: $0.0, value: $0.1) }
        return components.string ?? base
    }
}
