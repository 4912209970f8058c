import MessagesModel

/// Seed 004's plain extension: a sticker browser loaded from GIF files, and a
/// "Self Define" screen whose Send button inserts the "Stepper Value" custom message
/// (with the URL `emptyURL`, which breaks the URL rules), plus text and attachment
/// inserts.
public final class StickerExtension: MessagesAppViewController {
    public static let kind = "stickers"
    public override var kind: String { Self.kind }

    /// The stickers the browser shows.
    public let stickers: [Sticker]
    /// The file `Attachment` inserts.
    public let attachmentURL: String
    /// The last completion error, shown on screen (the seed prints it).
    public private(set) var lastError: MessagesError?
    private var isShowing = false

    public init(stickers: [Sticker] = StickerExtension.bundledStickers,
                attachmentURL: String = "file:///var/mobile/Media/photo.jpg") {
        self.stickers = stickers
        self.attachmentURL = attachmentURL
    }

    /// The GIFs the seed's bundle holds.
    public static let bundledStickers = (1...3).map {
        Sticker(fileURL: "file:///bundle/sticker\($0).gif", localizedDescription: "/bundle/sticker\($0).gif")
    }

    public override func willBecomeActive(with conversation: Conversation) { isShowing = true }
    public override func didResignActive(with conversation: Conversation) { isShowing = false }

    public override func handle(_ touch: Touch) {
        guard let host else { return }
        let record: (MessagesError?) -> Void = { [weak self] in self?.lastError = $0 }
        switch touch {
        case .sticker(let index) where stickers.indices.contains(index):
            host.insertSticker(stickers[index], completion: record)
        case .button("Send"):
            // `handleSendButtonClick`: the custom message.
            var message = host.makeMessage(session: nil)
            message.layout = .template(TemplateLayout(caption: "Stepper Value", image: MessageImage(kind: "stepper", cells: ["1"])))
            message.url = "emptyURL"
            host.requestPresentationStyle(.compact)
            host.insert(message, completion: record)
        case .button("Text"):
            host.insertText("Hello from the extension", completion: record)
        case .button("Attachment"):
            host.insertAttachment(attachmentURL, alternateFilename: "photo.jpg", completion: record)
        default:
            break
        }
    }

    public override var screen: Screen {
        guard isShowing else { return .blank }
        var labels = stickers.map(\.localizedDescription)
        if let lastError { labels.append("Error: \(lastError.description)") }
        return Screen(name: "stickers", labels: labels,
                      buttons: [.init("Send"), .init("Text"), .init("Attachment")])
    }
}
