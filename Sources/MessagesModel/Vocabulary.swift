import Foundation

/// A device in the simulation, e.g. `A` for Alice's phone.
public struct DeviceID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral, CodingKeyRepresentable {
    public var codingKey: any CodingKey { IDKey(stringValue: name) }
    public init?<T: CodingKey>(codingKey: T) { name = codingKey.stringValue }
    public var name: String
    public init(_ name: String) { self.name = name }
    public init(stringLiteral value: String) { name = value }
    public var description: String { name }
    public static func < (a: Self, b: Self) -> Bool { a.name < b.name }
    public init(from decoder: Decoder) throws { name = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: Encoder) throws { var c = encoder.singleValueContainer(); try c.encode(name) }
}

/// The lifecycle callbacks of `MSMessagesAppViewController`.
public enum Callback: String, Codable, Sendable, CaseIterable {
    case willBecomeActive, didBecomeActive, willResignActive, didResignActive
    case willSelect, didSelect, didReceive, didStartSending, didCancelSending
    case willTransition, didTransition
    /// `contentSizeThatFits(_:)`: Messages asks a live bubble (transcript style) how
    /// large it wants to be. It answers with a size, recorded beside the size offered.
    case contentSizeThatFits

    /// Never delivered to an extension in transcript style.
    public static let suppressedInTranscript: Set<Callback> = [
        .willSelect, .didSelect, .didReceive, .didStartSending, .didCancelSending, .willTransition, .didTransition,
    ]

    /// Delivered to an extension in transcript style only.
    public static let transcriptOnly: Set<Callback> = [.contentSizeThatFits]
}

/// A size in points, as `contentSizeThatFits(_:)` is offered and answers it.
public struct ContentSize: Hashable, Codable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public var description: String { "\(width)x\(height)" }
}

/// Something the user does in Messages on one device.
public enum UserAction: Hashable, Codable, Sendable, CustomStringConvertible {
    /// Switch to a conversation (resigns the extension running in the current one).
    case openConversation(ConversationID)
    /// Go to the home screen or another app; instances stay alive.
    case leaveMessages
    /// Quit Messages; every extension instance on the device ends.
    case quitMessages
    /// Open the extension from the app drawer (compact style).
    case openExtension
    /// Tap one of the extension's messages in the transcript.
    case tapMessage(MessageID)
    /// Look at a live-layout message, which runs an instance in transcript style.
    case viewLiveMessage(MessageID)
    /// Touch the running extension's UI.
    case touch(Touch)
    case expand
    case collapse
    /// Tap Send on whatever is staged in the input field.
    case tapSend
    /// Delete the staged item from the input field without sending.
    case deleteStaged
    /// Swipe the extension away.
    case dismissExtension
    /// Tap "Try Again" on a message whose send failed (its bubble shows the error):
    /// Messages sends it again.
    case tryAgain(MessageID)

    public var description: String {
        switch self {
        case .openConversation(let c): return "open conversation \(c.uuid.uuidString.prefix(8))"
        case .leaveMessages: return "leave Messages"
        case .quitMessages: return "quit Messages"
        case .openExtension: return "open the extension from the drawer"
        case .tapMessage(let m): return "tap message \(m.uuid.uuidString.prefix(8))"
        case .viewLiveMessage(let m): return "view live message \(m.uuid.uuidString.prefix(8))"
        case .touch(let t): return "tap \(t)"
        case .expand: return "expand"
        case .collapse: return "collapse"
        case .tapSend: return "tap Send"
        case .deleteStaged: return "delete the staged message"
        case .dismissExtension: return "dismiss the extension"
        case .tryAgain(let m): return "try again to send message \(m.uuid.uuidString.prefix(8))"
        }
    }
}

/// What the input field holds, or what a bubble shows.
///
/// Indirect, so that copying one (each transcript line and input field holds one) counts
/// one reference, not each of its message's.
public indirect enum Item: Hashable, Codable, Sendable {
    case message(Message)
    case text(String)
    case sticker(Sticker)
    case attachment(fileURL: String, alternateFilename: String?)

    public var message: Message? {
        if case .message(let m) = self { return m }
        return nil
    }

    /// What a person reads for it: a message's caption, the text, or what was sent.
    /// Captions may hold `$<uuid>` mentions, which each device resolves to names.
    public var plainText: String {
        switch self {
        case .message(let m): return m.caption ?? "message"
        case .text(let t): return t
        case .sticker(let s): return "sticker \(s.localizedDescription)"
        case .attachment(let url, let name): return "attachment \(name ?? url)"
        }
    }
}

/// One line of a device's transcript.
public struct Bubble: Hashable, Codable, Sendable {
    public enum Content: Hashable, Codable, Sendable {
        case item(Item)
        /// What stays where a message was replaced by a newer one in its session:
        /// its `summaryText`, or a default description.
        case summary(text: String, replaced: MessageID)
    }

    public var content: Content
    /// The sender as this device knows them.
    public var sender: ParticipantID
    /// True for what this device sent.
    public var isOutgoing: Bool

    public init(content: Content, sender: ParticipantID, isOutgoing: Bool) {
        self.content = content
        self.sender = sender
        self.isOutgoing = isOutgoing
    }

    public var message: Message? {
        if case .item(.message(let m)) = content { return m }
        return nil
    }
}

/// The session rule, as a pure function: sending or receiving `message` in a
/// session that already has a message in `transcript` replaces the earlier one, at
/// its place, by a summary line, and adds the new one at the bottom.
public func applyingSessionRule(_ transcript: [Bubble], adding bubble: Bubble) -> [Bubble] {
    var out = transcript
    for index in out.indices {
        if let replaced = sessionRuleReplacement(of: out[index], adding: bubble) { out[index] = replaced }
    }
    out.append(bubble)
    return out
}

/// What the session rule makes of `earlier` when `newer` is added below it: its
/// summary line when both are messages of one session, else nil (it stays). For a
/// transcript kept in place (``applyingSessionRule(_:adding:)`` is the whole rule).
public func sessionRuleReplacement(of earlier: Bubble, adding newer: Bubble) -> Bubble? {
    guard let session = newer.message?.session, let message = earlier.message, message.session == session else { return nil }
    var replaced = earlier
    replaced.content = .summary(text: message.summaryText ?? defaultDescription(of: message), replaced: message.id)
    return replaced
}

/// The line Messages leaves for a replaced message that had no `summaryText`.
public func defaultDescription(of message: Message) -> String {
    if let caption = message.caption { return "Earlier: \(caption)" }
    return "Earlier message"
}
