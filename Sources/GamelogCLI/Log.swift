import StoredEvents
import ArgumentParser
import EventStore
import Foundation
import Projections
import MessagesModel
import RecordedEvents
import Recorder
import Replay

struct Log: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "log", abstract: "List the recorded events, one line each.")

    @OptionGroup var options: GlobalOptions

    @Option(help: "Only events of this device (e.g. A).") var device: String?
    @Option(help: "Only events whose type starts with this (e.g. callback, callback.didReceive, input).") var kind: String?
    @Option(help: "Only events of this game (or conversation): an id or a unique prefix, as `gamelog games` lists.") var game: String?
    @Option(help: "Only events at or after this time (ISO 8601, or microseconds since 1970).") var since: String?
    @Option(help: "Only events at or before this time.") var until: String?
    @Option(help: "At most this many events.") var limit: Int?
    @Option(name: .customLong("as"),
            help: "Whose view: a device (its own events in full, other devices' as 'device X acted'), or auditor (everything, the default).")
    var perspective: String?
    @Flag(help: "Print one JSON object per line.") var json = false
    @Flag(help: "After listing, keep listing the events appended to the log, as they come (Ctrl-C ends; with --limit, after that many).")
    var follow = false
    @Flag(help: "With --as DEVICE, show the messages of a game this gamelog does not register whole (by default what they carry is left out and the command fails: no view of them can be computed).")
    var unredacted = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, not \(limit).") }
    }

    func run() async throws {
        let store = try await options.openReader()
        var streams: Set<UUID>? = nil
        var positions: Set<Int64>? = nil
        var devices: [DeviceID]
        if let game {
            let opened = try OpenedGame(store: store, id: game)
            streams = Set(opened.replayer.events.map(\.stream))
            // A game's own events: those of its session, not another game's played beside it.
            if let session = opened.session { positions = opened.replayer.positions(ofGame: session) }
            devices = opened.replayer.devices
        } else {
            devices = try recordedDevices(store)
        }
        let only = try device.map { name in
            guard let match = devices.first(where: { $0.name.lowercased() == name.lowercased() }) else {
                throw ValidationError("--device '\(name)' recorded nothing here; the devices are \(devices.map(\.name).joined(separator: ", ")).")
            }
            return match
        }
        let seenAs = try perspective.map { try parsePerspective($0, devices: devices) } ?? .auditor
        if let kind {
            // A kind that no event type has is a typo, not an empty answer.
            let types = try store.eventTypes()
            guard types.contains(where: { $0 == kind || $0.hasPrefix(kind + ".") }) else {
                let families = Set(types.map { String($0.prefix { $0 != "." }) }).sorted()
                let near = Spelling.nearest(kind, in: families + types)
                throw ValidationError("--kind '\(kind)' matches no event type in this log; the kinds are \(families.joined(separator: ", "))"
                                      + (near.isEmpty ? "" : " (did you mean \(near.joined(separator: " or "))?)") + ".")
            }
        }
        let query = EventQuery(streams: streams, since: try since.map(parseTime), until: try until.map(parseTime))
        // Each recording's names, so captions read "Alice placed...", as `state` shows them.
        let namesOf = try recordings(store, streams: streams).mapValues(\.names)
        var shown = 0, damaged = 0
        // Under a device's view: each conversation as that device has seen it so far.
        var views = DeviceViews(seenAs, unredacted: unredacted)
        var decoder = StreamDecoder(store: store)
        // Enough listed: the scan stops there (it read the whole log before).
        struct Enough: Error {}
        // A closure, not a local function: the compiler then sees that it counts.
        let listDamaged = { (problem: EventStoreError) in
            damaged += 1
            if json {
                print(#"{"damaged":true,"position":\#(problem.position ?? 0)}"#)
            } else {
                print("\(String(problem.position ?? 0).leftPad(7))  damaged: \(problem)")
            }
        }
        func list(_ event: StoredEvent) throws {
            if let limit, shown >= limit { throw Enough() }
            let wanted = (positions?.contains(event.position) ?? true) && (kind.map { event.type == $0 || event.type.hasPrefix($0 + ".") } ?? true)
            // A device's view folds all of that device's events, listed or not, to know what its owner may see.
            if !wanted, case .auditor = seenAs { return }
            // Under --json the payload is printed whole too: a compact one is expanded once for both.
            var full = event.payload
            var decoded: RecordedEvent?
            if json, let both = try? decoder.decodeKeepingFullPayload(stream: event.stream, type: event.type,
                                                                     typeVersion: event.typeVersion, payload: event.payload) {
                (decoded, full) = (both.event, both.full)
            } else {
                decoded = try? decoder.decode(stream: event.stream, type: event.type, typeVersion: event.typeVersion, payload: event.payload)
            }
            let context = decoded?.context
            let deviceName: String?
            if case .recordingStarted(let info)? = decoded {
                deviceName = info.device.name
            } else {
                deviceName = context?.device.name
            }
            if let only, deviceName != only.name { return }
            if case .device(let viewer) = seenAs {
                // Another device's events are not there for this device: neither their content nor how many.
                guard deviceName == viewer.name else { return }
                // Every message the event carries, as the game's player view shows it to this device's owner.
                if let recorded = decoded {
                    let seen = views.view(recorded, stored: event)
                    guard wanted else { return }
                    if seen != recorded {
                        decoded = seen
                        full = seen.payload()
                    }
                }
            }
            guard wanted else { return }
            shown += 1
            if json {
                // Written by hand in the one JSON style (keys sorted): a payload is
                // rewritten in one pass, with the reference for anything unusual.
                let payload = JSONStyleRewriter.rewrite(full).map { String(decoding: $0, as: UTF8.self) }
                    ?? ((try? JSONStyle.normalize(json: Data(full))).map { JSONStyle.text($0) } ?? "null")
                print(#"{"id":"\#(event.id.uuidString.lowercased())","payload":\#(payload),"position":\#(event.position),"recordedAt":"\#(event.recordedAt)","stream":"\#(event.stream.uuidString.lowercased())","streamVersion":\#(event.streamVersion),"type":"\#(event.type)","typeVersion":\#(event.typeVersion)}"#)
            } else {
                let style = context.map { "\($0.style)\($0.isActive ? "" : " inactive")" } ?? ""
                print("\(String(event.position).leftPad(7))  \(event.recordedAt)  \((deviceName ?? "-").leftPad(2))  \(event.type.rightPad(31)) \(style.rightPad(20)) \(decoded.map { ParticipantNames.resolve(summary($0), names: namesOf[event.stream] ?? [:]) } ?? "(undecodable payload)")")
            }
        }
        // Under --follow the first pass goes to the log's end as it is now; later passes list what was appended since.
        var through = follow ? try store.lastPosition() : Int64.max
        var scope = query
        if follow { scope.positions = 1...max(through, 1) }
        do { try store.scan(scope, skippingDamaged: { listDamaged($0) }) { event in try list(event) } } catch is Enough {}
        if damaged > 0 {
            Terminal.standardError("\(damaged) damaged events were listed in place. `gamelog verify` says what is wrong; `gamelog export --skip-damaged` salvages the rest.")
            throw ExitCode.failure
        }
        try views.finish(command: "log --as \(perspective ?? "DEVICE")")
        if follow {
            fflush(nil)
            while limit.map({ shown < $0 }) ?? true {
                try await Task.sleep(for: .milliseconds(300))
                // A file is opened again each time, so another process's appends are read
                // from it as it is now; a shared store's reader reads the store as it is now.
                let now = try (store as? EventStore).map { try EventStore(path: $0.path, access: .readOnly) } ?? store
                let last = try now.lastPosition()
                guard last > through else { continue }
                var next = query
                next.positions = (through + 1)...last
                through = last
                do { try now.scan(next, skippingDamaged: { listDamaged($0) }) { event in try list(event) } } catch is Enough {}
                fflush(nil)
            }
        }
    }

    private func summary(_ event: RecordedEvent) -> String {
        switch event {
        case .recordingStarted(let info): return "\(info.kind) on \(info.device) in \(info.conversation.uuid.uuidString.prefix(8).lowercased())"
        case .recordingEnded: return ""
        case .input(let action, _): return action.description
        case .callback(let record, _):
            if let message = record.message { return message.caption ?? message.url ?? "" }
            if let style = record.style { return "to \(style)" }
            if let offered = record.availableSize {
                return "offered \(offered), takes \(record.contentSize.map(\.description) ?? "nothing")"
            }
            return record.conversation?.selectedMessage.map { "selected: \($0.caption ?? "")" } ?? ""
        case .action(let record, _):
            let outcome = record.error.map { " → error \($0.code.rawValue): \($0.reason)" } ?? ""
            switch record.action {
            case .insert(let m), .send(let m): return "\(m.url ?? "no url")\(outcome)"
            case .requestPresentationStyle(let s): return "\(s)"
            default: return outcome
            }
        case .transcript(.sent(let item), _), .transcript(.arrived(let item, _), _):
            return item.message.map { $0.caption ?? "" } ?? "\(item)"
        case .screen(let screen, _): return ([screen.name] + screen.labels).joined(separator: " · ")
        }
    }
}

/// Each recording (stream) of the log, or of `streams`, with who and where it is.
func recordings(_ store: any EventLogReader, streams: Set<UUID>? = nil) throws -> [UUID: InstanceInfo] {
    var out: [UUID: InstanceInfo] = [:]
    // A recording starts with its recording.started event: for a few streams, their first
    // events (through the stream index) cost less than that type's events in the whole log;
    // for many, one read of that type's events among them costs less than a read each
    // (a shared store answers each read over the network).
    let started: Set<String> = [RecordedEvent.TypeName.recordingStarted]
    let queries = streams.map { $0.count <= 8 ? $0.map { EventQuery(stream: $0, limit: 1) } : [EventQuery(streams: $0, types: started)] }
        ?? [EventQuery(types: started)]
    for query in queries { try store.scan(query) { stored in
        if case .recordingStarted(let info)? = try? RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion,
                                                                          payload: stored.payload) {
            out[stored.stream] = info
        }
    } }
    return out
}

