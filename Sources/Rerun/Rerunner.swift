import EventLog
import Foundation
import GameKit
import MessagesModel
import Projections
import RecordedEvents
import Replay

/// What re-running one recording with the current code found.
public struct RerunResult: Hashable, Codable, Sendable {
    public enum Outcome: String, Hashable, Codable, Sendable {
        /// Every action and screen the extension produces now is the one recorded.
        case matched
        /// They part at ``RerunResult/divergence``.
        case diverged
        /// No registered game carries this recording's extension: not checked.
        case skipped
    }

    public var stream: UUID
    public var device: String
    public var kind: String
    public var conversation: UUID?
    public var outcome: Outcome
    /// Events of the recording fed or compared.
    public var events: Int
    public var divergence: Divergence?
}

extension RerunResult {
    /// The order reports list re-runs in, whichever process or lane made them: by the
    /// position of the divergence (none first), then by recording.
    public static func inReportOrder(_ a: RerunResult, _ b: RerunResult) -> Bool {
        let (first, second) = (a.divergence?.position ?? 0, b.divergence?.position ?? 0)
        return first != second ? first < second : a.stream.precedes(b.stream)
    }
}

/// Where a re-run parted from the recording.
public struct Divergence: Hashable, Codable, Sendable, CustomStringConvertible {
    /// The global position of the recorded event at which it parted (for an output
    /// the code no longer produces, that output's event; for one it now produces too,
    /// the input after which it appeared).
    public var position: Int64
    /// What was recorded there, as canonical JSON (nil: nothing was).
    public var recorded: String?
    /// What the extension produces now (nil: nothing).
    public var now: String?

    public var description: String {
        "at position \(position): recorded \(recorded ?? "nothing"), now \(now ?? "nothing")"
    }

    /// The two sides line by line: `-` recorded, `+` now.
    public var diff: [String] {
        let a = Self.lines(recorded), b = Self.lines(now)
        return a.filter { !b.contains($0) }.map { "- " + $0 } + b.filter { !a.contains($0) }.map { "+ " + $0 }
    }

    static func lines(_ json: String?) -> [String] {
        guard let json, let object = try? JSONValue(parsing: Array(json.utf8)) else { return json.map { [$0] } ?? [] }
        var out: [String] = []
        func walk(_ value: JSONValue, _ path: String) {
            switch value {
            case .object(let dictionary):
                for key in dictionary.keys.sorted() { walk(dictionary[key]!, path.isEmpty ? key : "\(path).\(key)") }
            case .array(let array):
                for (index, item) in array.enumerated() { walk(item, "\(path)[\(index)]") }
            case .string(let text):
                out.append("\(path): \(text)")
            default:
                out.append("\(path): \(JSONStyle.text(value))")
            }
        }
        walk(object, "")
        return out
    }
}

/// Re-executes recordings against the current code, as rr replays a process: a fresh
/// instance of the recording's extension gets, in recorded order, what the host gave
/// it (callbacks with their conversation, message and style, the user's touches, the
/// identifiers it was handed), and everything it does (actions, screens) is compared
/// with what was recorded.
public struct Rerunner: Sendable {
    public var games: GameRegistry

    public init(games: GameRegistry) { self.games = games }

