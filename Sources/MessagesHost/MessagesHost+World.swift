import MessagesModel

/// The simulated host is the world simulated players read, and carries out their steps.
extension MessagesHost: MessagesWorld {
    /// Devices with a connection and a message due to them (on its way is not enough:
    /// a delayed message, or one to a device without signal, waits).
    public var devicesAwaitingDelivery: [DeviceID] {
        pendingDeliveries.filter { $0.due <= now && isOnline($0.to) }.map(\.to)
    }

    public func shownExtension(on device: DeviceID) -> ShownExtension? {
        activeInstance(on: device).map { ShownExtension(style: $0.style, selectedMessage: $0.selectedMessage, screen: $0.extension.screen) }
    }

    /// Carries out a step; returns false (and does nothing) if it is not possible now.
    @discardableResult
    public func run(_ step: PlayerStep, on device: DeviceID) -> Bool {
        do {
            switch step {
            case .act(let action):
                try perform(action, on: device)
            case .tapLatestMessage:
                guard let conversation = currentConversation(of: device),
                      let message = latestMessage(on: device, in: conversation) else { return false }
                try perform(.tapMessage(message.id), on: device)
            case .deliver:
                try deliverNext(to: device)
            case .wait:
                // Nothing is carried out: the caller lets the world's time move on.
                return false
            }
            return true
        } catch {
            return false
        }
    }
}
