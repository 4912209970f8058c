import EventStore
import Foundation
import MessagesModel
import RecordedEvents
import StoredEvents

/// Records everything that happens to extensions in a ``MessagesHost``: every
/// callback the host delivers and every action an extension takes (by wrapping each
/// extension), and every user action and transcript change (as the host's observer).
///
/// Events are buffered and written in one transaction by ``flush()``; an event is
/// stored (acknowledged) once `flush` returns. One stream per extension instance.
/// Each device signs its streams (see ``EventStore/append(_:expecting:signing:)``),
/// and may write to a database of its own, as phones would.
///
/// A real device records through the same calls: ``record(_:in:)`` from each
/// lifecycle callback, action and input of its message extension.
public final class Recorder: HostObserver {
    private let storeOf: (DeviceID) -> EventStore
    private let clock: any RecordingClock
    private var ids: SeededGenerator?
    private var buffer: [NewEvent] = []
    private var expectations: [UUID: ExpectedVersion] = [:]
    private var versions: [UUID: Int64] = [:]
    private var wrappers: [UUID: RecordingExtension] = [:]
    /// The device of every recording started, for signing.
    private var deviceOfStream: [UUID: DeviceID] = [:]
    /// Each recording's constants, from the recording.started event it recorded: what
    /// its compact payloads leave out.
    private var constantsOfStream: [UUID: StreamConstants] = [:]
    private var keys: [DeviceID: DeviceKey] = [:]
    private let makeKey: (DeviceID) -> DeviceKey?

    /// Callbacks recorded so far, by kind.
    public private(set) var recordedCallbacks: [Callback: Int] = [:]
    /// Events written by ``flush()`` so far (not counting retries of stored ones).
    public private(set) var writtenEvents = 0
    /// Called with every event as it is recorded (before it is written), with its stream:
    /// for a caller that folds what the log will hold, as the simulator's reports do.
    public var onRecord: ((RecordedEvent, UUID) -> Void)?

    /// - Parameters:
    ///   - seed: makes event ids deterministic (a seeded simulation); nil for random ids.
    ///   - keys: each device's signing key. A real device passes the key it keeps (the
    ///     keychain; ``KeyFolder`` on a computer); by default each device gets a fresh
    ///     random key that lives only as long as this recorder. Return nil to leave a
    ///     device's recordings unsigned.
    public convenience init(store: EventStore, clock: any RecordingClock = SystemClock(), seed: UInt64? = nil,
                            keys: ((DeviceID) -> DeviceKey?)? = nil) {
        self.init(storeOf: { _ in store }, clock: clock, seed: seed, keys: keys)
    }

    /// A recorder that writes each device's recordings to that device's own database.
    /// - Parameter storeOf: the database of a device; called once per device.
    public init(storeOf: @escaping (DeviceID) -> EventStore, clock: any RecordingClock = SystemClock(), seed: UInt64? = nil,
                keys: ((DeviceID) -> DeviceKey?)? = nil) {
        var stores: [DeviceID: EventStore] = [:]
        self.storeOf = { device in
            if let known = stores[device] { return known }
            let made = storeOf(device)
            stores[device] = made
            return made
        }
        self.clock = clock
        self.ids = seed.map { SeededGenerator(seed: $0 ^ 0x5EED_1D5) }
        makeKey = keys ?? { device in try? DeviceKey.random(device: device.name) }
    }

    /// The key that signs a device's tree heads.
    public func key(of device: DeviceID) -> DeviceKey? {
        if let known = keys[device] { return known }
        let made = makeKey(device)
        keys[device] = made
        return made
    }

    /// Wraps an extension factory (a host's) so every instance it makes is recorded.
    public func wrapping(_ factory: @escaping (InstanceInfo) -> any MessagesAppExtension) -> (InstanceInfo) -> any MessagesAppExtension {
        { [unowned self] info in
            let wrapper = RecordingExtension(inner: factory(info), info: info, recorder: self)
            wrappers[info.instanceID] = wrapper
            return wrapper
        }
    }

    /// Writes the buffered events in one transaction.
    @discardableResult
    public func flush() throws -> Int {
        guard !buffer.isEmpty else { return 0 }
        var signers: [UUID: DeviceKey] = [:]
        for event in buffer where signers[event.stream] == nil {
            if let device = deviceOfStream[event.stream], let key = key(of: device) { signers[event.stream] = key }
        }
        // One transaction per database: one in all, or one per device's own.
        var batches: [(store: EventStore, events: [NewEvent])] = []
        for event in buffer {
            let store = storeOf(deviceOfStream[event.stream] ?? DeviceID(""))
            if let index = batches.firstIndex(where: { $0.store === store }) {
                batches[index].events.append(event)
            } else {
                batches.append((store, [event]))
            }
        }
        var written = 0
        for batch in batches {
            let streams = Set(batch.events.map(\.stream))
            let results = try batch.store.append(batch.events, expecting: expectations.filter { streams.contains($0.key) }) {
                signers[$0]
            }
            written += results.filter(\.isNew).count
        }
        writtenEvents += written
        buffer.removeAll(keepingCapacity: true)
        expectations = [:]
        return written
    }

