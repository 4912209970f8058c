/// A model of the image a message shows. The seeds draw board snapshots; we keep
/// what they show, as text, so replays can render it and audits can compare it.
public struct MessageImage: Hashable, Codable, Sendable {
    /// What kind of picture: e.g. `battleship-board`, `tictactoe-board`, `stepper`.
    public var kind: String
    /// Cell contents for board images, row by row (e.g. `empty`, `hit`, `x`).
    public var cells: [String]
    public init(kind: String, cells: [String] = []) {
        self.kind = kind
        self.cells = cells
    }
}

/// `MSMessageTemplateLayout`.
public struct TemplateLayout: Hashable, Codable, Sendable {
    public var caption: String?
    public var subcaption: String?
    public var trailingCaption: String?
    public var trailingSubcaption: String?
    public var image: MessageImage?
    /// Ignored when `image` is set.
    public var mediaFileURL: String?
    public var imageTitle: String?
    public var imageSubtitle: String?

    public init(caption: String? = nil, subcaption: String? = nil, trailingCaption: String? = nil,
                trailingSubcaption: String? = nil, image: MessageImage? = nil, mediaFileURL: String? = nil,
                imageTitle: String? = nil, imageSubtitle: String? = nil) {
        self.caption = caption
        self.subcaption = subcaption
        self.trailingCaption = trailingCaption
        self.trailingSubcaption = trailingSubcaption
        self.image = image
        self.mediaFileURL = mediaFileURL
        self.imageTitle = imageTitle
        self.imageSubtitle = imageSubtitle
    }
}

/// `MSMessageLayout`: a template, or a live layout (transcript style) with its
/// template fallback.
///
/// Indirect: its template holds up to nine strings and arrays, and a message is copied
/// at nearly every step of a fold (into its game's sighting, its bubble, the input
/// field); boxed, a copy is one reference counted instead of nine.
public indirect enum MessageLayout: Hashable, Codable, Sendable {
    case template(TemplateLayout)
    case live(alternate: TemplateLayout)

    /// The template shown when the extension cannot draw the bubble itself.
    public var template: TemplateLayout {
        switch self {
        case .template(let t), .live(let t): return t
        }
    }
}

/// `MSMessage`: what an extension puts in the input field and what travels between
/// devices. `id` stands for the message's identity in Messages (not visible in the
/// real API); the host sets it and `senderParticipantIdentifier`.
public struct Message: Hashable, Codable, Sendable {
    public var id: MessageID
    public var session: SessionID?
    /// The app's state. Kept as text: the seeds' URLs have no scheme.
    public var url: String?
    public var layout: MessageLayout?
    public var summaryText: String?
    public var accessibilityLabel: String?
    public var senderParticipantIdentifier: ParticipantID?
    public var shouldExpire: Bool
    /// True after insert until the user sends it.
    public var isPending: Bool
    /// Nil until a send fails.
    public var error: MessagesError?

    public init(id: MessageID, session: SessionID? = nil, url: String? = nil, layout: MessageLayout? = nil,
                summaryText: String? = nil, accessibilityLabel: String? = nil,
                senderParticipantIdentifier: ParticipantID? = nil, shouldExpire: Bool = false,
                isPending: Bool = false, error: MessagesError? = nil) {
        self.id = id
        self.session = session
        self.url = url
        self.layout = layout
        self.summaryText = summaryText
        self.accessibilityLabel = accessibilityLabel
        self.senderParticipantIdentifier = senderParticipantIdentifier
        self.shouldExpire = shouldExpire
        self.isPending = isPending
        self.error = error
    }

    /// The caption of its layout, if any.
    public var caption: String? { layout?.template.caption }
}

/// `MSSticker`: an image file with a description.
public struct Sticker: Hashable, Codable, Sendable {
    public var fileURL: String
    public var localizedDescription: String
    public init(fileURL: String, localizedDescription: String) {
        self.fileURL = fileURL
        self.localizedDescription = localizedDescription
    }
}

/// What Messages checks of a file, beyond its presence and size, before it stages or
/// sends it as a sticker or an attachment (see ``MessagesErrorCode``).
public struct FileAttributes: Hashable, Codable, Sendable {
    /// False for a file the extension's process may not read (error 2).
    public var isReadable: Bool
    /// A sticker's image size in pixels; Messages takes 300 to 618 on each side (error 5).
    public var pixelWidth: Int?
    public var pixelHeight: Int?

    public init(isReadable: Bool = true, pixelWidth: Int? = nil, pixelHeight: Int? = nil) {
        self.isReadable = isReadable
        self.pixelWidth = pixelWidth
        self.pixelHeight = pixelHeight
    }

    /// The pixel sizes a sticker image may have on each side.
    public static let stickerPixels = 300...618
}

/// `MSConversation`, as the extension sees it during a callback.
public struct Conversation: Hashable, Codable, Sendable {
    public var id: ConversationID
    public var localParticipantIdentifier: ParticipantID
    public var remoteParticipantIdentifiers: [ParticipantID]
    /// The message the user tapped, if it came from this extension.
    public var selectedMessage: Message?

    public init(id: ConversationID, localParticipantIdentifier: ParticipantID,
                remoteParticipantIdentifiers: [ParticipantID], selectedMessage: Message? = nil) {
        self.id = id
        self.localParticipantIdentifier = localParticipantIdentifier
        self.remoteParticipantIdentifiers = remoteParticipantIdentifiers
        self.selectedMessage = selectedMessage
    }
}
