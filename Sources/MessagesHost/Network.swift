import Foundation
import MessagesModel

/// How the network between the devices treats messages: the chances of what a real
/// network does to one, drawn from a generator of the host's own (seeded, so a seed
/// replays the same run; the ideal network draws nothing, so runs made before this
/// model existed replay unchanged).
///
/// What each does, as Messages shows it:
/// - **latency**: a message can be delivered only after a number of the world's ticks
///   (a tick is one step of the people using the phones).
/// - **loss**: a message never reaches one device; nobody is told.
/// - **failure**: a send fails at once; the sender's bubble keeps the message with its
///   `error` set (code -1, "not delivered") and nothing is delivered.
/// - **duplication**: the transport hands a message over twice; Messages keeps one
///   (the copy has the same message identifier) and the extension sees nothing of it.
/// - **reordering**: a message is delivered before earlier ones to the same device.
/// - **offline**: each tick a device may lose its connection or get it back; while
///   offline nothing reaches it and what it sends waits, to leave when it is back.
/// - **clocks**: each phone's clock is off by up to ``clockOffsetSeconds`` and gains or
///   loses up to ``clockDriftPPM`` parts per million (the recorder stamps events with it).
public struct NetworkProfile: Hashable, Sendable {
    public var name: String
    /// The most ticks a message waits before it can be delivered.
    public var latency: Int
    public var loss: Double
    public var failure: Double
    public var duplication: Double
    public var reordering: Double
    /// Chance per tick that a device's connection goes (or comes back).
    public var offline: Double
    /// The most a phone's clock is off, either way.
    public var clockOffsetSeconds: Int64
    /// The most a phone's clock gains or loses, in parts per million.
    public var clockDriftPPM: Int64

    public init(name: String, latency: Int, loss: Double, failure: Double, duplication: Double, reordering: Double, offline: Double,
                clockOffsetSeconds: Int64 = 0, clockDriftPPM: Int64 = 0) {
        self.clockOffsetSeconds = max(0, clockOffsetSeconds)
        self.clockDriftPPM = min(500_000, max(0, clockDriftPPM))
        self.name = name
        self.latency = latency
        self.loss = loss
        self.failure = failure
        self.duplication = duplication
        self.reordering = reordering
        self.offline = offline
    }

    /// Every message arrives, at once, in order, once.
    public static let ideal = NetworkProfile(name: "ideal", latency: 0, loss: 0, failure: 0, duplication: 0, reordering: 0, offline: 0)
    /// A phone on a mobile network: short delays, now and then a message late, twice,
    /// out of order or lost, a send that fails, a phone without signal for a while.
    public static let phone = NetworkProfile(name: "phone", latency: 3, loss: 0.002, failure: 0.003, duplication: 0.02,
                                             reordering: 0.1, offline: 0.01, clockOffsetSeconds: 2, clockDriftPPM: 50)
    /// Everything that can go wrong, often.
    public static let hostile = NetworkProfile(name: "hostile", latency: 10, loss: 0.08, failure: 0.06, duplication: 0.15,
                                               reordering: 0.4, offline: 0.08, clockOffsetSeconds: 600, clockDriftPPM: 2_000)

    public static let all: [NetworkProfile] = [.ideal, .phone, .hostile]

    /// The profile called `name`, if any.
    public static func named(_ name: String) -> NetworkProfile? { all.first { $0.name == name } }
}

/// Something the network did to a message or a device.
public enum NetworkEvent: String, CaseIterable, Codable, Sendable {
    /// A message reached a device.
    case delivered
    /// A message waited for its latency before it could be delivered.
    case delayed
    /// A message never reached a device.
    case lost
    /// A send failed at once (the sender's message carries the error).
    case failed
    /// A copy of a message arrived and Messages dropped it.
    case duplicateDropped
    /// A copy of a game's message arrived late, after a newer message of its session had
    /// (a stale move), and Messages dropped it: it has the message.
    case staleCopyDropped
    /// A message was delivered before an earlier one to the same device.
    case reordered
    /// A message waited on its offline sender, and left when it was back.
    case queuedWhileOffline
    /// A device lost its connection.
    case wentOffline
    /// A device got its connection back.
    case cameOnline
}

extension MessagesHost {
    /// Whether something with chance `p` happens now (draws only when it can).
    func chance(_ p: Double) -> Bool {
        guard p > 0 else { return false }
        return Double(networkRandom.next() % 1_000_000) / 1_000_000 < p
    }

    func count(_ event: NetworkEvent) { networkEvents[event, default: 0] += 1 }

    /// Whether anything sent may still arrive: a delivery on its way, a send queued on a
    /// phone without signal, or a phone without signal (whose own sends wait on it).
    public var hasTrafficUnderway: Bool {
        !pendingDeliveries.isEmpty || !heldDeliveries.isEmpty || !offlineDevices.isEmpty
    }

    /// Whether `device` has a connection.
    public func isOnline(_ device: DeviceID) -> Bool { !offlineDevices.contains(device) }

    /// One tick of the world's time: messages come due, and devices may lose or regain
    /// their connection. A device coming back sends what waited on it.
    public func tick() {
        now += 1
        guard network.offline > 0 else { return }
        for device in deviceOrder where chance(network.offline) {
            setOnline(device, !isOnline(device))
        }
    }

    /// One tick of the world's time with every device's signal left as it is.
    public func advanceClock() { now += 1 }

    /// Takes `device` off the network or puts it back; back, it sends what waited.
    public func setOnline(_ device: DeviceID, _ online: Bool) {
        guard online != isOnline(device) else { return }
        if online {
            offlineDevices.remove(device)
            count(.cameOnline)
            let waiting = heldDeliveries.filter { $0.from == device }
            heldDeliveries.removeAll { $0.from == device }
            for delivery in waiting { route(delivery) }
        } else {
            offlineDevices.insert(device)
            count(.wentOffline)
        }
    }

    /// Puts a sent message on its way to one device, as the network treats it.
    func route(_ delivery: Delivery) {
        if !isOnline(delivery.from) {
            heldDeliveries.append(delivery)
            count(.queuedWhileOffline)
            return
        }
        if chance(network.loss) {
            count(.lost)
            return
        }
        var delivery = delivery
        if network.latency > 0 {
            delivery.due = now + Int(networkRandom.next() % UInt64(network.latency + 1))
            if delivery.due > now { count(.delayed) }
        }
        pendingDeliveries.append(delivery)
        if case .message = delivery.item, chance(network.duplication) {
            // The second copy may come much later than the first, after the next moves of
            // its game (a stale message arriving late).
            var copy = delivery
            copy.due += 1 + Int(networkRandom.next() % UInt64(4 * network.latency + 12))
            pendingDeliveries.append(copy)
        }
    }

    /// The index of the delivery to hand over next to `device` (or to anyone): the oldest
    /// one due, or, when the network reorders, another one due.
    func nextDeliveryIndex(to device: DeviceID?) -> Int? {
        let due = pendingDeliveries.indices.filter { index in
            let delivery = pendingDeliveries[index]
            return (device == nil || delivery.to == device) && delivery.due <= now && isOnline(delivery.to)
        }
        guard let oldest = due.first else { return nil }
        let sameDevice = due.filter { pendingDeliveries[$0].to == pendingDeliveries[oldest].to }
        if sameDevice.count > 1, chance(network.reordering) {
            count(.reordered)
            return sameDevice[1 + Int(networkRandom.next() % UInt64(sameDevice.count - 1))]
        }
        return oldest
    }
}
