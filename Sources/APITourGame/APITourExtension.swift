import Foundation
import MessagesModel

/// Seed 004's tour of the Messages API carried on to the rest of it, so a simulated
/// log holds every call and every error the host gives. It starts where
/// ``StickerExtension`` (the seed as it is) stops: the same sticker browser and
/// "Stepper Value" message (URL `emptyURL`), text and attachment inserts, and:
/// - the stepper (`+`) sets the value the custom messages carry;
/// - `Link` inserts the value as an https message with every template field, a
///   summary and an accessibility label (at 3, with the app's own `stepper:` scheme,
///   which Messages refuses); `Picture` inserts it as a `data:` image that
///   expires, whose URL grows with the value past Messages' 5,000 characters;
/// - `Live` asks for transcript style (which cannot be requested), then inserts a
///   message with a live layout: shown in the transcript, the tour
///   runs as its bubble and tries what a bubble may not do (leave transcript style,
///   dismiss itself, insert);
/// - `Send Now`, `Send Text`, `Send Sticker` and `Send Attachment` use iOS 11's `send` variants;
/// - `Auto-reply` makes the extension answer a message that arrives while it shows
///   and say goodbye as it goes away: calls Messages refuses (no touch in that
///   interaction, not visible, not active), as a careless extension would make them;
/// - the browser also lists the phone's downloaded stickers and the attachment
///   button walks through the phone's files, some of which Messages refuses (missing,
///   unreadable, too large, the wrong format or size, a folder, a web address).
public final class APITourExtension: MessagesAppViewController {
    public static let kind = "apitour"
    public override var kind: String { Self.kind }

    /// The stickers the browser shows.
    public let stickers: [Sticker]
    /// The files `Attachment` and `Send Attachment` offer; the stepper picks one.
    public let attachments: [String]
    /// The last completion error, shown on screen (the seed prints it).
    public private(set) var lastError: MessagesError?
    /// The stepper's value.
    public private(set) var value = 1
    /// Whether the extension answers arrivals and says goodbye on its own.
    public private(set) var autoReply = false
    private var isShowing = false

    public init(stickers: [Sticker] = APITourExtension.bundledStickers + APITourExtension.downloadedStickers,
                attachments: [String] = APITourExtension.phoneFiles) {
        self.stickers = stickers
        self.attachments = attachments
    }

    /// The GIFs the seed's bundle holds.
    public static let bundledStickers = (1...3).map {
        Sticker(fileURL: "file:///bundle/sticker\($0).gif", localizedDescription: "/bundle/sticker\($0).gif")
    }

    /// Stickers the user downloaded; ``APITourPlugin/files(on:)`` says which are fit to send.
    public static let downloadedStickers = ["party.png", "huge.gif", "tiny.png", "clip.webp", "missing.gif", "locked.png"].map {
        Sticker(fileURL: "file:///var/mobile/Downloads/\($0)", localizedDescription: $0)
    }

    /// What the attachment buttons offer: a photo, a folder, a web address, a file the
    /// extension may not read, and one that is gone.
    public static let phoneFiles = ["file:///var/mobile/Media/photo.jpg", "file:///var/mobile/Media/DCIM/",
                                    "https://example.com/photo.jpg", "file:///var/mobile/Media/private.heic",
                                    "file:///var/mobile/Media/gone.mov"]

    public override func willBecomeActive(with conversation: Conversation) { isShowing = true }

    /// As a live bubble (transcript style) it tries what a bubble may not do: leave
    /// transcript style, dismiss itself, insert. Messages ignores the first two and
    /// refuses the insert (11).
    public override func didBecomeActive(with conversation: Conversation) {
        guard let host, host.presentationStyle == .transcript else { return }
        host.requestPresentationStyle(.expanded)
        host.dismiss()
        host.insertText("From a bubble", completion: record)
    }

    /// A live bubble as wide as offered and 120 points high.
    public override func contentSizeThatFits(_ size: ContentSize) -> ContentSize {
        ContentSize(width: size.width, height: min(size.height, 120))
    }

    public override func didReceive(_ message: Message, conversation: Conversation) {
        guard autoReply, let host else { return }
        // An arrival is no touch: Messages refuses a send made now (error 9).
        host.sendText("Got it!", completion: record)
    }

