import Foundation
import MessagesModel
import RecordedEvents

/// Stands between the host and an extension: records each callback before passing it
/// on, each action the extension takes with its result, and each change of screen.
final class RecordingExtension: MessagesAppExtension {
    let inner: any MessagesAppExtension
    let info: InstanceInfo
    unowned let recorder: Recorder
    private var host: (any ExtensionHost)?
    /// Held here because extensions keep their host weakly, as view controllers do.
    private var proxy: RecordingHost?
    private var lastScreen: Screen?

    init(inner: any MessagesAppExtension, info: InstanceInfo, recorder: Recorder) {
        self.inner = inner
        self.info = info
        self.recorder = recorder
    }

    var kind: String { inner.kind }
    var screen: Screen { inner.screen }

    var context: EventContext {
        let conversation = host?.activeConversation
        return EventContext(device: info.device, conversation: info.conversation,
                            style: host?.presentationStyle ?? .compact, isActive: conversation != nil,
                            selectedMessage: conversation?.selectedMessage?.id)
    }

    func attach(to host: any ExtensionHost) {
        self.host = host
        let proxy = RecordingHost(real: host, owner: self)
        self.proxy = proxy
        inner.attach(to: proxy)
    }

    func record(_ event: RecordedEvent) { recorder.record(event, stream: info.instanceID) }

    private func callback(_ record: CallbackRecord, _ forward: () -> Void) {
        self.record(.callback(record, context))
        forward()
        noteScreen()
    }

    /// Records the screen if the last call changed it.
    func noteScreen() {
        let now = inner.screen
        guard now != lastScreen else { return }
        lastScreen = now
        record(.screen(now, context))
    }

    func willBecomeActive(with c: Conversation) {
        callback(CallbackRecord(callback: .willBecomeActive, conversation: c)) { inner.willBecomeActive(with: c) }
    }
    func didBecomeActive(with c: Conversation) {
        callback(CallbackRecord(callback: .didBecomeActive, conversation: c)) { inner.didBecomeActive(with: c) }
    }
    func willResignActive(with c: Conversation) {
        callback(CallbackRecord(callback: .willResignActive, conversation: c)) { inner.willResignActive(with: c) }
    }
    func didResignActive(with c: Conversation) {
        callback(CallbackRecord(callback: .didResignActive, conversation: c)) { inner.didResignActive(with: c) }
    }
    func willSelect(_ m: Message, conversation c: Conversation) {
        callback(CallbackRecord(callback: .willSelect, conversation: c, message: m)) { inner.willSelect(m, conversation: c) }
    }
    func didSelect(_ m: Message, conversation c: Conversation) {
        callback(CallbackRecord(callback: .didSelect, conversation: c, message: m)) { inner.didSelect(m, conversation: c) }
    }
    func didReceive(_ m: Message, conversation c: Conversation) {
        callback(CallbackRecord(callback: .didReceive, conversation: c, message: m)) { inner.didReceive(m, conversation: c) }
    }
    func didStartSending(_ m: Message, conversation c: Conversation) {
        callback(CallbackRecord(callback: .didStartSending, conversation: c, message: m)) { inner.didStartSending(m, conversation: c) }
    }
    func didCancelSending(_ m: Message, conversation c: Conversation) {
        callback(CallbackRecord(callback: .didCancelSending, conversation: c, message: m)) { inner.didCancelSending(m, conversation: c) }
    }
    func willTransition(to style: PresentationStyle) {
        callback(CallbackRecord(callback: .willTransition, style: style)) { inner.willTransition(to: style) }
    }
    func didTransition(to style: PresentationStyle) {
        callback(CallbackRecord(callback: .didTransition, style: style)) { inner.didTransition(to: style) }
    }

    /// Recorded after the extension answers, so the record holds the size it chose
    /// (sizing is a question, not a moment in which an extension acts).
    func contentSizeThatFits(_ size: ContentSize) -> ContentSize {
        let answer = inner.contentSizeThatFits(size)
        record(.callback(CallbackRecord(callback: .contentSizeThatFits, availableSize: size, contentSize: answer), context))
        noteScreen()
        return answer
    }

    func handle(_ touch: Touch) {
        // The touch itself is recorded as user input by the host observer.
        inner.handle(touch)
        noteScreen()
    }
}

/// The host as the wrapped extension sees it: every action is recorded with its
/// outcome, then answered by the real host.
final class RecordingHost: ExtensionHost {
    let real: any ExtensionHost
    unowned let owner: RecordingExtension

    init(real: any ExtensionHost, owner: RecordingExtension) {
        self.real = real
        self.owner = owner
    }

    var presentationStyle: PresentationStyle { real.presentationStyle }
    var activeConversation: Conversation? { real.activeConversation }
    func makeSession() -> SessionID { real.makeSession() }
    func makeMessage(session: SessionID?) -> Message { real.makeMessage(session: session) }

    func requestPresentationStyle(_ style: PresentationStyle) {
        owner.record(.action(ActionRecord(action: .requestPresentationStyle(style)), owner.context))
        real.requestPresentationStyle(style)
    }

    func dismiss() {
        owner.record(.action(ActionRecord(action: .dismiss), owner.context))
        real.dismiss()
    }

    /// Runs the real call, then records the action with the error it completed with.
    func deliver(_ item: Item, _ delivery: Delivery, completion: ((MessagesError?) -> Void)?) {
        let context = owner.context
        var outcome: MessagesError?
        real.deliver(item, delivery) { outcome = $0 }
        let warnings = outcome == nil ? ((item.message?.url).map { URLRules.warnings(for: $0).map(\.description) } ?? []) : []
        owner.record(.action(ActionRecord(action: ExtensionAction(item, delivery), error: outcome, warnings: warnings,
                                          changeDescription: ChangeDescription(delivery)), context))
        completion?(outcome)
    }
}
