import GameKit
import MessagesHost
import MessagesModel
import StickerGame
import TestSupport
import Testing

@Suite struct StickerExtensionTests {
    /// Seed 004's custom message goes out as the seed sends it (its URL breaks the scheme
    /// rule, which the host names in a warning) and arrives on the other device.
    @Test func theStepperValueMessageIsSentAsTheSeedSendsIt() throws {
        let t = try Table(StickerPlugin())
        try t.do("A", .openConversation(t.game), .openExtension, .expand, .touch(.button("Send")))
        #expect(t.host.activeInstance(on: "A")?.style == .compact) // requestPresentationStyle(.compact)
        guard case .message(let staged)? = t.host.staged(on: "A", in: t.game) else {
            Issue.record("the Stepper Value message was not staged: \(String(describing: t.screen("A")?.labels))")
            return
        }
        #expect(staged.url == "emptyURL" && staged.caption == "Stepper Value")
        #expect(URLRules.warnings(for: "emptyURL").count == 1)
        try t.do("A", .tapSend)
        t.host.deliverAll()
        #expect(t.host.transcript(on: "B", in: t.game).last?.message?.caption == "Stepper Value")
    }

    @Test func stickersTextAndAttachmentsAreInserted() throws {
        let t = try Table(StickerPlugin())
        t.host.files["A"] = Dictionary(uniqueKeysWithValues: StickerExtension.bundledStickers.map { ($0.fileURL, 20_000) })
        try t.do("A", .openConversation(t.game), .openExtension, .touch(.sticker(1)))
        #expect(t.host.staged(on: "A", in: t.game) == .sticker(StickerExtension.bundledStickers[1]))
        try t.do("A", .touch(.button("Text")))
        #expect(t.host.staged(on: "A", in: t.game) == .text("Hello from the extension"))
        try t.do("A", .touch(.button("Attachment")))
        #expect(t.screen("A")?.labels.last?.contains("fileNotFound") == true)
        t.host.files["A"]!["file:///var/mobile/Media/photo.jpg"] = 1_000
        try t.do("A", .touch(.button("Attachment")), .tapSend)
        t.host.deliverAll()
        #expect(t.host.transcript(on: "B", in: t.game).last?.content == .item(.attachment(fileURL: "file:///var/mobile/Media/photo.jpg", alternateFilename: "photo.jpg")))
    }
}
