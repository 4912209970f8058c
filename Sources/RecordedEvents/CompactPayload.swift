import Foundation
import MessagesModel

/// What every event of one recording shares, from its `recording.started` event: the
/// device and conversation of every event's context, and the conversation's participants.
/// Type version 2 payloads leave these out or refer to them, so reading one needs them.
public struct StreamConstants: Hashable, Sendable {
    /// Everything, with the spellings made from it, in one immutable box: an event's
    /// decoding copies the constants of its recording (a full replay, once an event),
    /// and a copy of one reference is one retain where the fields and their spellings
    /// were five.
    private final class Storage: Sendable {
        let device: DeviceID
        let conversation: ConversationID
        let localParticipant: ParticipantID
        let remoteParticipants: [ParticipantID]
        /// `"$c"`, `"$l"`, `"$r0"`, ... and the UUID text each stands for, as v1 spells it.
        let references: [(name: [UInt8], uuid: [UInt8])]
        /// `"conversation":"…","device":"…"`: the context fields v2 leaves out, as v1 writes them.
        let contextFields: [UInt8]

        init(device: DeviceID, conversation: ConversationID, localParticipant: ParticipantID, remoteParticipants: [ParticipantID]) {
            self.device = device
            self.conversation = conversation
            self.localParticipant = localParticipant
            self.remoteParticipants = remoteParticipants
            // Made with the values, so a changed value always comes with its spellings
            // (the compact layout's readers and writers use them). Each reader makes them
            // for every recording it meets (a full replay's decoding threads, a check, the
            // summaries): the names shared and each spelling one array, not a string, an
            // array of it and the concatenations' (25 allocations a recording before).
            var references: [(name: [UInt8], uuid: [UInt8])] = []
            references.reserveCapacity(2 + remoteParticipants.count)
            references.append((Self.conversationName, conversation.uuid.hyphenatedUTF8))
            references.append((Self.localName, localParticipant.uuid.hyphenatedUTF8))
            for (index, remote) in remoteParticipants.enumerated() {
                let name = index < Self.remoteNames.count ? Self.remoteNames[index] : Array("$r\(index)".utf8)
                references.append((name, remote.uuid.hyphenatedUTF8))
            }
            self.references = references
            var context: [UInt8] = []
            context.reserveCapacity(70 + device.name.utf8.count)
            context.append(contentsOf: #""conversation":""#.utf8)
            context.append(contentsOf: references[0].uuid)
            context.append(contentsOf: #"","device":"#.utf8)
            StreamConstants.appendJSONString(device.name, to: &context)
            contextFields = context
        }

        static let conversationName = Array("$c".utf8), localName = Array("$l".utf8)
        static let remoteNames = (0..<8).map { Array("$r\($0)".utf8) }
    }

    private var storage: Storage

    public var device: DeviceID {
        get { storage.device }
        set { remake(device: newValue) }
    }
    public var conversation: ConversationID {
        get { storage.conversation }
        set { remake(conversation: newValue) }
    }
    public var localParticipant: ParticipantID {
        get { storage.localParticipant }
        set { remake(localParticipant: newValue) }
    }
    public var remoteParticipants: [ParticipantID] {
        get { storage.remoteParticipants }
        set { remake(remoteParticipants: newValue) }
    }

    /// `"$c"`, `"$l"`, `"$r0"`, ... and the UUID text each stands for, as v1 spells it.
    var references: [(name: [UInt8], uuid: [UInt8])] { storage.references }
    /// The id the `index`-th of ``references`` stands for.
    func referencedID(_ index: Int) -> UUID {
        switch index {
        case 0: return conversation.uuid
        case 1: return localParticipant.uuid
        default: return remoteParticipants[index - 2].uuid
        }
    }
    /// `"conversation":"…","device":"…"`: the context fields v2 leaves out, as v1 writes them.
    var contextFields: [UInt8] { storage.contextFields }

    public init(_ info: InstanceInfo) {
        self.init(device: info.device, conversation: info.conversation, localParticipant: info.localParticipant,
                  remoteParticipants: info.remoteParticipants)
    }

    public init(device: DeviceID, conversation: ConversationID, localParticipant: ParticipantID, remoteParticipants: [ParticipantID]) {
        storage = Storage(device: device, conversation: conversation, localParticipant: localParticipant,
                          remoteParticipants: remoteParticipants)
    }

    private mutating func remake(device: DeviceID? = nil, conversation: ConversationID? = nil,
                                 localParticipant: ParticipantID? = nil, remoteParticipants: [ParticipantID]? = nil) {
        storage = Storage(device: device ?? self.device, conversation: conversation ?? self.conversation,
                          localParticipant: localParticipant ?? self.localParticipant,
                          remoteParticipants: remoteParticipants ?? self.remoteParticipants)
    }

    /// Appends a string as JSONEncoder writes it (with `.withoutEscapingSlashes`), so the
    /// fields read back byte for byte; made by hand because readers make constants often.
    static func appendJSONString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
            case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0x08: out += Array(#"\b"#.utf8)
            case 0x0C: out += Array(#"\f"#.utf8)
            case ..<0x20: out += Array(String(format: "\\u%04x", byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    public static func == (a: Self, b: Self) -> Bool {
        if a.storage === b.storage { return true }
        return (a.device, a.conversation, a.localParticipant, a.remoteParticipants)
            == (b.device, b.conversation, b.localParticipant, b.remoteParticipants)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(device)
        hasher.combine(conversation)
        hasher.combine(localParticipant)
        hasher.combine(remoteParticipants)
    }
}

/// Type version 2, the compact payload layout: the version 1 JSON of the same event
/// (still canonical JSON), less what its recording already says.
///
/// - The top-level `context` object leaves out `conversation` and `device`: they are
///   the recording's (the recorder writes version 1 for an event whose context is not).
/// - A string value equal to the recording's conversation id is written `"$c"`, to its
///   local participant's `"$l"`, to its i-th remote participant's `"$r<i>"`; any other
///   string value that begins with `$` gets one more `$` in front. Keys are never changed.
///
/// `recording.started` events are the recording's constants and keep version 1.
/// Reading a version 2 payload expands it to version 1 first (``expand(_:with:)``, the
/// upcaster), so there is one model and one decoder of it.
public enum CompactPayload {
    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), colon = UInt8(ascii: ":")
    private static let dollar = UInt8(ascii: "$"), comma = UInt8(ascii: ",")
    private static let openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    private static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    private static let contextKey = Array("context".utf8)

    /// The version 2 form of a version 1 payload, or nil when the event's context names
    /// another device or conversation than the recording (it then stays version 1).
    public static func compact(_ v1: [UInt8], with constants: StreamConstants) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(v1.count)
        let count = v1.count
        var index = 0, depth = 0, contextNext = false
        return v1.withUnsafeBufferPointer { input -> [UInt8]? in
            while index < count {
                let byte = input[index]
                switch byte {
                case openBrace, openBracket:
                    depth += 1
                    out.append(byte)
                    index += 1
                    if contextNext && byte == openBrace {
                        contextNext = false
                        // v1's context starts with the two fields (keys are sorted): they must be the recording's.
                        let fields = constants.contextFields
                        guard index + fields.count < count, input[index..<(index + fields.count)].elementsEqual(fields),
                              input[index + fields.count] == comma || input[index + fields.count] == closeBrace else { return nil }
                        index += fields.count
                        if input[index] == comma { index += 1 }
                    }
                case closeBrace, closeBracket:
                    depth -= 1
                    out.append(byte)
                    index += 1
                case quote:
                    guard let end = stringEnd(input, from: index) else { return nil }
                    let token = input[(index + 1)..<end]
                    if end + 1 < count && input[end + 1] == colon {
                        contextNext = depth == 1 && token.elementsEqual(contextKey)
                        out.append(contentsOf: input[index...end])
                    } else if let reference = constants.references.first(where: { token.elementsEqual($0.uuid) }) {
                        out.append(quote)
                        out.append(contentsOf: reference.name)
                        out.append(quote)
                    } else {
                        out.append(quote)
                        if token.first == dollar { out.append(dollar) }
                        out.append(contentsOf: token)
                        out.append(quote)
                    }
                    index = end + 1
                default:
                    out.append(byte)
                    index += 1
                }
            }
            return out
        }
    }

    /// The version 1 form of a version 2 payload: the upcaster every reader runs.
    ///
    /// One pass that copies runs of bytes whole and stops only where v2 differs: a string
    /// value that begins with `$`, and the opening of the top-level context.
    public static func expand(_ v2: [UInt8], with constants: StreamConstants) throws(PayloadDecodingError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(v2.count + constants.contextFields.count + 96)
        var failure: String?
        var sawContext = false
        v2.withUnsafeBufferPointer { input in
            let count = input.count
            var index = 0, depth = 0, contextNext = false, run = 0
            while index < count {
                let byte = input[index]
                if byte == quote {
                    guard let end = stringEnd(input, from: index) else { failure = "an unterminated string"; return }
                    let isKey = end + 1 < count && input[end + 1] == colon
                    if isKey {
                        // `"context":` at the top level: the next `{` opens the context.
                        contextNext = depth == 1 && end - index - 1 == contextKey.count
                            && input[(index + 1)..<end].elementsEqual(contextKey)
                    } else if end > index + 1 && input[index + 1] == dollar {
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: input[run..<index]))
                        let token = input[(index + 1)..<end]
                        out.append(quote)
                        if token.count > 1 && input[index + 2] == dollar {
                            out.append(contentsOf: UnsafeBufferPointer(rebasing: input[(index + 2)..<end]))
                        } else if let reference = constants.references.first(where: { token.elementsEqual($0.name) }) {
                            out.append(contentsOf: reference.uuid)
                        } else {
                            failure = "the reference \(String(decoding: token, as: UTF8.self)) names nothing in its recording"
                            return
                        }
                        out.append(quote)
                        run = end + 1
                    }
                    index = end + 1
                    continue
                }
                if byte == openBrace || byte == openBracket {
                    depth += 1
                    if contextNext && byte == openBrace {
                        contextNext = false
                        sawContext = true
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: input[run...index]))
                        out.append(contentsOf: constants.contextFields)
                        if index + 1 < count && input[index + 1] != closeBrace { out.append(comma) }
                        run = index + 1
                    }
                } else if byte == closeBrace || byte == closeBracket {
                    depth -= 1
                }
                index += 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: input[run..<count]))
        }
        if let failure { throw .malformed(type: "version 2", detail: failure) }
        guard sawContext else { throw .malformed(type: "version 2", detail: "no context object") }
        return out
    }

    /// The index of the quote that ends the string starting at `start`.
    private static func stringEnd(_ input: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start + 1
        while index < input.count {
            switch input[index] {
            case backslash: index += 2
            case quote: return index
            default: index += 1
            }
        }
        return nil
    }
}
