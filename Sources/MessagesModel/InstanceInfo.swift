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
