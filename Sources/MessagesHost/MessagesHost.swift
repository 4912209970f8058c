import Foundation
import MessagesModel

/// A simulated Messages app on several devices, with a transport between them.
///
/// It drives extensions through their lifecycle callbacks in the documented order
/// (see `../shared/spec/MESSAGES.md`) in answer to ``UserAction``s, and delivers
/// sent messages when told to, so a test or player decides whether a message
/// arrives while the extension runs, while it is inactive, or while the device is
/// elsewhere. Deterministic: identifiers come from a seeded generator.
public final class MessagesHost {
    /// Makes the extension for a new instance.
    public typealias Factory = (InstanceInfo) -> any MessagesAppExtension

    struct Person {
        var name: String
    }

    struct DeviceState {
        var owner: Int
        /// This device's identifier for each person.
        var participantIDs: [Int: ParticipantID] = [:]
        var current: ConversationID?
        var transcripts: [ConversationID: [Bubble]] = [:]
        var staged: [ConversationID: Item] = [:]
    }

    struct ConversationState {
        var kind: String
        var devices: [DeviceID]
    }

    /// A message on its way to one device.
    public struct Delivery: Hashable, Sendable {
        public var to: DeviceID
        public var conversation: ConversationID
        public var item: Item
        /// The sending device.
        public var from: DeviceID
    }

    public var urlPolicy: URLRules.Policy
    public weak var observer: (any HostObserver)?
    let makeExtension: Factory
    var ids: SeededGenerator

    private var people: [Person] = []
    private var devices: [DeviceID: DeviceState] = [:]
    private var deviceOrder: [DeviceID] = []
    private var conversations: [ConversationID: ConversationState] = [:]
    private var instances: [DeviceID: [ConversationID: ExtensionInstance]] = [:]
    private var liveInstances: [DeviceID: [MessageID: ExtensionInstance]] = [:]
    private var work: [() -> Void] = []
    private var actionCounter = 0

    /// Messages sent and not yet delivered, oldest first.
    public private(set) var pendingDeliveries: [Delivery] = []
    /// The last message the transport delivered.
    public private(set) var lastDelivery: Delivery?
    /// How many of each callback the host has delivered to extensions.
    public private(set) var deliveredCallbacks: [Callback: Int] = [:]
    /// Files present on each device, by file URL, with their sizes (for attachments
    /// and stickers).
    public var files: [DeviceID: [String: Int]] = [:]

    public init(seed: UInt64 = 0, urlPolicy: URLRules.Policy = .asShipped, makeExtension: @escaping Factory) {
        self.ids = SeededGenerator(seed: seed)
        self.urlPolicy = urlPolicy
        self.makeExtension = makeExtension
    }

    // MARK: - Setting up

    /// Adds a device belonging to a new person called `owner`.
    public func addDevice(_ id: DeviceID, owner: String) {
        people.append(Person(name: owner))
        devices[id] = DeviceState(owner: people.count - 1)
        deviceOrder.append(id)
    }

    public var deviceIDs: [DeviceID] { deviceOrder }

    /// Starts a conversation between devices, played with the `kind` extension.
    @discardableResult
    public func startConversation(kind: String, between members: [DeviceID]) throws(HostError) -> ConversationID {
        for device in members where devices[device] == nil { throw .unknownDevice(device) }
        let id = ConversationID(ids.uuid())
        conversations[id] = ConversationState(kind: kind, devices: members)
        for device in members { devices[device]!.transcripts[id] = [] }
        return id
    }

    // MARK: - Reading state

    public func transcript(on device: DeviceID, in conversation: ConversationID) -> [Bubble] {
        devices[device]?.transcripts[conversation] ?? []
    }

    public func staged(on device: DeviceID, in conversation: ConversationID) -> Item? {
        devices[device]?.staged[conversation]
    }

    public func currentConversation(of device: DeviceID) -> ConversationID? { devices[device]?.current }

    public func conversationKind(_ id: ConversationID) -> String? { conversations[id]?.kind }

    public func members(of conversation: ConversationID) -> [DeviceID] { conversations[conversation]?.devices ?? [] }

    /// The running (or idle) instance for a device's conversation, if any.
    public func instance(on device: DeviceID, in conversation: ConversationID) -> ExtensionInstance? {
        instances[device]?[conversation]
    }

    /// The instance in the device's current conversation, if it is active.
    public func activeInstance(on device: DeviceID) -> ExtensionInstance? {
        guard let current = devices[device]?.current, let instance = instances[device]?[current], instance.isActive
        else { return nil }
        return instance
    }

