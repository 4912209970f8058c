/// `MSMessagesErrorCode`, with the values of `MSMessagesErrorDomain`.
public enum MessagesErrorCode: Int, Codable, Sendable, CaseIterable {
    case unknown = -1
    case fileNotFound = 1
    case fileUnreadable = 2
    case improperFileType = 3
    case improperFileURL = 4
    case stickerFileImproperFileAttributes = 5
    case stickerFileImproperFileSize = 6
    case stickerFileImproperFileFormat = 7
    case urlExceedsMaxSize = 8
    case sendWithoutRecentInteraction = 9
    case sendWhileNotVisible = 10
    case apiUnavailableInPresentationContext = 11

    public var name: String {
        switch self {
        case .unknown: return "unknown"
        case .fileNotFound: return "fileNotFound"
        case .fileUnreadable: return "fileUnreadable"
        case .improperFileType: return "improperFileType"
        case .improperFileURL: return "improperFileURL"
        case .stickerFileImproperFileAttributes: return "stickerFileImproperFileAttributes"
        case .stickerFileImproperFileSize: return "stickerFileImproperFileSize"
        case .stickerFileImproperFileFormat: return "stickerFileImproperFileFormat"
        case .urlExceedsMaxSize: return "urlExceedsMaxSize"
        case .sendWithoutRecentInteraction: return "sendWithoutRecentInteraction"
        case .sendWhileNotVisible: return "sendWhileNotVisible"
        case .apiUnavailableInPresentationContext: return "apiUnavailableInPresentationContext"
        }
    }
}

/// An error in `MSMessagesErrorDomain`, with a sentence saying which rule was broken.
public struct MessagesError: Error, Hashable, Codable, Sendable, CustomStringConvertible {
    public var code: MessagesErrorCode
    public var reason: String

    public init(_ code: MessagesErrorCode, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "MSMessagesErrorDomain \(code.rawValue) (\(code.name)): \(reason)" }
}
