import Foundation
import MessagesModel

/// Reads canonical payloads straight into values: the fast path of
/// ``RecordedEvent/decode(type:typeVersion:payload:)``.
///
/// Each function reads the fields of one type in the sorted order `JSONEncoder`
/// writes them (optional fields may be absent, as the encoder omits nil) and
/// mirrors that type's `Codable` form exactly; a test holds the two equal for every
/// kind of event. Whatever does not fit throws ``CanonicalReader/NotCanonical`` and
/// goes to `JSONDecoder`.
enum CanonicalDecoding {
    typealias Reader = CanonicalReader
    typealias NotCanonical = CanonicalReader.NotCanonical

    /// The event, or nil when the payload is not canonical (use the reference decoder).
    /// - Parameter constants: the recording of a type version 2 payload, read as if the
    ///   upcaster had expanded it first (nil: version 1).
    static func event(category: Substring, name: Substring, payload: UnsafeBufferPointer<UInt8>,
                      compactOf constants: StreamConstants? = nil, memo: DecodingMemo? = nil) -> RecordedEvent? {
        var category = category, name = name
        return category.withUTF8 { category in
            name.withUTF8 { name in event(category: category, name: name, payload: payload, compactOf: constants, memo: memo) }
        }
    }

    /// ``event(category:name:payload:compactOf:)`` with the type's two parts as UTF-8 bytes.
    static func event(category: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>, payload: UnsafeBufferPointer<UInt8>,
                      compactOf constants: StreamConstants? = nil, memo: DecodingMemo? = nil) -> RecordedEvent? {
        var r = Reader(payload, compactOf: constants, memo: memo)
        // Compared as bytes: `Substring == String` took the generic comparison.
        func equal(_ part: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool { Reader.same(part, word) }
        do throws(NotCanonical) {
            let event: RecordedEvent
            if equal(category, "recording") && equal(name, "started") {
                // A recording's start is its constants and always version 1.
                guard constants == nil else { return nil }
                event = .recordingStarted(try instanceInfo(&r))
            } else {
                try r.beginObject()
                try r.required("body")
                if equal(category, "recording") && equal(name, "ended") {
                    try r.emptyObject()
                    try r.required("context")
                    event = .recordingEnded(try context(&r))
                } else if equal(category, "input") {
                    let action = try userAction(&r)
                    try r.required("context")
                    event = .input(action, try context(&r))
                } else if equal(category, "callback") {
                    let record = try callbackRecord(&r)
                    try r.required("context")
                    event = .callback(record, try context(&r))
                } else if equal(category, "action") {
                    let record = try actionRecord(&r)
                    try r.required("context")
                    event = .action(record, try context(&r))
                } else if equal(category, "transcript") {
                    let change = try transcriptChange(&r)
                    try r.required("context")
                    event = .transcript(change, try context(&r))
                } else if equal(category, "ui") && equal(name, "screen") {
                    let shown = try screen(&r)
                    try r.required("context")
                    event = .screen(shown, try context(&r))
                } else {
                    return nil
                }
                try r.endObject()
            }
            return r.isAtEnd ? event : nil
        } catch {
            return nil
        }
    }

    // MARK: Recorded event parts

    static func instanceInfo(_ r: inout Reader) throws(NotCanonical) -> InstanceInfo {
        try r.beginObject()
        try r.required("conversation"); let conversation = ConversationID(try r.uuid())
        try r.required("device"); let device = DeviceID(try r.string())
        try r.required("instanceID"); let instance = try r.uuid()
        try r.required("kind"); let kind = try r.string()
        var live: MessageID?
        if r.field("liveMessage") { live = MessageID(try r.uuid()) }
        try r.required("localParticipant"); let local = ParticipantID(try r.uuid())
        try r.required("names")
        try r.beginObject()
        var names: [ParticipantID: String] = [:]
        while let key = try r.nextMapKey() {
            guard let uuid = UUID(hyphenated: key) else { throw NotCanonical() }
            names[ParticipantID(uuid)] = try r.string()
        }
        try r.required("remoteParticipants")
        let remote = try r.array { (r: inout Reader) throws(NotCanonical) in ParticipantID(try r.uuid()) }
        try r.endObject()
        return InstanceInfo(instanceID: instance, device: device, conversation: conversation, kind: kind,
                            localParticipant: local, remoteParticipants: remote, names: names, liveMessage: live)
    }

    static func context(_ r: inout Reader) throws(NotCanonical) -> EventContext {
        try r.beginObject()
        let conversation: ConversationID, device: DeviceID
        if let constants = r.compactOf {
            // Version 2 leaves both to the recording; a context that names them anyway is
            // the upcaster's to judge.
            if r.field("conversation") || r.field("device") { throw NotCanonical() }
            conversation = constants.conversation
            device = constants.device
        } else {
            try r.required("conversation"); conversation = ConversationID(try r.uuid())
            try r.required("device"); device = DeviceID(try r.string())
        }
        try r.required("isActive"); let active = try r.bool()
        var selected: MessageID?
        if r.field("selectedMessage") { selected = MessageID(try r.uuid()) }
        try r.required("style"); let style = try presentationStyle(&r)
        try r.endObject()
        return EventContext(device: device, conversation: conversation, style: style, isActive: active, selectedMessage: selected)
    }

    static func userAction(_ r: inout Reader) throws(NotCanonical) -> UserAction {
        try r.beginObject()
        let action: UserAction
        if r.field("collapse") { try r.emptyObject(); action = .collapse }
        else if r.field("deleteStaged") { try r.emptyObject(); action = .deleteStaged }
        else if r.field("dismissExtension") { try r.emptyObject(); action = .dismissExtension }
        else if r.field("expand") { try r.emptyObject(); action = .expand }
        else if r.field("leaveMessages") { try r.emptyObject(); action = .leaveMessages }
        else if r.field("openConversation") { action = .openConversation(ConversationID(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.uuid() })) }
        else if r.field("openExtension") { try r.emptyObject(); action = .openExtension }
        else if r.field("quitMessages") { try r.emptyObject(); action = .quitMessages }
        else if r.field("tapMessage") { action = .tapMessage(MessageID(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.uuid() })) }
        else if r.field("tapSend") { try r.emptyObject(); action = .tapSend }
        else if r.field("touch") { action = .touch(try unlabeled(&r, touch)) }
        else if r.field("tryAgain") { action = .tryAgain(MessageID(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.uuid() })) }
        else if r.field("viewLiveMessage") { action = .viewLiveMessage(MessageID(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.uuid() })) }
        else { throw NotCanonical() }
        try r.endObject()
        return action
    }

    static func touch(_ r: inout Reader) throws(NotCanonical) -> Touch {
        try r.beginObject()
        let touch: Touch
        if r.field("button") { touch = .button(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.string() }) }
        else if r.field("cell") { touch = .cell(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.int() }) }
        else if r.field("dismissAlert") { try r.emptyObject(); touch = .dismissAlert }
        else if r.field("sticker") { touch = .sticker(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.int() }) }
        else { throw NotCanonical() }
        try r.endObject()
        return touch
    }

    static func callbackRecord(_ r: inout Reader) throws(NotCanonical) -> CallbackRecord {
        try r.beginObject()
        var available: ContentSize?
        if r.field("availableSize") { available = try contentSize(&r) }
        try r.required("callback")
        let callback = try r.word(Self.callbacks)
        var record = CallbackRecord(callback: callback, availableSize: available)
        if r.field("contentSize") { record.contentSize = try contentSize(&r) }
        if r.field("conversation") { record.conversation = try conversation(&r) }
        if r.field("message") { record.message = try message(&r) }
        if r.field("style") { record.style = try presentationStyle(&r) }
        try r.endObject()
        return record
    }

    /// Every callback by its name's bytes, for ``CanonicalReader/word(_:)``.
    static let callbacks: [(bytes: [UInt8], value: Callback)] = Callback.allCases.map { (Array($0.rawValue.utf8), $0) }

    static func actionRecord(_ r: inout Reader) throws(NotCanonical) -> ActionRecord {
        try r.beginObject()
        try r.required("action")
        var record = ActionRecord(action: try extensionAction(&r))
        if r.field("changeDescription") {
            try r.beginObject()
            record.changeDescription = ChangeDescription(r.field("text") ? try r.string() : nil)
            try r.endObject()
        }
        if r.field("error") { record.error = try messagesError(&r) }
        try r.required("warnings")
        record.warnings = try r.array { (r: inout Reader) throws(NotCanonical) in try r.string() }
        try r.endObject()
        return record
    }

    static func extensionAction(_ r: inout Reader) throws(NotCanonical) -> ExtensionAction {
        try r.beginObject()
        let action: ExtensionAction
        if r.field("dismiss") { try r.emptyObject(); action = .dismiss }
        else if r.field("insert") { action = .insert(try unlabeled(&r, message)) }
        else if r.field("insertAttachment") {
            let (url, name) = try attachment(&r)
            action = .insertAttachment(fileURL: url, alternateFilename: name)
        }
        else if r.field("insertSticker") { action = .insertSticker(try unlabeled(&r, sticker)) }
        else if r.field("insertText") { action = .insertText(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.string() }) }
        else if r.field("requestPresentationStyle") { action = .requestPresentationStyle(try unlabeled(&r, presentationStyle)) }
        else if r.field("send") { action = .send(try unlabeled(&r, message)) }
        else if r.field("sendAttachment") {
            let (url, name) = try attachment(&r)
            action = .sendAttachment(fileURL: url, alternateFilename: name)
        }
        else if r.field("sendSticker") { action = .sendSticker(try unlabeled(&r, sticker)) }
        else if r.field("sendText") { action = .sendText(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.string() }) }
        else { throw NotCanonical() }
        try r.endObject()
        return action
    }

    static func transcriptChange(_ r: inout Reader) throws(NotCanonical) -> TranscriptChange {
        try r.beginObject()
        let change: TranscriptChange
        if r.field("arrived") {
            try r.beginObject()
            try r.required("_0"); let item = try item(&r)
            try r.required("sender"); let sender = ParticipantID(try r.uuid())
            try r.endObject()
            change = .arrived(item, sender: sender)
        } else if r.field("sent") {
            change = .sent(try unlabeled(&r, item))
        } else {
            throw NotCanonical()
        }
        try r.endObject()
        return change
    }

    static func screen(_ r: inout Reader) throws(NotCanonical) -> Screen {
        try r.beginObject()
        var alert: Screen.Alert?
        if r.field("alert") {
            try r.beginObject()
            try r.required("message"); let message = try r.string()
            try r.required("title"); let title = try r.string()
            try r.endObject()
            alert = Screen.Alert(title: title, message: message)
        }
        try r.required("buttons")
        let buttons = try r.array { (r: inout Reader) throws(NotCanonical) -> Screen.Button in
            try r.beginObject()
            try r.required("isEnabled"); let enabled = try r.bool()
            try r.required("title"); let title = try r.string()
            try r.endObject()
            return Screen.Button(title, isEnabled: enabled)
        }
        try r.required("cells"); let cells = try strings(&r)
        try r.required("labels"); let labels = try strings(&r)
        try r.required("name"); let name = try r.string()
        try r.endObject()
        return Screen(name: name, labels: labels, cells: cells, buttons: buttons, alert: alert)
    }

    // MARK: Messages model

    static func item(_ r: inout Reader) throws(NotCanonical) -> Item {
        try r.beginObject()
        let item: Item
        if r.field("attachment") {
            let (url, name) = try attachment(&r)
            item = .attachment(fileURL: url, alternateFilename: name)
        }
        else if r.field("message") { item = .message(try unlabeled(&r, message)) }
        else if r.field("sticker") { item = .sticker(try unlabeled(&r, sticker)) }
        else if r.field("text") { item = .text(try unlabeled(&r) { (r: inout Reader) throws(NotCanonical) in try r.string() }) }
        else { throw NotCanonical() }
        try r.endObject()
        return item
    }

    /// A message, or the memo's for the same bytes.
    static func message(_ r: inout Reader) throws(NotCanonical) -> Message {
        try r.remembered({ $0.message(at: $1, $2) }, { $0.keep($1, from: $2, $3) }, readMessage)
    }

    static func readMessage(_ r: inout Reader) throws(NotCanonical) -> Message {
        try r.beginObject()
        var accessibilityLabel: String?, error: MessagesError?, layout: MessageLayout?
        var sender: ParticipantID?, session: SessionID?, summary: String?, url: String?
        if r.field("accessibilityLabel") { accessibilityLabel = try r.string() }
        if r.field("error") { error = try messagesError(&r) }
        try r.required("id"); let id = MessageID(try r.uuid())
        try r.required("isPending"); let pending = try r.bool()
        if r.field("layout") { layout = try messageLayout(&r) }
        if r.field("senderParticipantIdentifier") { sender = ParticipantID(try r.uuid()) }
        if r.field("session") { session = SessionID(try r.uuid()) }
        try r.required("shouldExpire"); let expires = try r.bool()
        if r.field("summaryText") { summary = try r.string() }
        if r.field("url") { url = try r.string() }
        try r.endObject()
        return Message(id: id, session: session, url: url, layout: layout, summaryText: summary,
                       accessibilityLabel: accessibilityLabel, senderParticipantIdentifier: sender,
                       shouldExpire: expires, isPending: pending, error: error)
    }

    static func messageLayout(_ r: inout Reader) throws(NotCanonical) -> MessageLayout {
        try r.beginObject()
        let layout: MessageLayout
        if r.field("live") {
            try r.beginObject()
            try r.required("alternate")
            layout = .live(alternate: try templateLayout(&r))
            try r.endObject()
        } else if r.field("template") {
            layout = .template(try unlabeled(&r, templateLayout))
        } else {
            throw NotCanonical()
        }
        try r.endObject()
        return layout
    }

    static func templateLayout(_ r: inout Reader) throws(NotCanonical) -> TemplateLayout {
        try r.beginObject()
        var t = TemplateLayout()
        if r.field("caption") { t.caption = try r.string() }
        if r.field("image") {
            try r.beginObject()
            try r.required("cells"); let cells = try strings(&r)
            try r.required("kind"); let kind = try r.string()
            try r.endObject()
            t.image = MessageImage(kind: kind, cells: cells)
        }
        if r.field("imageSubtitle") { t.imageSubtitle = try r.string() }
        if r.field("imageTitle") { t.imageTitle = try r.string() }
        if r.field("mediaFileURL") { t.mediaFileURL = try r.string() }
        if r.field("subcaption") { t.subcaption = try r.string() }
        if r.field("trailingCaption") { t.trailingCaption = try r.string() }
        if r.field("trailingSubcaption") { t.trailingSubcaption = try r.string() }
        try r.endObject()
        return t
    }

    /// A conversation, or the memo's for the same bytes.
    static func conversation(_ r: inout Reader) throws(NotCanonical) -> Conversation {
        try r.remembered({ $0.conversation(at: $1, $2) }, { $0.keep($1, from: $2, $3) }, readConversation)
    }

    static func readConversation(_ r: inout Reader) throws(NotCanonical) -> Conversation {
        try r.beginObject()
        try r.required("id"); let id = ConversationID(try r.uuid())
        try r.required("localParticipantIdentifier"); let local = ParticipantID(try r.uuid())
        try r.required("remoteParticipantIdentifiers")
        let remote = try r.array { (r: inout Reader) throws(NotCanonical) in ParticipantID(try r.uuid()) }
        var selected: Message?
        if r.field("selectedMessage") { selected = try message(&r) }
        try r.endObject()
        return Conversation(id: id, localParticipantIdentifier: local, remoteParticipantIdentifiers: remote,
                            selectedMessage: selected)
    }

    static func sticker(_ r: inout Reader) throws(NotCanonical) -> Sticker {
        try r.beginObject()
        try r.required("fileURL"); let url = try r.string()
        try r.required("localizedDescription"); let description = try r.string()
        try r.endObject()
        return Sticker(fileURL: url, localizedDescription: description)
    }

    static func contentSize(_ r: inout Reader) throws(NotCanonical) -> ContentSize {
        try r.beginObject()
        try r.required("height"); let height = try r.int()
        try r.required("width"); let width = try r.int()
        try r.endObject()
        return ContentSize(width: width, height: height)
    }

    static func messagesError(_ r: inout Reader) throws(NotCanonical) -> MessagesError {
        try r.beginObject()
        try r.required("code")
        guard let code = MessagesErrorCode(rawValue: try r.int()) else { throw NotCanonical() }
        try r.required("reason"); let reason = try r.string()
        try r.endObject()
        return MessagesError(code, reason)
    }

    static func presentationStyle(_ r: inout Reader) throws(NotCanonical) -> PresentationStyle {
        guard let style = PresentationStyle(rawValue: try r.int()) else { throw NotCanonical() }
        return style
    }

    // MARK: Shapes of synthesized Codable

    /// `{"_0": value}`: an enum case's single unlabeled associated value.
    static func unlabeled<T>(_ r: inout Reader, _ value: (inout Reader) throws(NotCanonical) -> T) throws(NotCanonical) -> T {
        try r.beginObject()
        try r.required("_0")
        let out = try value(&r)
        try r.endObject()
        return out
    }

    /// `{"alternateFilename"?: ..., "fileURL": ...}`.
    static func attachment(_ r: inout Reader) throws(NotCanonical) -> (String, String?) {
        try r.beginObject()
        var name: String?
        if r.field("alternateFilename") { name = try r.string() }
        try r.required("fileURL"); let url = try r.string()
        try r.endObject()
        return (url, name)
    }

    static func strings(_ r: inout Reader) throws(NotCanonical) -> [String] {
        try r.strings()
    }
}
