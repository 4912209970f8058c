/// `MSMessagesAppViewController`: the class a message extension subclasses, as the seeds
/// do on iOS. It keeps the host Messages attached it to and answers what the real view
/// controller answers (``activeConversation``, ``presentationStyle``,
/// ``requestPresentationStyle(_:)``, ``dismiss()``); a subclass overrides ``kind``,
/// ``screen`` and the callbacks it handles (`override func willBecomeActive(with:)`), and
/// inserts and sends through ``host``.
///
/// Conforming to ``MessagesAppExtension`` directly works as well; this saves an extension
/// keeping its host.
open class MessagesAppViewController: MessagesAppExtension {
    /// The host Messages attached this extension to (nil before): insert, send and make
    /// messages through it.
    public private(set) weak var host: (any ExtensionHost)?

    public init() {}

    /// A stable name for the kind of extension, e.g. `battleship`: override it. This
    /// default is the class's name.
    open var kind: String { String(describing: type(of: self)) }

    /// What the extension shows now: override it. This default is an empty screen.
    open var screen: Screen { Screen(name: kind) }

    open func attach(to host: any ExtensionHost) { self.host = host }

    /// The conversation while the extension is active, as the host has it.
    public var activeConversation: Conversation? { host?.activeConversation }
    /// The style the extension is shown in (compact before it is attached).
    public var presentationStyle: PresentationStyle { host?.presentationStyle ?? .compact }
    /// Asks Messages for a style; see ``ExtensionHost/requestPresentationStyle(_:)``.
    public func requestPresentationStyle(_ style: PresentationStyle) { host?.requestPresentationStyle(style) }
    /// Resigns the extension; see ``ExtensionHost/dismiss()``.
    public func dismiss() { host?.dismiss() }

    // The callbacks, each doing nothing until a subclass overrides it. Declared here, not
    // left to the protocol's defaults, so that a subclass's override is the one Messages calls.
    open func willBecomeActive(with conversation: Conversation) {}
    open func didBecomeActive(with conversation: Conversation) {}
    open func willResignActive(with conversation: Conversation) {}
    open func didResignActive(with conversation: Conversation) {}
    open func willSelect(_ message: Message, conversation: Conversation) {}
    open func didSelect(_ message: Message, conversation: Conversation) {}
    open func didReceive(_ message: Message, conversation: Conversation) {}
    open func didStartSending(_ message: Message, conversation: Conversation) {}
    open func didCancelSending(_ message: Message, conversation: Conversation) {}
    open func willTransition(to style: PresentationStyle) {}
    open func didTransition(to style: PresentationStyle) {}
    open func contentSizeThatFits(_ size: ContentSize) -> ContentSize { size }
    open func handle(_ touch: Touch) {}
}
