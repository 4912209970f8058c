import MessagesHost
import MessagesModel

/// An extension that logs every callback with what it could see at that moment,
/// and does what a test tells it to on a touch.
final class SpyExtension: MessagesAppExtension {
    var kind: String { "spy" }
    var log: [String] = []
    /// The message each didStartSending was given.
    var startedSending: [Message] = []
    var onTouch: ((SpyExtension, any ExtensionHost) -> Void)?
    var onReceive: ((any ExtensionHost) -> Void)?
    var onResign: ((any ExtensionHost) -> Void)?
    weak var host: (any ExtensionHost)?
    var screen: Screen { Screen(name: "spy") }

    func attach(to host: any ExtensionHost) { self.host = host }

    private func note(_ name: String, _ conversation: Conversation? = nil) {
        let style = host?.presentationStyle.description ?? "?"
        let selected = (conversation ?? host?.activeConversation)?.selectedMessage?.caption ?? "-"
        log.append("\(name) \(style) sel=\(selected)")
    }

    func willBecomeActive(with c: Conversation) { note("willBecomeActive", c) }
    func didBecomeActive(with c: Conversation) { note("didBecomeActive", c) }
    func willResignActive(with c: Conversation) { note("willResignActive", c) }
    func didResignActive(with c: Conversation) {
        note("didResignActive", c)
        if let host { onResign?(host) }
    }
    func contentSizeThatFits(_ size: ContentSize) -> ContentSize {
        note("contentSizeThatFits(\(size))")
        return ContentSize(width: size.width, height: 120)
    }
    func willSelect(_ m: Message, conversation c: Conversation) { note("willSelect(\(m.caption ?? ""))", c) }
    func didSelect(_ m: Message, conversation c: Conversation) { note("didSelect(\(m.caption ?? ""))", c) }
    func didReceive(_ m: Message, conversation c: Conversation) {
        note("didReceive(\(m.caption ?? ""))", c)
        if let host { onReceive?(host) }
    }
    func didStartSending(_ m: Message, conversation c: Conversation) {
        startedSending.append(m)
        note("didStartSending(\(m.caption ?? ""))", c)
    }
    func didCancelSending(_ m: Message, conversation c: Conversation) { note("didCancelSending(\(m.caption ?? ""))", c) }
    func willTransition(to style: PresentationStyle) { note("willTransition(\(style))") }
    func didTransition(to style: PresentationStyle) { note("didTransition(\(style))") }
    func handle(_ touch: Touch) {
        if let host { onTouch?(self, host) }
    }

    /// Inserts a message with this caption in `session` (or a new one).
    static func insert(_ caption: String, session: SessionID? = nil, url: String? = "https://example.com/?state=1",
                       summary: String? = nil, live: Bool = false, into host: any ExtensionHost) -> MessagesError? {
        var message = host.makeMessage(session: session ?? host.makeSession())
        let layout = TemplateLayout(caption: caption)
        message.layout = live ? .live(alternate: layout) : .template(layout)
        message.url = url
        message.summaryText = summary
        var outcome: MessagesError?
        host.insert(message) { outcome = $0 }
        return outcome
    }
}

/// Two devices, A (Alice) and B (Bob), in one conversation, each running spies.
final class World {
    let host: MessagesHost
    let conversation: ConversationID
    let other: ConversationID
    private(set) var spies: [DeviceID: [SpyExtension]] = [:]

    init(policy: URLRules.Policy = .asShipped) throws {
        var made: [DeviceID: [SpyExtension]] = [:]
        let host = MessagesHost(seed: 42, urlPolicy: policy) { info in
            let spy = SpyExtension()
            made[info.device, default: []].append(spy)
            return spy
        }
        host.addDevice("A", owner: "Alice")
        host.addDevice("B", owner: "Bob")
        self.host = host
        conversation = try host.startConversation(kind: "spy", between: ["A", "B"])
        other = try host.startConversation(kind: "spy", between: ["A", "B"])
        collect = { made }
    }

    private var collect: () -> [DeviceID: [SpyExtension]] = { [:] }

    /// Every spy made for a device, oldest first.
    func spies(_ device: DeviceID) -> [SpyExtension] { collect()[device] ?? [] }

    /// The spy of the device's instance in the main conversation.
    func spy(_ device: DeviceID) -> SpyExtension {
        host.instance(on: device, in: conversation)!.extension as! SpyExtension
    }

    /// Sends a message with `caption` from `device` (opening its extension) and
    /// delivers it, leaving the receiver's extension inactive.
    @discardableResult
    func sendMessage(_ caption: String, from device: DeviceID, session: SessionID? = nil, summary: String? = nil,
                     live: Bool = false) throws -> Message {
        try host.perform(.openConversation(conversation), on: device)
        if host.activeInstance(on: device) == nil { try host.perform(.openExtension, on: device) }
        let spy = self.spy(device)
        spy.onTouch = { _, h in _ = SpyExtension.insert(caption, session: session, summary: summary, live: live, into: h) }
        try host.perform(.touch(.button("insert")), on: device)
        try host.perform(.tapSend, on: device)
        try host.perform(.dismissExtension, on: device)
        host.deliverAll()
        return host.latestMessage(on: device)!
    }
}

extension MessagesHost {
    func latestMessage(on device: DeviceID) -> Message? {
        guard let conversation = currentConversation(of: device) else { return nil }
        return transcript(on: device, in: conversation).last { $0.message != nil }?.message
    }
}