    /// Events waiting for ``flush()``.
    public var pendingCount: Int { buffer.count }

    /// Drops the buffered events if every recording they start is already stored:
    /// a seeded game that an earlier run (perhaps one that was killed later) already
    /// recorded. Returns whether it dropped them.
    public func discardIfAlreadyRecorded() throws -> Bool {
        let starting = expectations.filter { $0.value == .noStream }.map(\.key)
        guard !starting.isEmpty, try starting.allSatisfy({ stream in
            try storeOf(deviceOfStream[stream] ?? DeviceID("")).streamVersion(stream) > 0
        }) else { return false }
        buffer.removeAll(keepingCapacity: true)
        expectations = [:]
        return true
    }

    /// Records one event of an extension instance, to be written by the next
    /// ``flush()``. This is what a real device calls from its message extension:
    /// `.recordingStarted(info)` once when the instance starts, then each callback,
    /// action, user input, transcript change and screen with the instance's context.
    public func record(_ event: RecordedEvent, in instance: InstanceInfo) {
        deviceOfStream[instance.instanceID] = instance.device
        record(event, stream: instance.instanceID)
    }

    func record(_ event: RecordedEvent, stream: UUID) {
        let version = versions[stream] ?? 0
        if expectations[stream] == nil { expectations[stream] = version == 0 ? .noStream : .exactly(version) }
        versions[stream] = version + 1
        if case .callback(let record, _) = event { recordedCallbacks[record.callback, default: 0] += 1 }
        onRecord?(event, stream)
        let time = deviceTime(clock.now(), stream: stream)
        let id: UUID
        if ids != nil {
            id = .timeOrdered(at: time, using: &ids!)
        } else {
            var system = SystemRandomNumberGenerator()
            id = .timeOrdered(at: time, using: &system)
        }
        if case .recordingStarted(let info) = event { constantsOfStream[stream] = StreamConstants(info) }
        let stored = event.storedForm(in: constantsOfStream[stream])
        if case .recordingEnded = event { constantsOfStream[stream] = nil }
        buffer.append(NewEvent(id: id, stream: stream, type: event.type, typeVersion: stored.typeVersion,
                               recordedAt: time, payload: stored.payload, tags: event.catalogTags))
    }

    /// How far each device's clock is from the recorder's: a fixed offset, and a drift
    /// in parts per million of the time since the recorder's first reading. Phones' clocks
    /// disagree; a simulation sets this to record what they would.
    public var clockSkew: [DeviceID: ClockSkew] = [:]

    /// One device's clock against the true one.
    public struct ClockSkew: Hashable, Sendable {
        public var offsetMicroseconds: Int64
        /// Parts per million: 50 gains 50 µs a second.
        public var driftPPM: Int64

        public init(offsetMicroseconds: Int64, driftPPM: Int64) {
            self.offsetMicroseconds = offsetMicroseconds
            self.driftPPM = max(-500_000, driftPPM)
        }
    }

    private var firstReading: Int64?

    /// The time a device's clock shows when the recorder's shows `time`.
    private func deviceTime(_ time: Timestamp, stream: UUID) -> Timestamp {
        guard !clockSkew.isEmpty, let device = deviceOfStream[stream], let skew = clockSkew[device] else { return time }
        let micros = time.microsecondsSince1970
        let start = firstReading ?? micros
        firstReading = start
        let drift = (micros - start) / 1_000_000 * skew.driftPPM + (micros - start) % 1_000_000 * skew.driftPPM / 1_000_000
        return Timestamp(microsecondsSince1970: micros + skew.offsetMicroseconds + drift)
    }

    // MARK: HostObserver

    public func instanceStarted(_ info: InstanceInfo) {
        deviceOfStream[info.instanceID] = info.device
        record(.recordingStarted(info), stream: info.instanceID)
    }

    public func instanceEnded(_ info: InstanceInfo) {
        guard let wrapper = wrappers.removeValue(forKey: info.instanceID) else { return }
        record(.recordingEnded(wrapper.context), stream: info.instanceID)
    }

    public func userActed(_ action: UserAction, instance: InstanceInfo) {
        guard let wrapper = wrappers[instance.instanceID] else { return }
        record(.input(action, wrapper.context), stream: instance.instanceID)
    }

    public func transcriptChanged(_ change: TranscriptChange, instance: InstanceInfo) {
        guard let wrapper = wrappers[instance.instanceID] else { return }
        record(.transcript(change, wrapper.context), stream: instance.instanceID)
    }
}