    /// The name `device` shows for each participant identifier it knows.
    public func names(on device: DeviceID) -> [ParticipantID: String] {
        guard let state = devices[device] else { return [:] }
        var out: [ParticipantID: String] = [:]
        for (person, id) in state.participantIDs { out[id] = people[person].name }
        return out
    }

    /// A caption as `device` shows it, with `$<uuid>` resolved to names.
    public func display(_ text: String, on device: DeviceID) -> String {
        ParticipantNames.resolve(text, names: names(on: device))
    }

    // MARK: - Participants

    func participantID(of person: Int, on device: DeviceID) -> ParticipantID {
        if let known = devices[device]!.participantIDs[person] { return known }
        let made = ParticipantID(ids.uuid())
        devices[device]!.participantIDs[person] = made
        return made
    }

    /// The device owner's identifier on that device.
    public func localParticipant(_ device: DeviceID) -> ParticipantID {
        participantID(of: devices[device]!.owner, on: device)
    }

    /// Maps `from`'s identifiers to `to`'s, for every person both may know.
    func identifierMap(from: DeviceID, to: DeviceID) -> [ParticipantID: ParticipantID] {
        var map: [ParticipantID: ParticipantID] = [:]
        // In person order: making an identifier draws from the seeded generator.
        for (person, id) in devices[from]!.participantIDs.sorted(by: { $0.key < $1.key }) {
            map[id] = participantID(of: person, on: to)
        }
        return map
    }

    // MARK: - Instances

    @discardableResult
    func ensureInstance(_ device: DeviceID, _ conversation: ConversationID) -> ExtensionInstance {
        if let existing = instances[device]?[conversation] { return existing }
        let info = makeInfo(device, conversation, live: nil)
        let instance = ExtensionInstance(info: info, extension: makeExtension(info), host: self)
        instances[device, default: [:]][conversation] = instance
        observer?.instanceStarted(info)
        instance.extension.attach(to: instance)
        return instance
    }

    func makeInfo(_ device: DeviceID, _ conversation: ConversationID, live: MessageID?) -> InstanceInfo {
        let local = localParticipant(device)
        let remotes = conversations[conversation]!.devices.filter { $0 != device }.map {
            participantID(of: devices[$0]!.owner, on: device)
        }
        return InstanceInfo(instanceID: ids.uuid(), device: device, conversation: conversation,
                            kind: conversations[conversation]!.kind, localParticipant: local,
                            remoteParticipants: remotes, names: names(on: device), liveMessage: live)
    }

    func enqueue(_ job: @escaping () -> Void) { work.append(job) }

    /// Runs what extensions asked for during the last call, in order, like the main
    /// run loop after a callback returns.
    func drain() {
        while !work.isEmpty { work.removeFirst()() }
    }

    // MARK: - Callbacks

