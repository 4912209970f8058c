import Foundation

extension DecodingError {
    /// What a JSON document lacks or has wrong, in words, with the field's path:
    /// "it lacks the field body.action", not `keyNotFound(CodingKeys(...))`.
    public var plainDescription: String {
        func path(_ context: Context, _ last: CodingKey? = nil) -> String {
            let keys = context.codingPath + (last.map { [$0] } ?? [])
            let parts = keys.map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }
            return parts.isEmpty ? "the document" : parts.joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
        }
        switch self {
        case .keyNotFound(let key, let context):
            return "it lacks the field \(path(context, key))"
        case .typeMismatch(let type, let context):
            return "the field \(path(context)) is not \(Self.article(type))"
        case .valueNotFound(let type, let context):
            return "the field \(path(context)) is empty where \(Self.article(type)) belongs"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return "it is not valid JSON" }
            return "the field \(path(context)) holds a value it cannot take (\(context.debugDescription))"
        @unknown default:
            return "it cannot be read"
        }
    }

    private static func article(_ type: Any.Type) -> String {
        switch String(describing: type) {
        case "String": return "text"
        case "Int", "Int64", "Int32", "UInt64", "Double": return "a number"
        case "Bool": return "true or false"
        case let name where name.hasPrefix("Array") || name.hasPrefix("["): return "a list"
        case let name where name.hasPrefix("Dictionary"): return "an object"
        default: return "of the right kind"
        }
    }
}

/// Any error in words: a decoding error's plain description, else its own.
public func plainDescription(of error: Error) -> String {
    (error as? DecodingError)?.plainDescription ?? String(describing: error)
}
