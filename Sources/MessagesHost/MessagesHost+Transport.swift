import Foundation
import MessagesModel

// Messages on their way between devices.
extension MessagesHost {
    /// Delivers the oldest pending message for `device` (or for anyone).
    @discardableResult
    /// On a network that delays, reorders or takes devices offline, "oldest" is the
    /// oldest one due to a device with a connection, and may be another due one.
    public func deliverNext(to device: DeviceID? = nil) throws(HostError) -> Delivery {
        guard let index = nextDeliveryIndex(to: device) else { throw .noSuchDelivery }
        let delivery = pendingDeliveries.remove(at: index)
        arrive(delivery)
        drain()
        return delivery
    }

    /// Delivers every pending message to devices with a connection, oldest first, as if
    /// enough time passed for each to come due.
    public func deliverAll() {
        while let index = pendingDeliveries.firstIndex(where: { isOnline($0.to) }) {
            arrive(pendingDeliveries.remove(at: index))
            drain()
        }
    }

    /// Whether a delivery to `device` (or to anyone) can be made now.
    public func canDeliver(to device: DeviceID? = nil) -> Bool {
        pendingDeliveries.contains { (device == nil || $0.to == device) && $0.due <= now && isOnline($0.to) }
    }

    func arrive(_ delivery: Delivery) {
        // An arrival is an interaction of its own: a touch before it is no longer recent
        // (iOS 11's send needs one in the same interaction).
        actionCounter += 1
        // The transport may hand a message over twice; Messages keeps one.
        if case .message(let message) = delivery.item, !receivedMessages[delivery.to, default: []].insert(message.id).inserted {
            count(.duplicateDropped)
            if let session = message.session, let newest = newestReceived[delivery.to]?[session], newest != message.id {
                count(.staleCopyDropped)
            }
            return
        }
        if case .message(let message) = delivery.item, let session = message.session {
            newestReceived[delivery.to, default: [:]][session] = message.id
        }
        count(.delivered)
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
