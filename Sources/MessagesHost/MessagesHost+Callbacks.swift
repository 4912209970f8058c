import Foundation
import MessagesModel

// The single door through which callbacks reach extensions, and the lifecycle moves
// (activate, resign, transition) built on it.
extension MessagesHost {
    /// The single door through which callbacks reach extensions, so the
    /// transcript-style rule holds everywhere.
    func deliver(_ callback: Callback, to instance: ExtensionInstance, message: Message? = nil,
                 style: PresentationStyle? = nil) {
        if instance.style == .transcript && Callback.suppressedInTranscript.contains(callback) { return }
        if instance.style != .transcript && Callback.transcriptOnly.contains(callback) { return }
        deliveredCallbacks[callback, default: 0] += 1
        let ext = instance.extension
        let conversation = instance.conversationValue
        switch callback {
        case .willBecomeActive: ext.willBecomeActive(with: conversation)
        case .didBecomeActive: ext.didBecomeActive(with: conversation)
        case .willResignActive: ext.willResignActive(with: conversation)
        case .didResignActive: ext.didResignActive(with: conversation)
        case .willSelect: ext.willSelect(message!, conversation: conversation)
        case .didSelect: ext.didSelect(message!, conversation: conversation)
        case .didReceive: ext.didReceive(message!, conversation: conversation)
        case .didStartSending: ext.didStartSending(message!, conversation: conversation)
        case .didCancelSending: ext.didCancelSending(message!, conversation: conversation)
        case .willTransition: ext.willTransition(to: style!)
        case .didTransition: ext.didTransition(to: style!)
        case .contentSizeThatFits:
            _ = ext.contentSizeThatFits(liveBubbleSpace[instance.info.device] ?? Self.defaultLiveBubbleSpace)
        }
    }

    func activate(_ instance: ExtensionInstance, style: PresentationStyle, selected: Message?) {
        instance.selectedMessage = selected
        instance.style = style
        instance.isActive = true
        deliver(.willBecomeActive, to: instance)
        deliver(.didBecomeActive, to: instance)
        // A live bubble is sized once it is up (transcript style only: `deliver` drops it otherwise).
        deliver(.contentSizeThatFits, to: instance)
    }

    func resign(_ instance: ExtensionInstance) {
        guard instance.isActive else { return }
        deliver(.willResignActive, to: instance)
        // Once resigned, the extension is no longer active: what it asks of Messages in
        // didResignActive is refused as it would be later.
        instance.isActive = false
        deliver(.didResignActive, to: instance)
        instance.selectedMessage = nil
    }

    func transition(_ instance: ExtensionInstance, to style: PresentationStyle) {
        deliver(.willTransition, to: instance, style: style)
        instance.style = style
        deliver(.didTransition, to: instance, style: style)
    }

    func resignEverything(on device: DeviceID) {
        guard let current = devices[device]?.current else { return }
        if let instance = instances[device]?[current] { resign(instance) }
        for live in liveInstances(on: device, in: current) { resign(live) }
    }

    /// The live (transcript-style) instances of a conversation, in a stable order.
    public func liveInstances(on device: DeviceID, in conversation: ConversationID) -> [ExtensionInstance] {
        (liveInstances[device] ?? [:]).values.filter { $0.info.conversation == conversation }
            .sorted { $0.info.instanceID.uuidString < $1.info.instanceID.uuidString }
    }
}
