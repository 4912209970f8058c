import Foundation
import MessagesModel
import Projections
import RecordedEvents

/// Cross-device consistency within a conversation: every message one device sent was
/// received unchanged by the others (or is reported as not yet delivered), nothing
/// arrived that nobody sent, and nothing arrived twice.
public struct ConsistencyChecker {
    struct Sent {
        var message: Message
        var device: String
        var position: Int64
        var shownCaption: String?
    }

    private var names: [String: [String: String]] = [:]     // device -> participant id -> name
    private var owners: [String: String] = [:]              // device -> its owner's name
    private var members: Set<String> = []
    private var sent: [MessageID: Sent] = [:]
    private var arrivals: [MessageID: [String: Int64]] = [:]
    /// The message each device's extension inserted and has not sent yet.
    private var inserted: [String: Message] = [:]
    private var orphanArrivals: [(message: Message, device: String, senderName: String?, position: Int64)] = []
    public private(set) var findings: [Finding] = []

    public init() {}

    private func shown(_ caption: String?, on device: String) -> String? {
        guard let caption else { return nil }
        var ids: [ParticipantID: String] = [:]
        for (key, name) in names[device] ?? [:] { if let uuid = UUID(hyphenated: key) { ids[ParticipantID(uuid)] = name } }
        return ParticipantNames.resolve(caption, names: ids)
    }

    public mutating func check(_ e: ReplayEvent) {
        switch e.event {
        case .recordingStarted(let info):
            let device = info.device.name
            members.insert(device)
            for (id, name) in info.names { names[device, default: [:]][id.uuid.uuidString] = name }
            owners[device] = info.names[info.localParticipant]
        case .action(let record, let context):
            if case .insert(let message) = record.action, record.error == nil { inserted[context.device.name] = message }
        case .transcript(.sent(.message(let message)), let context):
            let device = context.device.name
            // What is sent is what the extension put in the input field.
            if let staged = inserted[device], staged.id == message.id,
               staged.url != message.url || staged.session != message.session || staged.layout != message.layout {
                findings.append(Finding(.error, .consistency, position: e.position, game: message.session?.uuid.uuidString,
                                        device: device, rule: "sent-is-inserted", expected: "the message the extension inserted",
                                        found: "a sent message with a different url, session or layout"))
            }
            inserted[device] = nil
            // A send that failed went nowhere: nothing is owed to the other devices.
            if let error = message.error {
                findings.append(Finding(.warning, .network, position: e.position, game: message.session?.uuid.uuidString,
                                        device: device, rule: "send-failed", expected: "a message the network accepted",
                                        found: "the send failed (\(error.code.name): \(error.reason)); no device was sent it"))
                return
            }
            sent[message.id] = Sent(message: message, device: device, position: e.position,
                                    shownCaption: shown(message.caption, on: device))
        case .transcript(.arrived(.message(let message), let sender), let context):
            let device = context.device.name
            if let earlier = arrivals[message.id]?[device] {
                findings.append(Finding(.error, .consistency, position: e.position, game: message.session?.uuid.uuidString,
                                        device: device, rule: "no-duplicates", expected: "one arrival per device",
                                        found: "message \(message.id) arrived again (first at position \(earlier))"))
                return
            }
            arrivals[message.id, default: [:]][device] = e.position
            guard let original = sent[message.id] else {
                orphanArrivals.append((message, device, names[device]?[sender.uuid.uuidString], e.position))
                return
            }
            compare(original, message, device: device, position: e.position)
        default:
            break
        }
    }

    private mutating func compare(_ original: Sent, _ received: Message, device: String, position: Int64) {
        var differences: [String] = []
        if original.message.url != received.url { differences.append("url") }
        if original.message.session != received.session { differences.append("session") }
        if original.message.summaryText != received.summaryText { differences.append("summaryText") }
        if original.message.layout?.template.image != received.layout?.template.image { differences.append("image") }
        if original.shownCaption != shown(received.caption, on: device) { differences.append("caption") }
        guard !differences.isEmpty else { return }
        findings.append(Finding(.error, .consistency, position: position, game: received.session?.uuid.uuidString, device: device,
                                rule: "received-unchanged", expected: "the message device \(original.device) sent at position \(original.position)",
                                found: "a different \(differences.joined(separator: ", "))"))
    }

    /// Call after the last event of the conversation.
    public mutating func finish() {
        for orphan in orphanArrivals {
            // Only a sender whose own log is here can be held to having sent it.
            let senderDevice = owners.first { $0.value == orphan.senderName }?.key
            guard let senderDevice, members.contains(senderDevice) else { continue }
            findings.append(Finding(.error, .consistency, position: orphan.position, game: orphan.message.session?.uuid.uuidString,
                                    device: orphan.device, rule: "received-was-sent",
                                    expected: "a message device \(senderDevice) sent", found: "message \(orphan.message.id), never sent"))
        }
        for (id, original) in sent.sorted(by: { $0.value.position < $1.value.position }) {
            for device in members.sorted() where device != original.device && arrivals[id]?[device] == nil {
                // Lost, late or still on its way: the network's doing, not the log's.
                findings.append(Finding(.warning, .network, position: original.position, game: original.message.session?.uuid.uuidString,
                                        device: device, rule: "delivered", expected: "arrival on device \(device)",
                                        found: "not delivered (lost, or still on its way when the log ends)"))
            }
        }
    }
}
