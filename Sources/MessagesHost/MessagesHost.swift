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
        /// The world's tick (``MessagesHost/tick()``) from which it can be delivered.
        public var due = 0
    }

    public var urlPolicy: URLRules.Policy
    public weak var observer: (any HostObserver)?
    let makeExtension: Factory
    var ids: SeededGenerator

    var people: [Person] = []
    var devices: [DeviceID: DeviceState] = [:]
    var deviceOrder: [DeviceID] = []
    var conversations: [ConversationID: ConversationState] = [:]
    var instances: [DeviceID: [ConversationID: ExtensionInstance]] = [:]
    var liveInstances: [DeviceID: [MessageID: ExtensionInstance]] = [:]
    var work: [() -> Void] = []
    var actionCounter = 0

    /// Messages sent and not yet delivered, oldest first.
    public internal(set) var pendingDeliveries: [Delivery] = []
    /// How the network treats messages; ideal unless set.
    public var network: NetworkProfile = .ideal
    /// The network's own generator: ids stay the same whatever the network does.
    var networkRandom: SeededGenerator
    /// What the network did so far, by kind.
    public internal(set) var networkEvents: [NetworkEvent: Int] = [:]
    /// Devices without a connection.
    public internal(set) var offlineDevices: Set<DeviceID> = []
    /// Messages sent while their sender was offline, waiting for it.
    public internal(set) var heldDeliveries: [Delivery] = []
    /// The world's time, in ticks.
    public internal(set) var now = 0
    /// Message identifiers each device has received: Messages keeps one of each.
    var receivedMessages: [DeviceID: Set<MessageID>] = [:]
    /// The newest message each device received of each session (to tell a stale copy).
    var newestReceived: [DeviceID: [SessionID: MessageID]] = [:]
    /// The last message the transport delivered.
    public internal(set) var lastDelivery: Delivery?
    /// How many of each callback the host has delivered to extensions.
    public internal(set) var deliveredCallbacks: [Callback: Int] = [:]
    /// Files present on each device, by file URL, with their sizes (for attachments
    /// and stickers).
    public var files: [DeviceID: [String: Int]] = [:]
    /// What else Messages checks of some of those files (readable, a sticker's pixels).
    public var fileAttributes: [DeviceID: [String: FileAttributes]] = [:]
    /// The largest size Messages offers a live bubble on each device
    /// (`contentSizeThatFits(_:)`); ``defaultLiveBubbleSpace`` where not set.
    public var liveBubbleSpace: [DeviceID: ContentSize] = [:]
    /// An iPhone's transcript column less the bubble's margins.
    public static let defaultLiveBubbleSpace = ContentSize(width: 300, height: 480)

    public init(seed: UInt64 = 0, urlPolicy: URLRules.Policy = .asShipped, makeExtension: @escaping Factory) {
        self.ids = SeededGenerator(seed: seed)
        self.networkRandom = SeededGenerator(seed: seed ^ 0x6E65_7477_6F72_6B21)
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
}
