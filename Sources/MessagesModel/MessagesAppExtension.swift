/// A message extension, mirroring `MSMessagesAppViewController`: the host calls these
/// methods in the documented order. An extension subclasses ``MessagesAppViewController``
/// and overrides the callbacks it handles; a type that conforms directly (a wrapper, such
/// as the recorder's) implements every one.
///
/// The extension acts through the ``ExtensionHost`` it is given in ``attach(to:)``,
/// which stands for both the view controller's inherited API
/// (`requestPresentationStyle`, `dismiss`) and `MSConversation`'s insert methods.
public protocol MessagesAppExtension: AnyObject {
    /// A stable name for the kind of extension, e.g. `battleship`.
    var kind: String { get }
    /// Called once, before any callback.
    func attach(to host: any ExtensionHost)

    func willBecomeActive(with conversation: Conversation)
    func didBecomeActive(with conversation: Conversation)
    func willResignActive(with conversation: Conversation)
    func didResignActive(with conversation: Conversation)
    func willSelect(_ message: Message, conversation: Conversation)
    func didSelect(_ message: Message, conversation: Conversation)
    func didReceive(_ message: Message, conversation: Conversation)
    func didStartSending(_ message: Message, conversation: Conversation)
    func didCancelSending(_ message: Message, conversation: Conversation)
    func willTransition(to style: PresentationStyle)
    func didTransition(to style: PresentationStyle)
    /// Transcript style only: the size the live bubble wants within `size`, the largest
    /// Messages offers (``MessagesAppViewController``'s default takes all of it).
    func contentSizeThatFits(_ size: ContentSize) -> ContentSize

    /// The user touched the extension's UI.
    func handle(_ touch: Touch)
    /// What the extension shows now.
    var screen: Screen { get }
}

/// What an extension may ask of Messages. Completions run before the call returns.
public protocol ExtensionHost: AnyObject {
    var presentationStyle: PresentationStyle { get }
    var activeConversation: Conversation? { get }

    /// `MSSession()`.
    func makeSession() -> SessionID
    /// `MSMessage(session:)`: a new message with its identity.
    func makeMessage(session: SessionID?) -> Message

    /// Asks for a style; the host decides and then calls `willTransition` and
    /// `didTransition`. `.transcript` cannot be requested.
    func requestPresentationStyle(_ style: PresentationStyle)
    /// Resigns the extension (`willResignActive`, `didResignActive`). Does nothing in
    /// transcript style.
    func dismiss()

    /// Puts `item` into the conversation as `delivery` says. The one requirement behind
    /// Messages' own insert and send calls (below), so a host decides, validates and
    /// answers in one place whatever the kind of item.
    func deliver(_ item: Item, _ delivery: Delivery, completion: ((MessagesError?) -> Void)?)
}

/// How an extension hands an item to Messages.
public enum Delivery: Hashable, Sendable {
    /// `MSConversation.insert`: staged in the input field, replacing whatever was there;
    /// only the user sends it.
    case insert
    /// `insert(_:localizedChangeDescription:completionHandler:)` (seed 003 calls it with
    /// nil): the same staging, with a sentence for VoiceOver describing the change.
    case insertDescribing(String?)
    /// iOS 11's `send`: straight to the transcript; needs the extension visible and a
    /// recent touch.
    case send
}

/// Messages' own calls, as the extension makes them.
extension ExtensionHost {
    /// `MSConversation.insert(_:completionHandler:)`.
    public func insert(_ message: Message, completion: ((MessagesError?) -> Void)?) { deliver(.message(message), .insert, completion: completion) }
    /// `insertText(_:completionHandler:)`.
    public func insertText(_ text: String, completion: ((MessagesError?) -> Void)?) { deliver(.text(text), .insert, completion: completion) }
    /// `insert(_ sticker:completionHandler:)`.
    public func insertSticker(_ sticker: Sticker, completion: ((MessagesError?) -> Void)?) { deliver(.sticker(sticker), .insert, completion: completion) }
    /// iOS 11 `send(_:completionHandler:)`.
    public func send(_ message: Message, completion: ((MessagesError?) -> Void)?) { deliver(.message(message), .send, completion: completion) }
    /// iOS 11 `sendText(_:completionHandler:)`.
    public func sendText(_ text: String, completion: ((MessagesError?) -> Void)?) { deliver(.text(text), .send, completion: completion) }
    /// iOS 11 `send(_ sticker:completionHandler:)`.
    public func sendSticker(_ sticker: Sticker, completion: ((MessagesError?) -> Void)?) { deliver(.sticker(sticker), .send, completion: completion) }

    /// `insertAttachment(_:withAlternateFilename:completionHandler:)`: file URLs only.
    public func insertAttachment(_ fileURL: String, alternateFilename: String?, completion: ((MessagesError?) -> Void)?) {
        deliver(.attachment(fileURL: fileURL, alternateFilename: alternateFilename), .insert, completion: completion)
    }

    /// iOS 11 `sendAttachment(_:withAlternateFilename:completionHandler:)`: file URLs only.
    public func sendAttachment(_ fileURL: String, alternateFilename: String?, completion: ((MessagesError?) -> Void)?) {
        deliver(.attachment(fileURL: fileURL, alternateFilename: alternateFilename), .send, completion: completion)
    }

    /// `insert(_:localizedChangeDescription:completionHandler:)`.
    public func insert(_ message: Message, localizedChangeDescription: String?, completion: ((MessagesError?) -> Void)?) {
        deliver(.message(message), .insertDescribing(localizedChangeDescription), completion: completion)
    }
}
