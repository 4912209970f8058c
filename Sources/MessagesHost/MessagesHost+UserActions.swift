import Foundation
import MessagesModel

// What the user does in Messages, and every callback it causes, in order. Each kind
// of action has its own method; `perform` checks the device and runs the work the
// extensions queued once the action is done, as the main run loop would.
extension MessagesHost {
    /// Carries out a user action on `device`, with every callback it causes, in order.
    /// - Throws: ``HostError`` if the action is impossible now; nothing happens then.
    public func perform(_ action: UserAction, on device: DeviceID) throws(HostError) {
        guard let state = devices[device] else { throw .unknownDevice(device) }
        actionCounter += 1
        switch action {
        case .openConversation(let conversation): try open(conversation, action, on: device, state)
        case .leaveMessages, .quitMessages: leave(quitting: action == .quitMessages, action, on: device, state)
        case .openExtension: try openExtension(action, on: device, state)
        case .tapMessage(let id): try tapMessage(id, action, on: device, state)
        case .viewLiveMessage(let id): try viewLiveMessage(id, action, on: device, state)
        case .touch, .expand, .collapse, .dismissExtension: try useExtension(action, on: device)
        case .tapSend, .deleteStaged: try emptyInputField(sending: action == .tapSend, action, on: device, state)
        case .tryAgain(let id): try tryAgain(id, action, on: device, state)
        }
        drain()
    }

    /// Try Again on a message whose send failed: it goes out again, as a new send of the
    /// same message (the failed bubble gives way to it, as a session's newer message does).
    private func tryAgain(_ id: MessageID, _ action: UserAction, on device: DeviceID, _ state: DeviceState) throws(HostError) {
        guard let current = state.current else { throw .noConversationOpen(device) }
        guard var message = devices[device]!.transcripts[current]?.last(where: { $0.isOutgoing && $0.message?.id == id })?.message,
              message.error != nil else { throw .nothingToTryAgain(id) }
        // The expanded extension covers the transcript, and the bubble with it.
        if let shown = instances[device]?[current], shown.isActive, shown.style == .expanded { throw .transcriptHidden(device) }
        let instance = ensureInstance(device, current)
        observer?.userActed(action, instance: instance.info)
        message.error = nil
        send(.message(message), from: device, in: current, instance: instance)
    }

    private func open(_ conversation: ConversationID, _ action: UserAction, on device: DeviceID, _ state: DeviceState) throws(HostError) {
        guard let members = conversations[conversation]?.devices else { throw .unknownConversation(conversation) }
        guard members.contains(device) else { throw .notAParticipant(device, conversation) }
        let instance = ensureInstance(device, conversation)
        observer?.userActed(action, instance: instance.info)
        if state.current != conversation {
            resignEverything(on: device)
            devices[device]!.current = conversation
        }
    }

    /// Leaving resigns what runs; quitting also ends every instance on the device.
    private func leave(quitting: Bool, _ action: UserAction, on device: DeviceID, _ state: DeviceState) {
        if let current = state.current, let instance = instances[device]?[current] {
            observer?.userActed(action, instance: instance.info)
        }
        resignEverything(on: device)
        devices[device]!.current = nil
        guard quitting else { return }
        let ended = Array((instances[device] ?? [:]).values) + Array((liveInstances[device] ?? [:]).values)
        instances[device] = [:]
        liveInstances[device] = [:]
        for instance in ended.sorted(by: { $0.info.instanceID.uuidString < $1.info.instanceID.uuidString }) {
            observer?.instanceEnded(instance.info)
        }
    }

    private func openExtension(_ action: UserAction, on device: DeviceID, _ state: DeviceState) throws(HostError) {
        guard let current = state.current else { throw .noConversationOpen(device) }
        let instance = ensureInstance(device, current)
        observer?.userActed(action, instance: instance.info)
        if !instance.isActive { activate(instance, style: .compact, selected: nil) }
    }

    private func tapMessage(_ id: MessageID, _ action: UserAction, on device: DeviceID, _ state: DeviceState) throws(HostError) {
        guard let current = state.current else { throw .noConversationOpen(device) }
        guard let message = state.transcripts[current]?.compactMap(\.message).first(where: { $0.id == id }) else {
            throw .messageNotInTranscript(id)
        }
        let instance = ensureInstance(device, current)
        // The expanded extension covers the transcript: nothing there can be tapped.
        if instance.isActive && instance.style == .expanded { throw .transcriptHidden(device) }
        observer?.userActed(action, instance: instance.info)
        if !instance.isActive {
            activate(instance, style: .expanded, selected: message)
        } else if instance.selectedMessage?.id != id {
            deliver(.willSelect, to: instance, message: message)
            instance.selectedMessage = message
            deliver(.didSelect, to: instance, message: message)
            if instance.style == .compact { transition(instance, to: .expanded) }
        }
    }

    /// A live bubble runs an instance of its own, in transcript style.
    private func viewLiveMessage(_ id: MessageID, _ action: UserAction, on device: DeviceID, _ state: DeviceState) throws(HostError) {
        guard let current = state.current else { throw .noConversationOpen(device) }
        guard let message = state.transcripts[current]?.compactMap(\.message).first(where: { $0.id == id }),
              case .live? = message.layout else {
            throw .messageNotInTranscript(id)
        }
        let instance: ExtensionInstance
        if let existing = liveInstances[device]?[id] {
            instance = existing
        } else {
            let info = makeInfo(device, current, live: id)
            instance = ExtensionInstance(info: info, extension: makeExtension(info), host: self)
            liveInstances[device, default: [:]][id] = instance
            observer?.instanceStarted(info)
            instance.extension.attach(to: instance)
        }
        observer?.userActed(action, instance: instance.info)
        if !instance.isActive { activate(instance, style: .transcript, selected: message) }
    }

    /// Touches, style changes and swipes: only on the extension that shows.
    private func useExtension(_ action: UserAction, on device: DeviceID) throws(HostError) {
        guard let instance = activeInstance(on: device) else { throw .extensionNotActive(device) }
        observer?.userActed(action, instance: instance.info)
        switch action {
        case .touch(let touch):
            instance.lastTouch = actionCounter
            instance.extension.handle(touch)
        case .expand, .collapse:
            let target: PresentationStyle = action == .expand ? .expanded : .compact
            if instance.style != target { transition(instance, to: target) }
        default:
            resign(instance)
        }
    }

    /// Send or delete what the input field holds; a running extension hears of its message.
    private func emptyInputField(sending: Bool, _ action: UserAction, on device: DeviceID, _ state: DeviceState) throws(HostError) {
        guard let current = state.current else { throw .noConversationOpen(device) }
        guard let item = state.staged[current] else { throw .nothingStaged(device) }
        let instance = ensureInstance(device, current)
        observer?.userActed(action, instance: instance.info)
        if sending {
            // The message has left the input field: it is no longer pending (MESSAGES.md).
            if case .message(var message) = item, instance.isActive {
                message.isPending = false
                deliver(.didStartSending, to: instance, message: message)
            }
            devices[device]!.staged[current] = nil
            send(item, from: device, in: current, instance: instance)
        } else {
            devices[device]!.staged[current] = nil
            if case .message(let message) = item, instance.isActive { deliver(.didCancelSending, to: instance, message: message) }
        }
    }
}
