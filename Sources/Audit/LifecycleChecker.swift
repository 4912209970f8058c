import Foundation
import MessagesModel
import Projections
import RecordedEvents

/// The Messages lifecycle as a state machine, checked per recording (one extension
/// instance), event by event. See `../shared/spec/MESSAGES.md`.
public struct LifecycleChecker {
    enum Phase: String { case inactive, becoming, active, resigning }

    struct Instance {
        var phase = Phase.inactive
        var style: PresentationStyle = .compact
        var pendingSelect: MessageID?
        var pendingTransition: PresentationStyle?
        var device: String
    }

    private var instances: [UUID: Instance] = [:]
    /// The message each device staged and has not yet sent or deleted.
    private var staged: [String: MessageID] = [:]
    public private(set) var findings: [Finding] = []

    public init() {}

    public mutating func check(_ e: ReplayEvent) {
        switch e.event {
        case .recordingStarted(let info):
            instances[e.stream] = Instance(device: info.device.name)
            if info.liveMessage != nil { instances[e.stream]!.style = .transcript }
        case .action(let record, let context):
            guard record.error == nil else { return }
            switch record.action {
            case .insert(let message): staged[context.device.name] = message.id
            case .insertText, .insertSticker, .insertAttachment: staged[context.device.name] = nil
            default: break
            }
        case .input(let action, let context):
            // A deleted staged message may still get its didCancelSending, right after.
            cancelable[context.device.name] = nil
            if case .deleteStaged = action {
                cancelable[context.device.name] = staged[context.device.name]
                staged[context.device.name] = nil
            }
        case .transcript(.sent(let item), let context):
            // A direct send (iOS 11's send variants) leaves the input field as it was.
            if let id = item.message?.id, id == staged[context.device.name] { staged[context.device.name] = nil }
        case .callback(let record, let context):
            callback(record, context: context, e)
        default:
            break
        }
    }

    /// The message a device just deleted from its input field.
    private var cancelable: [String: MessageID] = [:]

    private mutating func fail(_ e: ReplayEvent, _ device: String, _ rule: String, expected: String, found: String) {
        findings.append(Finding(.error, .lifecycle, position: e.position, device: device, rule: rule, expected: expected, found: found))
    }

    private mutating func callback(_ record: CallbackRecord, context: EventContext, _ e: ReplayEvent) {
        let device = context.device.name
        var instance = instances[e.stream] ?? Instance(device: device)
        let name = record.callback
        defer { instances[e.stream] = instance }

        if let select = instance.pendingSelect, name != .didSelect {
            fail(e, device, "didSelect-follows-willSelect", expected: "didSelect for \(select)", found: name.rawValue)
            instance.pendingSelect = nil
        }
        if let target = instance.pendingTransition, name != .didTransition {
            fail(e, device, "didTransition-follows-willTransition", expected: "didTransition(to: \(target))", found: name.rawValue)
            instance.pendingTransition = nil
        }
        if context.style == .transcript && Callback.suppressedInTranscript.contains(name) {
            fail(e, device, "none-in-transcript-style", expected: "no \(name.rawValue) in transcript style", found: name.rawValue)
        }
        if context.style != .transcript && Callback.transcriptOnly.contains(name) {
            fail(e, device, "only-in-transcript-style", expected: "\(name.rawValue) in transcript style only",
                 found: "\(name.rawValue) in \(context.style.description) style")
        }
        if let step = Self.activationCycle[name] {
            if instance.phase != step.from { fail(e, device, step.rule, expected: step.expected, found: instance.phase.rawValue) }
            instance.phase = step.to
        } else {
            // Everything else only while active: nothing but a new activation after didResignActive.
            if instance.phase != .active {
                fail(e, device, "\(name.rawValue)-only-while-active", expected: "an active extension", found: instance.phase.rawValue)
            }
            switch name {
            case .willSelect: instance.pendingSelect = record.message?.id
            case .didSelect: instance.pendingSelect = nil
            case .willTransition: instance.pendingTransition = record.style
            case .didTransition:
                instance.pendingTransition = nil
                if let style = record.style { instance.style = style }
            case .didStartSending, .didCancelSending:
                let id = record.message?.id
                let stagedHere = name == .didStartSending ? staged[device] : cancelable[device]
                if id == nil || stagedHere != id {
                    fail(e, device, "\(name.rawValue)-for-a-staged-message",
                         expected: stagedHere.map { "the staged message \($0)" } ?? "a message inserted and still staged",
                         found: id.map { "message \($0)" } ?? "no message")
                }
                if name == .didCancelSending { cancelable[device] = nil }
            default: break
            }
        }
    }

    /// The activation cycle: each of its callbacks comes in one phase and leads to the next.
    static let activationCycle: [Callback: (from: Phase, to: Phase, rule: String, expected: String)] = [
        .willBecomeActive: (.inactive, .becoming, "willBecomeActive-when-inactive", "an inactive extension"),
        .didBecomeActive: (.becoming, .active, "didBecomeActive-after-willBecomeActive", "willBecomeActive just before"),
        .willResignActive: (.active, .resigning, "willResignActive-when-active", "an active extension"),
        .didResignActive: (.resigning, .inactive, "didResignActive-after-willResignActive", "willResignActive just before"),
    ]

    /// Call after the last event: a started select or transition must finish.
    public mutating func finish() {
        for (_, instance) in instances where instance.pendingSelect != nil || instance.pendingTransition != nil {
            findings.append(Finding(.error, .lifecycle, position: nil, device: instance.device, rule: "unfinished-callback-pair",
                                    expected: "didSelect/didTransition", found: "the log ends"))
        }
    }
}