    /// Re-runs one recording: its events in stream order.
    public func rerun(_ events: [ReplayEvent]) -> RerunResult {
        guard case .recordingStarted(let info)? = events.first?.event else {
            return RerunResult(stream: events.first?.stream ?? UUID(), device: events.first?.device?.name ?? "?", kind: "?",
                               outcome: .skipped, events: 0)
        }
        var result = RerunResult(stream: events[0].stream, device: info.device.name, kind: info.kind,
                                 conversation: info.conversation.uuid, outcome: .matched, events: events.count)
        guard let plugin = games.plugin(for: info.kind) else {
            result.outcome = .skipped
            return result
        }
        let host = RerunHost(info: info, events: events)
        let ext = plugin.makeExtension()
        ext.attach(to: host)
        var lastScreen: Screen?
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func json(_ output: RerunHost.Output) -> String {
            switch output {
            case .action(let action): return String(decoding: (try? encoder.encode(["action": action])) ?? Data(), as: UTF8.self)
            case .screen(let screen): return String(decoding: (try? encoder.encode(["screen": screen])) ?? Data(), as: UTF8.self)
            }
        }
        func noteScreen() {
            let now = ext.screen
            if now != lastScreen {
                lastScreen = now
                host.produced.append(.screen(now))
            }
        }
        func diverge(_ position: Int64, recorded: String?, now: String?) -> RerunResult {
            result.outcome = .diverged
            result.divergence = Divergence(position: position, recorded: recorded, now: now)
            return result
        }
        var lastInput: Int64 = events[0].position
        for (index, e) in events.enumerated() {
            host.cursor = index
            switch e.event {
            case .callback(let record, let context):
                // An input: whatever the code produced before it must all have been recorded.
                if let extra = host.produced.first { return diverge(lastInput, recorded: nil, now: json(extra)) }
                lastInput = e.position
                host.sync(context, record)
                if record.callback == .contentSizeThatFits {
                    // A question with an answer: today's code must answer as recorded.
                    let answer = record.availableSize.map(ext.contentSizeThatFits)
                    if answer != record.contentSize {
                        func sized(_ size: ContentSize) -> String {
                            String(decoding: (try? encoder.encode(["contentSize": size])) ?? Data(), as: UTF8.self)
                        }
                        return diverge(e.position, recorded: record.contentSize.map(sized), now: answer.map(sized))
                    }
                } else {
                    deliver(record, to: ext)
                }
                noteScreen()
            case .input(.touch(let touch), let context):
                if let extra = host.produced.first { return diverge(lastInput, recorded: nil, now: json(extra)) }
                lastInput = e.position
                host.sync(context, nil)
                ext.handle(touch)
                noteScreen()
            case .action(let record, _):
                let recorded = RerunHost.Output.action(record.action)
                guard !host.produced.isEmpty else { return diverge(e.position, recorded: json(recorded), now: nil) }
                let now = host.produced.removeFirst()
                if now != recorded { return diverge(e.position, recorded: json(recorded), now: json(now)) }
            case .screen(let screen, _):
                let recorded = RerunHost.Output.screen(screen)
                guard !host.produced.isEmpty else { return diverge(e.position, recorded: json(recorded), now: nil) }
                let now = host.produced.removeFirst()
                if now != recorded { return diverge(e.position, recorded: json(recorded), now: json(now)) }
            default:
                break
            }
        }
        if let extra = host.produced.first { return diverge(lastInput, recorded: nil, now: json(extra)) }
        return result
    }

    /// Re-runs each recording among a conversation's events.
    public func rerun(recordingsOf events: [ReplayEvent]) -> [RerunResult] {
        Dictionary(grouping: events, by: \.stream).values.map { rerun($0.sorted { $0.position < $1.position }) }
    }

    /// Re-runs every recording of `store` (or of the given conversations), one
    /// conversation in memory at a time.
    /// - Parameter progress: called with (events done, events in all).
    public func rerun(store: any EventLogReader, conversations only: Set<ConversationID>? = nil,
                      progress: ((Int, Int) -> Void)? = nil) throws -> [RerunResult] {
        let index = try GameIndex(store: store)
        let conversations = try only.map { $0.sorted { $0.uuid.precedes($1.uuid) } } ?? index.conversations()
        // Counting the whole log would cost more than re-running one game.
        let total: Int? = only == nil ? Int(try store.count().events) : nil
        var done = 0, results: [RerunResult] = []
        for conversation in conversations {
            let events = try Replayer.load(from: store, streams: try index.streams(of: conversation))
            results += rerun(recordingsOf: events)
            done += events.count
            progress?(done, total ?? done)
        }
        return results.sorted(by: RerunResult.inReportOrder)
    }

