import Foundation
import MessagesHost
import MessagesModel
import EventStore
import Games
import Recorder
import Simulation

/// Records `count` simulated games of every registered kind in turn into `store`, with a
/// fixed clock: the same seed gives the same log every time. Played by A and B alone
/// unless `groups` lets C and D join the games a group can play.
public func playMixedGames(_ count: Int, into store: EventStore, seed: UInt64, noise: Double = 0, keys: TestKeys = TestKeys(),
                           groups: Bool = false) throws {
    let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: seed, keys: keys.key),
                              games: .standard, seed: seed, noise: noise)
    if !groups { simulator.groupDevices = [] }
    for n in 0..<count { try simulator.play(simulator.mixedKind(n)) }
}

/// Random device keys for a test, made on first use and kept, so the test can trust
/// them (`trusted`) as an auditor who got them from the devices would.
public final class TestKeys: @unchecked Sendable {
    private var keys: [String: DeviceKey] = [:]
    private let lock = NSLock()

    public init() {}

    public func key(_ device: DeviceID) -> DeviceKey? { key(device.name) }

    public func key(_ device: String) -> DeviceKey {
        lock.withLock {
            if let known = keys[device] { return known }
            let made = try! DeviceKey.random(device: device)
            keys[device] = made
            return made
        }
    }

    /// Device name -> public key, as `verify --trust` takes them.
    public var trusted: [String: [UInt8]] { lock.withLock { keys.mapValues(\.publicKey) } }
}

/// Records `count` simulated games of one kind into a new log at `path`, with a fixed
/// clock, and closes it: the same seed gives the same log every time.
public func recordGames(_ kind: String, count: Int, at path: String, seed: UInt64, noise: Double = 0) throws {
    let simulator = Simulator(recorder: Recorder(store: try EventStore(path: path), clock: FixedClock(), seed: seed),
                              games: .standard, seed: seed, noise: noise)
    for _ in 0..<count { try simulator.play(kind) }
}

/// Records `count` mixed games as two phones would, each device into its own log
/// (`folder/A.sqlite`, `folder/B.sqlite`), signed with `keys`; returns the two paths.
@discardableResult
public func recordPhones(_ count: Int, in folder: String, seed: UInt64, keys: TestKeys,
                         devices: (String, String) = ("A", "B"), network: NetworkProfile = .ideal) throws -> (a: String, b: String) {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let a = folder + "/\(devices.0).sqlite", b = folder + "/\(devices.1).sqlite"
    let stores: [String: EventStore] = [devices.0: try EventStore(path: a), devices.1: try EventStore(path: b)]
    let simulator = Simulator(recorder: Recorder(storeOf: { stores[$0.name]! }, clock: FixedClock(), seed: seed, keys: keys.key),
                              games: .standard, seed: seed, devices: [(DeviceID(devices.0), "Owner of \(devices.0)"), (DeviceID(devices.1), "Owner of \(devices.1)")])
    simulator.network = network
    simulator.groupDevices = [] // two phones: group games are played by these two alone
    for n in 0..<count { try simulator.play(simulator.mixedKind(n)) }
    return (a, b)
}