    /// The single door through which callbacks reach extensions, so the
    /// transcript-style rule holds everywhere.
    func deliver(_ callback: Callback, to instance: ExtensionInstance, message: Message? = nil,
                 style: PresentationStyle? = nil) {
        if instance.style == .transcript && Callback.suppressedInTranscript.contains(callback) { return }
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
        }
    }

    func activate(_ instance: ExtensionInstance, style: PresentationStyle, selected: Message?) {
        instance.selectedMessage = selected
        instance.style = style
        instance.isActive = true
        deliver(.willBecomeActive, to: instance)
        deliver(.didBecomeActive, to: instance)
    }

    func resign(_ instance: ExtensionInstance) {
        guard instance.isActive else { return }
        deliver(.willResignActive, to: instance)
        deliver(.didResignActive, to: instance)
        instance.isActive = false
        instance.selectedMessage = nil
    }

    func transition(_ instance: ExtensionInstance, to style: PresentationStyle) {
        deliver(.willTransition, to: instance, style: style)
        instance.style = style
        deliver(.didTransition, to: instance, style: style)
    }

    private func resignEverything(on device: DeviceID) {
        guard let current = devices[device]?.current else { return }
        if let instance = instances[device]?[current] { resign(instance) }
        for live in liveInstances(on: device, in: current) { resign(live) }
    }

    /// The live (transcript-style) instances of a conversation, in a stable order.
    private func liveInstances(on device: DeviceID, in conversation: ConversationID) -> [ExtensionInstance] {
        (liveInstances[device] ?? [:]).values.filter { $0.info.conversation == conversation }
            .sorted { $0.info.instanceID.uuidString < $1.info.instanceID.uuidString }
    }

    // MARK: - User actions

    /// Carries out a user action on `device`, with every callback it causes, in order.
    /// - Throws: ``HostError`` if the action is impossible now; nothing happens then.
    public func perform(_ action: UserAction, on device: DeviceID) throws(HostError) {
        guard let state = devices[device] else { throw .unknownDevice(device) }
        actionCounter += 1
        switch action {
        case .openConversation(let conversation):
            guard let members = conversations[conversation]?.devices else { throw .unknownConversation(conversation) }
            guard members.contains(device) else { throw .notAParticipant(device, conversation) }
            let instance = ensureInstance(device, conversation)
            observer?.userActed(action, instance: instance.info)
            if state.current != conversation {
                resignEverything(on: device)
                devices[device]!.current = conversation
            }
        case .leaveMessages, .quitMessages:
            if let current = state.current, let instance = instances[device]?[current] {
                observer?.userActed(action, instance: instance.info)
            }
            resignEverything(on: device)
            devices[device]!.current = nil
            if action == .quitMessages {
                let ended = Array((instances[device] ?? [:]).values) + Array((liveInstances[device] ?? [:]).values)
                instances[device] = [:]
                liveInstances[device] = [:]
                for instance in ended.sorted(by: { $0.info.instanceID.uuidString < $1.info.instanceID.uuidString }) {
                    observer?.instanceEnded(instance.info)
                }
            }
        case .openExtension:
            guard let current = state.current else { throw .noConversationOpen(device) }
            let instance = ensureInstance(device, current)
            observer?.userActed(action, instance: instance.info)
            if !instance.isActive { activate(instance, style: .compact, selected: nil) }
        case .tapMessage(let id):
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
        case .viewLiveMessage(let id):
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
        case .touch(let touch):
            guard let instance = activeInstance(on: device) else { throw .extensionNotActive(device) }
            observer?.userActed(action, instance: instance.info)
            instance.lastTouch = actionCounter
            instance.extension.handle(touch)
        case .expand, .collapse:
            guard let instance = activeInstance(on: device) else { throw .extensionNotActive(device) }
            observer?.userActed(action, instance: instance.info)
            let target: PresentationStyle = action == .expand ? .expanded : .compact
            if instance.style != target { transition(instance, to: target) }
        case .tapSend:
            guard let current = state.current else { throw .noConversationOpen(device) }
            guard let item = state.staged[current] else { throw .nothingStaged(device) }
            let instance = ensureInstance(device, current)
            observer?.userActed(action, instance: instance.info)
            if case .message(let message) = item, instance.isActive {
                deliver(.didStartSending, to: instance, message: message)
            }
            devices[device]!.staged[current] = nil
            send(item, from: device, in: current, instance: instance)
        case .deleteStaged:
            guard let current = state.current else { throw .noConversationOpen(device) }
            guard let item = state.staged[current] else { throw .nothingStaged(device) }
            let instance = ensureInstance(device, current)
            observer?.userActed(action, instance: instance.info)
            devices[device]!.staged[current] = nil
            if case .message(let message) = item, instance.isActive {
                deliver(.didCancelSending, to: instance, message: message)
            }
        case .dismissExtension:
            guard let instance = activeInstance(on: device) else { throw .extensionNotActive(device) }
            observer?.userActed(action, instance: instance.info)
            resign(instance)
        }
        drain()
    }

    // MARK: - Staging and sending

    /// Validates and stages an item in the input field, replacing what was there.
    func stage(_ item: Item, by instance: ExtensionInstance) -> MessagesError? {
        guard instance.isActive else {
            return MessagesError(.apiUnavailableInPresentationContext, "the extension is not active, so it cannot insert")
        }
        if let error = validate(item, on: instance.info.device) { return error }
        devices[instance.info.device]!.staged[instance.info.conversation] = stamped(item, by: instance, pending: true)
        return nil
    }

    /// iOS 11's `send`: straight to the transcript, if visible with a recent touch.
    func sendDirectly(_ item: Item, by instance: ExtensionInstance) -> MessagesError? {
        let device = instance.info.device
        guard instance.isActive, instance.style != .transcript, devices[device]!.current == instance.info.conversation else {
            return MessagesError(.sendWhileNotVisible, "send needs the extension visible in its conversation")
        }
        guard instance.lastTouch == actionCounter else {
            return MessagesError(.sendWithoutRecentInteraction, "send needs a touch on the extension in the same interaction")
        }
        if let error = validate(item, on: device) { return error }
        send(stamped(item, by: instance, pending: false), from: device, in: instance.info.conversation, instance: instance)
        return nil
    }

    private func stamped(_ item: Item, by instance: ExtensionInstance, pending: Bool) -> Item {
        guard case .message(var message) = item else { return item }
        message.senderParticipantIdentifier = instance.info.localParticipant
        message.isPending = pending
        return .message(message)
    }

    func validate(_ item: Item, on device: DeviceID) -> MessagesError? {
        switch item {
        case .message(let message):
            if let url = message.url { return URLRules.validate(url, policy: urlPolicy) }
            return nil
        case .text:
            return nil
        case .sticker(let sticker):
            guard sticker.fileURL.hasPrefix("file://") else {
                return MessagesError(.improperFileURL, "a sticker needs a file URL, not '\(sticker.fileURL)'")
            }
            let lower = sticker.fileURL.lowercased()
            guard [".png", ".apng", ".gif", ".jpg", ".jpeg"].contains(where: lower.hasSuffix) else {
                return MessagesError(.stickerFileImproperFileFormat, "a sticker must be PNG, APNG, GIF or JPEG")
            }
            guard let size = files[device]?[sticker.fileURL] else {
                return MessagesError(.fileNotFound, "no file at \(sticker.fileURL)")
            }
            guard size <= 500 * 1024 else {
                return MessagesError(.stickerFileImproperFileSize, "a sticker file must be at most 500 KB, not \(size) bytes")
            }
            return nil
        case .attachment(let url, _):
            guard url.hasPrefix("file://") else {
                return MessagesError(.improperFileURL, "insertAttachment takes a file URL, not '\(url)'")
            }
            guard files[device]?[url] != nil else { return MessagesError(.fileNotFound, "no file at \(url)") }
            return nil
        }
    }

    private func send(_ item: Item, from device: DeviceID, in conversation: ConversationID, instance: ExtensionInstance) {
        var sent = item
        if case .message(var message) = item {
            message.isPending = false
            sent = .message(message)
        }
        let me = localParticipant(device)
        devices[device]!.transcripts[conversation] = applyingSessionRule(
            devices[device]!.transcripts[conversation] ?? [],
            adding: Bubble(content: .item(sent), sender: me, isOutgoing: true))
        observer?.transcriptChanged(.sent(sent), instance: instance.info)
        for other in conversations[conversation]!.devices where other != device {
            pendingDeliveries.append(Delivery(to: other, conversation: conversation, item: sent, from: device))
        }
    }

    // MARK: - Transport

    /// Delivers the oldest pending message for `device` (or for anyone).
    @discardableResult
    public func deliverNext(to device: DeviceID? = nil) throws(HostError) -> Delivery {
        guard let index = pendingDeliveries.firstIndex(where: { device == nil || $0.to == device }) else {
            throw .noSuchDelivery
        }
        let delivery = pendingDeliveries.remove(at: index)
        arrive(delivery)
        drain()
        return delivery
    }

    /// Delivers every pending message, oldest first.
    public func deliverAll() {
        while !pendingDeliveries.isEmpty {
            arrive(pendingDeliveries.removeFirst())
            drain()
        }
    }

    private func arrive(_ delivery: Delivery) {
        lastDelivery = delivery
        let device = delivery.to
        let map = identifierMap(from: delivery.from, to: device)
        var item = delivery.item
        let sender = participantID(of: devices[delivery.from]!.owner, on: device)
        if case .message(var message) = item {
            message.senderParticipantIdentifier = sender
            if case .template(var layout)? = message.layout {
                layout.caption = layout.caption.map { ParticipantNames.translate($0, map) }
                message.layout = .template(layout)
            } else if case .live(var layout)? = message.layout {
                layout.caption = layout.caption.map { ParticipantNames.translate($0, map) }
                message.layout = .live(alternate: layout)
            }
            item = .message(message)
        }
        let instance = ensureInstance(device, delivery.conversation)
        devices[device]!.transcripts[delivery.conversation] = applyingSessionRule(
            devices[device]!.transcripts[delivery.conversation] ?? [],
            adding: Bubble(content: .item(item), sender: sender, isOutgoing: false))
        observer?.transcriptChanged(.arrived(item, sender: sender), instance: instance.info)
        guard case .message(let message) = item, devices[device]!.current == delivery.conversation else { return }
        for running in [instance] + liveInstances(on: device, in: delivery.conversation) where running.isActive {
            deliver(.didReceive, to: running, message: message)
        }
    }
}
