import GameKit
import MessagesHost
import MessagesModel
import StickerGame
import TestSupport
import Testing

@Suite struct StickerExtensionTests {
    @Test func theStepperValueMessageIsRefusedForItsURL() throws {
        let t = try Table(StickerPlugin())
        try t.do("A", .openConversation(t.game), .openExtension, .expand, .touch(.button("Send")))
        #expect(t.staged("A") == nil)
        #expect(t.host.activeInstance(on: "A")?.style == .compact) // requestPresentationStyle(.compact)
        let error = try #require(t.screen("A")?.labels.last)
        #expect(error.contains("no scheme") && error.contains("MSMessagesErrorDomain -1"))
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