    private func deliver(_ record: CallbackRecord, to ext: any MessagesAppExtension) {
        let conversation = record.conversation ?? Conversation(id: ConversationID(UUID()), localParticipantIdentifier: ParticipantID(UUID()),
                                                                remoteParticipantIdentifiers: [])
        switch record.callback {
        case .willBecomeActive: ext.willBecomeActive(with: conversation)
        case .didBecomeActive: ext.didBecomeActive(with: conversation)
        case .willResignActive: ext.willResignActive(with: conversation)
        case .didResignActive: ext.didResignActive(with: conversation)
        case .willSelect: if let m = record.message { ext.willSelect(m, conversation: conversation) }
        case .didSelect: if let m = record.message { ext.didSelect(m, conversation: conversation) }
        case .didReceive: if let m = record.message { ext.didReceive(m, conversation: conversation) }
        case .didStartSending: if let m = record.message { ext.didStartSending(m, conversation: conversation) }
        case .didCancelSending: if let m = record.message { ext.didCancelSending(m, conversation: conversation) }
        case .willTransition: if let s = record.style { ext.willTransition(to: s) }
        case .didTransition: if let s = record.style { ext.didTransition(to: s) }
        case .contentSizeThatFits: break // a question with an answer: `rerun(_:)` asks it and compares
        }
    }
}

/// The host a re-run extension talks to: it answers from the recording (style, the
/// active conversation, the identifiers and completion results the real host gave)
/// and collects what the extension does.
final class RerunHost: ExtensionHost {
    enum Output: Hashable {
        case action(ExtensionAction)
        case screen(Screen)
    }

    let info: InstanceInfo
    let events: [ReplayEvent]
    /// The index of the event being fed.
    var cursor = 0
    var produced: [Output] = []
    private var style: PresentationStyle
    private var conversation: Conversation
    private var isActive = false
    /// Recorded actions already answered (ids handed out, completions given).
    private var usedIdentities = 0
    private var usedCompletions = 0

    init(info: InstanceInfo, events: [ReplayEvent]) {
        self.info = info
        self.events = events
        style = info.liveMessage == nil ? .compact : .transcript
        conversation = Conversation(id: info.conversation, localParticipantIdentifier: info.localParticipant,
                                    remoteParticipantIdentifiers: info.remoteParticipants)
    }

    /// Takes the state the recording says the extension saw.
    func sync(_ context: EventContext, _ record: CallbackRecord?) {
        style = context.style
        isActive = context.isActive
        if let given = record?.conversation { conversation = given }
        if record?.callback == .didSelect, let message = record?.message { conversation.selectedMessage = message }
        if context.selectedMessage == nil { conversation.selectedMessage = nil }
    }

    var presentationStyle: PresentationStyle { style }
    var activeConversation: Conversation? { isActive ? conversation : nil }

    /// The recorded messages the extension made, in order: the identities to hand out.
    private lazy var recordedMessages: [Message] = events.compactMap { e in
        guard case .action(let record, _) = e.event else { return nil }
        switch record.action {
        case .insert(let m), .send(let m): return m
        default: return nil
        }
    }

    /// The recorded actions that took a completion, in order.
    private lazy var recordedCompletions: [MessagesError?] = events.compactMap { e in
        guard case .action(let record, _) = e.event else { return nil }
        switch record.action {
        case .requestPresentationStyle, .dismiss: return nil
        default: return .some(record.error)
        }
    }

    func makeSession() -> SessionID {
        recordedMessages.dropFirst(usedIdentities).first?.session ?? SessionID(UUID())
    }

    func makeMessage(session: SessionID?) -> Message {
        let id = usedIdentities < recordedMessages.count ? recordedMessages[usedIdentities].id : MessageID(UUID())
        usedIdentities += 1
        return Message(id: id, session: session)
    }

    func requestPresentationStyle(_ style: PresentationStyle) { produced.append(.action(.requestPresentationStyle(style))) }
    func dismiss() { produced.append(.action(.dismiss)) }

    func deliver(_ item: Item, _ delivery: Delivery, completion: ((MessagesError?) -> Void)?) {
        produced.append(.action(ExtensionAction(item, delivery)))
        let error = usedCompletions < recordedCompletions.count ? recordedCompletions[usedCompletions] : nil
        usedCompletions += 1
        completion?(error)
    }
}