/// The devices whose recordings a log holds, by name.
func recordedDevices(_ store: any EventLogReader) throws -> [DeviceID] {
    Set(try recordings(store).values.map(\.device)).sorted()
}

/// A time as the user gives it: microseconds since 1970, or ISO 8601 with up to six
/// fraction digits, read exactly (the times gamelog prints read back to the same
/// microsecond: Foundation's ISO 8601 reader keeps milliseconds only).
func parseTime(_ text: String) throws -> Timestamp {
    if let micros = Int64(text) { return Timestamp(microsecondsSince1970: micros) }
    let failure = ValidationError("'\(text)' is not a time: use ISO 8601 (2026-11-22T10:00:00Z, up to six fraction digits) or microseconds since 1970.")
    var whole = text, micros: Int64 = 0
    if let dot = text.firstIndex(of: ".") {
        let digits = text[text.index(after: dot)...].prefix { $0.isASCII && $0.isNumber }
        guard (1...6).contains(digits.count), let value = Int64(digits) else { throw failure }
        var scale: Int64 = 1
        for _ in digits.count..<6 { scale *= 10 }
        micros = value * scale
        whole = String(text[..<dot]) + String(text[digits.endIndex...])
    }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime]
    guard let date = formatter.date(from: whole) else { throw failure }
    return Timestamp(microsecondsSince1970: Int64(date.timeIntervalSince1970.rounded()) * 1_000_000 + micros)
}

extension String {
    func leftPad(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    /// Spaces after, up to `width`; a longer text is kept whole, never cut.
    func rightPad(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
