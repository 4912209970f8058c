import Foundation

/// Who an extension instance is: one extension on one device in one conversation.
public struct InstanceInfo: Hashable, Codable, Sendable {
    /// Unique per instance; a recording's stream.
    public var instanceID: UUID
    public var device: DeviceID
    public var conversation: ConversationID
    /// The extension's kind, e.g. `battleship`.
    public var kind: String
    public var localParticipant: ParticipantID
    public var remoteParticipants: [ParticipantID]
    /// Names this device shows for each participant identifier.
    public var names: [ParticipantID: String]
    /// Set for an instance drawing a live message in transcript style.
    public var liveMessage: MessageID?

    private enum CodingKeys: String, CodingKey {
        case instanceID, device, conversation, kind, localParticipant, remoteParticipants, names, liveMessage
    }

    // Names are stored as an object keyed by identifier, so the canonical (sorted-key)
    // JSON is the same every run; a dictionary with non-string keys would encode as an
    // array in hash order.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(instanceID, forKey: .instanceID)
        try c.encode(device, forKey: .device)
        try c.encode(conversation, forKey: .conversation)
        try c.encode(kind, forKey: .kind)
        try c.encode(localParticipant, forKey: .localParticipant)
        try c.encode(remoteParticipants, forKey: .remoteParticipants)
        try c.encode(Dictionary(uniqueKeysWithValues: names.map { ($0.key.uuid.uuidString, $0.value) }), forKey: .names)
        try c.encodeIfPresent(liveMessage, forKey: .liveMessage)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        instanceID = try c.decode(UUID.self, forKey: .instanceID)
        device = try c.decode(DeviceID.self, forKey: .device)
        conversation = try c.decode(ConversationID.self, forKey: .conversation)
        kind = try c.decode(String.self, forKey: .kind)
        localParticipant = try c.decode(ParticipantID.self, forKey: .localParticipant)
        remoteParticipants = try c.decode([ParticipantID].self, forKey: .remoteParticipants)
        var names: [ParticipantID: String] = [:]
        for (key, name) in try c.decode([String: String].self, forKey: .names) {
            guard let uuid = UUID(uuidString: key) else {
                throw DecodingError.dataCorruptedError(forKey: .names, in: c, debugDescription: "'\(key)' is not a UUID")
            }
            names[ParticipantID(uuid)] = name
        }
        self.names = names
        liveMessage = try c.decodeIfPresent(MessageID.self, forKey: .liveMessage)
    }

    public init(instanceID: UUID, device: DeviceID, conversation: ConversationID, kind: String,
                localParticipant: ParticipantID, remoteParticipants: [ParticipantID],
                names: [ParticipantID: String], liveMessage: MessageID? = nil) {
        self.instanceID = instanceID
        self.device = device
        self.conversation = conversation
        self.kind = kind
        self.localParticipant = localParticipant
        self.remoteParticipants = remoteParticipants
        self.names = names
        self.liveMessage = liveMessage
    }
}

/// A change to a device's transcript or input field that no callback reports.
public enum TranscriptChange: Hashable, Codable, Sendable {
    /// The user sent the staged item; it is now at the bottom of the transcript.
    case sent(Item)
    /// An item sent by `sender` (as this device knows them) arrived.
    case arrived(Item, sender: ParticipantID)
}