    public override func didResignActive(with conversation: Conversation) {
        isShowing = false
        guard autoReply, let host else { return }
        // Gone from the screen: nothing may be inserted (11) or sent (10) any more.
        host.insertText("Bye!", completion: record)
        host.send(linkMessage(host), completion: record)
    }

    private var record: (MessagesError?) -> Void { { [weak self] in self?.lastError = $0 } }

    public override func handle(_ touch: Touch) {
        guard let host else { return }
        switch touch {
        case .sticker(let index) where stickers.indices.contains(index):
            host.insertSticker(stickers[index], completion: record)
        case .button("Send"):
            // `handleSendButtonClick`: the custom message.
            var message = host.makeMessage(session: nil)
            message.layout = .template(TemplateLayout(caption: "Stepper Value", image: MessageImage(kind: "stepper", cells: [String(value)])))
            message.url = "emptyURL"
            host.requestPresentationStyle(.compact)
            host.insert(message, completion: record)
        case .button("+"):
            value = value % 9 + 1
        case .button("Link"):
            var message = linkMessage(host)
            // At 3, a careless extension uses its own app's scheme, which Messages refuses.
            if value == 3 { message.url = "stepper://value/\(value)" }
            host.insert(message, completion: record)
        case .button("Live"):
            // MSMessageLiveLayout: the bubble is drawn by an instance in transcript style.
            // A careless extension asks for that style itself; it cannot be requested.
            host.requestPresentationStyle(.transcript)
            var message = host.makeMessage(session: nil)
            message.url = "https://example.com/stepper?value=\(value)&live=1"
            message.layout = .live(alternate: TemplateLayout(caption: "Stepper live", subcaption: "value \(value)"))
            host.insert(message, completion: record)
        case .button("Picture"):
            var message = host.makeMessage(session: nil)
            message.url = "data:image/gif;base64," + String(repeating: "R0lGODlh", count: value * 300)
            message.layout = .template(TemplateLayout(caption: "Stepper picture", image: MessageImage(kind: "stepper", cells: [String(value)])))
            message.shouldExpire = true
            host.insert(message, completion: record)
        case .button("Send Now"):
            host.send(linkMessage(host), completion: record)
        case .button("Send Text"):
            host.sendText("Hello from the extension", completion: record)
        case .button("Send Sticker"):
            host.sendSticker(stickers[(value + 2) % stickers.count], completion: record)
        case .button("Text"):
            host.insertText("Hello from the extension", completion: record)
        case .button("Attachment"), .button("Send Attachment"):
            let file = attachments[(value - 1) % attachments.count]
            let name = URL(string: file)?.lastPathComponent
            if touch == .button("Attachment") {
                host.insertAttachment(file, alternateFilename: name, completion: record)
            } else {
                host.sendAttachment(file, alternateFilename: name, completion: record)
            }
        case .button("Auto-reply"):
            autoReply.toggle()
        default:
            break
        }
    }

    /// The value as a web link, with every field a template layout has.
    private func linkMessage(_ host: any ExtensionHost) -> Message {
        var message = host.makeMessage(session: nil)
        message.url = "https://example.com/stepper?value=\(value)"
        message.layout = .template(TemplateLayout(
            caption: "Stepper Value", subcaption: "set to \(value)", trailingCaption: "\(value)", trailingSubcaption: "of 9",
            mediaFileURL: "file:///bundle/stepper.png", imageTitle: "Stepper", imageSubtitle: "value \(value)"))
        message.summaryText = "Stepper at \(value)"
        message.accessibilityLabel = "Stepper value \(value) of 9"
        return message
    }

    /// Every button, in the order the screen shows them.
    public static let buttonTitles = ["Send", "Text", "Attachment", "+", "Link", "Live", "Picture", "Send Now", "Send Text",
                                      "Send Sticker", "Send Attachment", "Auto-reply"]

    public override var screen: Screen {
        guard isShowing else { return .blank }
        var labels = stickers.map(\.localizedDescription) + ["Stepper: \(value)", "Auto-reply: \(autoReply ? "on" : "off")"]
        if let lastError { labels.append("Error: \(lastError.description)") }
        return Screen(name: "apitour", labels: labels, buttons: Self.buttonTitles.map { .init($0) })
    }
}
