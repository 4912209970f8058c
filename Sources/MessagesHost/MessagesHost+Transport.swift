import Foundation
import MessagesModel

// Messages on their way between devices.
extension MessagesHost {
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

    func arrive(_ delivery: Delivery) {
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
