import Foundation
import MessagesHost
import MessagesModel
import Testing

/// The rows of MESSAGES.md that only some extensions reach: sizing a live bubble, the
/// iOS 11 send variants and the errors Messages gives for each broken rule.
@Suite struct SpecRowsTests {
    /// `contentSizeThatFits` reaches a live bubble (transcript style) once it is up, with
    /// the space the device offers, and never an extension in compact or expanded style.
    @Test func contentSizeThatFitsIsAskedInTranscriptStyleOnly() throws {
        let world = try World()
        world.host.liveBubbleSpace["B"] = ContentSize(width: 280, height: 400)
        let live = try world.sendMessage("live", from: "A", live: true)
        #expect(!world.spy("A").log.contains { $0.hasPrefix("contentSizeThatFits") })
        try world.host.perform(.openConversation(world.conversation), on: "B")
        try world.host.perform(.viewLiveMessage(live.id), on: "B")
        let liveSpy = try #require(world.spies("B").last)
        #expect(liveSpy.log.last == "contentSizeThatFits(280x400) transcript sel=live")
        #expect(world.host.deliveredCallbacks[.contentSizeThatFits] == 1)
        // The expanded extension on B is never asked.
        try world.host.perform(.tapMessage(live.id), on: "B")
        #expect(world.spy("B").log.contains("didBecomeActive expanded sel=live"))
        #expect(!world.spy("B").log.contains { $0.hasPrefix("contentSizeThatFits") })
    }

    /// The send variants go straight to the transcript (the input field keeps what is
    /// staged); without a touch in the same interaction (an arrival is none) Messages
    /// answers 9, once the extension is gone 10 for a send and 11 for an insert, and a
    /// live bubble may neither insert nor send (11).
    @Test func sendVariantsAndTheErrorsOfTheirRules() throws {
        let world = try World()
        world.host.files["A"] = ["file:///photo.jpg": 10_000, "file:///ok.png": 1_000]
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        var results: [MessagesErrorCode?] = []
        world.spy("A").onTouch = { _, h in
            _ = SpyExtension.insert("staged", into: h)
            h.sendSticker(Sticker(fileURL: "file:///ok.png", localizedDescription: "ok")) { results.append($0?.code) }
            h.sendAttachment("file:///photo.jpg", alternateFilename: "photo.jpg") { results.append($0?.code) }
            h.sendAttachment("file:///folder/", alternateFilename: nil) { results.append($0?.code) }
        }
        try world.host.perform(.touch(.button("go")), on: "A")
        #expect(results == [nil, nil, .improperFileType])
        #expect(world.host.staged(on: "A", in: world.conversation)?.message?.caption == "staged")
        world.host.deliverAll()
        let onB = world.host.transcript(on: "B", in: world.conversation).compactMap { bubble -> Item? in
            if case .item(let item) = bubble.content { return item } else { return nil }
        }
        #expect(onB == [.sticker(Sticker(fileURL: "file:///ok.png", localizedDescription: "ok")),
                        .attachment(fileURL: "file:///photo.jpg", alternateFilename: "photo.jpg")])

        // An arrival is no touch.
        results = []
        world.spy("A").onReceive = { h in h.sendText("auto") { results.append($0?.code) } }
        try world.sendMessage("ping", from: "B")
        #expect(results == [.sendWithoutRecentInteraction])
        // Gone from the screen.
        results = []
        world.spy("A").onResign = { h in
            h.insertText("bye") { results.append($0?.code) }
            h.sendText("bye") { results.append($0?.code) }
        }
        try world.host.perform(.openConversation(world.conversation), on: "A")
        if world.host.activeInstance(on: "A") == nil { try world.host.perform(.openExtension, on: "A") }
        try world.host.perform(.dismissExtension, on: "A")
        #expect(results == [.apiUnavailableInPresentationContext, .sendWhileNotVisible])
    }

    @Test func aLiveBubbleCannotInsertOrSend() throws {
        let world = try World()
        let live = try world.sendMessage("live", from: "A", live: true)
        try world.host.perform(.openConversation(world.conversation), on: "B")
        try world.host.perform(.viewLiveMessage(live.id), on: "B")
        let host = try #require(world.spies("B").last?.host)
        #expect(SpyExtension.insert("from a bubble", into: host)?.code == .apiUnavailableInPresentationContext)
        var sent: MessagesError?
        host.sendText("from a bubble") { sent = $0 }
        #expect(sent?.code == .apiUnavailableInPresentationContext)
    }

    /// Files Messages refuses for what they are: unreadable (2), a folder (3), a sticker of
    /// the wrong pixel size (5).
    @Test func fileAttributesMessagesChecks() throws {
        let world = try World()
        world.host.files["A"] = ["file:///locked.png": 1_000, "file:///tiny.png": 1_000, "file:///fine.png": 1_000,
                                 "file:///secret.pdf": 1_000]
        world.host.fileAttributes["A"] = ["file:///locked.png": FileAttributes(isReadable: false),
                                          "file:///tiny.png": FileAttributes(pixelWidth: 64, pixelHeight: 64),
                                          "file:///fine.png": FileAttributes(pixelWidth: 408, pixelHeight: 408),
                                          "file:///secret.pdf": FileAttributes(isReadable: false)]
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        var results: [MessagesErrorCode?] = []
        world.spy("A").onTouch = { _, h in
            for file in ["locked.png", "tiny.png", "fine.png"] {
                h.insertSticker(Sticker(fileURL: "file:///\(file)", localizedDescription: file)) { results.append($0?.code) }
            }
            h.insertAttachment("file:///secret.pdf", alternateFilename: nil) { results.append($0?.code) }
            h.insertAttachment("file:///Pictures/", alternateFilename: nil) { results.append($0?.code) }
        }
        try world.host.perform(.touch(.button("go")), on: "A")
        #expect(results == [.fileUnreadable, .stickerFileImproperFileAttributes, nil, .fileUnreadable, .improperFileType])
    }

    /// A URL over 5,000 characters is refused with error 8; https and data URLs pass.
    @Test func urlSchemesAndLength() throws {
        #expect(URLRules.validate("https://example.com/?v=1", policy: .documented) == nil)
        #expect(URLRules.validate("data:image/gif;base64,R0lGODlh", policy: .documented) == nil)
        let long = "data:image/gif;base64," + String(repeating: "A", count: 5_000)
        #expect(URLRules.validate(long)?.code == .urlExceedsMaxSize)
    }
}
