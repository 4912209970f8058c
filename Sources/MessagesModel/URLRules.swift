import Foundation

/// The documented rules for `MSMessage.url`: scheme http, https or data; at most
/// 5,000 characters.
///
/// The seeds (and Apple's own sample) use URLs with no scheme, which Messages on iOS
/// accepted in practice. ``Policy/asShipped`` models that: a scheme-less URL is
/// accepted with a ``Finding/missingScheme`` warning (the host says which rule it
/// breaks), whether it carries state in a query or nothing at all (seed 004's
/// `emptyURL`, which the seed sends as it is). ``Policy/documented`` applies the rules
/// to the letter.
public enum URLRules {
    public static let maximumLength = 5_000
    public static let allowedSchemes: Set<String> = ["http", "https", "data"]

    public enum Policy: String, Codable, Sendable, CaseIterable {
        case asShipped
        case documented
    }

    /// A rule a URL breaks.
    public enum Finding: Hashable, Codable, Sendable, CustomStringConvertible {
        case tooLong(length: Int)
        case unsupportedScheme(String)
        /// No scheme; `carriesQuery` tells whether it still holds query items.
        case missingScheme(carriesQuery: Bool)
        case unparsable

        public var description: String {
            switch self {
            case .tooLong(let length):
                return "the URL has \(length) characters; the limit is \(URLRules.maximumLength)"
            case .unsupportedScheme(let scheme):
                return "the URL's scheme '\(scheme)' is not http, https or data (custom app schemes are not supported)"
            case .missingScheme(let carriesQuery):
                return carriesQuery
                    ? "the URL has no scheme (it should start with http:, https: or data:); it carries query items, so Messages accepts it as the seeds rely on"
                    : "the URL has no scheme (it should start with http:, https: or data:) and carries no query items; Messages accepts it as seed 004 sends it"
            case .unparsable:
                return "the text is not a URL"
            }
        }
    }

    /// Every rule `url` breaks, in order of severity.
    public static func findings(for url: String) -> [Finding] {
        var out: [Finding] = []
        if url.count > maximumLength { out.append(.tooLong(length: url.count)) }
        guard let components = URLComponents(string: url) else { return out + [.unparsable] }
        if let scheme = components.scheme?.lowercased() {
            if !allowedSchemes.contains(scheme) { out.append(.unsupportedScheme(scheme)) }
        } else {
            out.append(.missingScheme(carriesQuery: !(components.queryItems ?? []).isEmpty))
        }
        return out
    }

    /// The error Messages reports for `url` under `policy`, or nil if it is accepted.
    public static func validate(_ url: String, policy: Policy = .asShipped) -> MessagesError? {
        for finding in findings(for: url) {
            switch finding {
            case .tooLong:
                return MessagesError(.urlExceedsMaxSize, finding.description)
            case .unsupportedScheme, .unparsable:
                return MessagesError(.unknown, finding.description)
            case .missingScheme:
                if policy == .documented {
                    return MessagesError(.unknown, finding.description)
                }
            }
        }
        return nil
    }

    /// The warnings an accepted URL still earns (a missing scheme under `asShipped`).
    public static func warnings(for url: String, policy: Policy = .asShipped) -> [Finding] {
        guard validate(url, policy: policy) == nil else { return [] }
        return findings(for: url)
    }
}
