import APITourGame
import GameKit
import GameKitTesting
import MessagesHost
import MessagesModel
import TestSupport
import Testing

/// The API tour's buttons each reach the part of Messages they name, with the errors
/// Messages gives for the files and calls it refuses.
@Suite struct APITourTests {
    func errorLabel(_ t: Table, _ device: DeviceID) -> String? {
        t.screen(device)?.labels.last { $0.hasPrefix("Error: ") }
    }

    @Test func linkCarriesEveryTemplateFieldAndPictureGrowsPastTheLimit() throws {
        let t = try Table(APITourPlugin())
        try t.do("A", .openConversation(t.game), .openExtension, .touch(.button("Link")))
        let link = try #require(t.host.staged(on: "A", in: t.game)?.message)
        #expect(link.url == "https://example.com/stepper?value=1" && URLRules.warnings(for: link.url!).isEmpty)
        let layout = link.layout?.template
        #expect(layout?.subcaption != nil && layout?.trailingCaption != nil && layout?.trailingSubcaption != nil
                    && layout?.mediaFileURL != nil && layout?.imageTitle != nil && layout?.imageSubtitle != nil)
        #expect(link.summaryText == "Stepper at 1" && link.accessibilityLabel == "Stepper value 1 of 9")
        // A data URL: accepted at value 1 and 2, refused with error 8 from 3 on.
        try t.do("A", .touch(.button("Picture")))
        let picture = try #require(t.host.staged(on: "A", in: t.game)?.message)
        #expect(picture.url?.hasPrefix("data:image/gif;base64,") == true && picture.shouldExpire)
        try t.do("A", .touch(.button("+")), .touch(.button("+")), .touch(.button("Picture")))
        #expect(errorLabel(t, "A")?.contains("urlExceedsMaxSize") == true, "\(String(describing: t.screen("A")?.labels))")
        // The refused picture left the earlier one staged.
        #expect(t.host.staged(on: "A", in: t.game)?.message?.id == picture.id)
    }

    @Test func sendVariantsGoStraightToTheOthers() throws {
        let t = try Table(APITourPlugin())
        try t.do("A", .openConversation(t.game), .openExtension, .touch(.button("Send Now")), .touch(.button("Send Text")),
                 .touch(.button("+")), .touch(.button("Send Attachment")))
        // The stepper at 2 picks the folder: error 3.
        #expect(errorLabel(t, "A")?.contains("improperFileType") == true)
        #expect(t.host.staged(on: "A", in: t.game) == nil)
        t.host.deliverAll()
        let arrived = t.host.transcript(on: "B", in: t.game)
        #expect(arrived.count == 2 && arrived.first?.message?.url == "https://example.com/stepper?value=1")
    }

    /// Auto-reply calls Messages where it refuses: from didReceive (no touch: 9), and from
    /// didResignActive (not active: 11 for the insert, not visible: 10 for the send).
    @Test func autoReplyMeetsErrorsNineTenAndEleven() throws {
        let t = try Table(APITourPlugin())
        try t.do("A", .openConversation(t.game), .openExtension, .touch(.button("Auto-reply")))
        try t.do("B", .openConversation(t.game), .openExtension, .touch(.button("Link")), .tapSend)
        t.host.deliverAll()
        #expect(errorLabel(t, "A")?.contains("sendWithoutRecentInteraction") == true, "\(String(describing: t.screen("A")?.labels)) \(t.host.transcript(on: "A", in: t.game).count)")
        let tour = try #require(t.host.instance(on: "A", in: t.game)?.extension as? APITourExtension)
        try t.do("A", .dismissExtension)
        #expect(tour.lastError?.code == .sendWhileNotVisible)
        #expect(t.host.staged(on: "A", in: t.game) == nil) // the goodbye insert was refused (11)
    }

    @Test func stickersThePhoneCannotSend() throws {
        let t = try Table(APITourPlugin())
        try t.do("A", .openConversation(t.game), .openExtension)
        let expected: [(Int, String?)] = [(3, nil), (4, "stickerFileImproperFileSize"), (5, "stickerFileImproperFileAttributes"),
                                          (6, "stickerFileImproperFileFormat"), (7, "fileNotFound"), (8, "fileUnreadable")]
        for (index, error) in expected {
            try t.do("A", .touch(.sticker(index)))
            let tour = try #require(t.host.instance(on: "A", in: t.game)?.extension as? APITourExtension)
            #expect(tour.lastError?.code.name == error, "sticker \(index)")
        }
    }

    /// As a live bubble the tour asks to leave transcript style and to go away, and
    /// inserts: Messages ignores the first two (no transition, still active) and refuses
    /// the insert with 11.
    @Test func aLiveBubbleMayNotLeaveDismissOrInsert() throws {
        let t = try Table(APITourPlugin())
        try t.do("A", .openConversation(t.game), .openExtension, .touch(.button("Live")), .tapSend, .dismissExtension)
        t.host.deliverAll()
        let live = try #require(t.latest("B"))
        try t.do("B", .openConversation(t.game), .viewLiveMessage(live.id))
        let bubble = try #require(t.host.liveInstances(on: "B", in: t.game).first)
        #expect(bubble.style == .transcript && bubble.isActive)
        let tour = try #require(bubble.extension as? APITourExtension)
        #expect(tour.lastError?.code == .apiUnavailableInPresentationContext)
        #expect(t.host.staged(on: "B", in: t.game) == nil)
        #expect(t.host.deliveredCallbacks[.willTransition] == nil && t.host.deliveredCallbacks[.contentSizeThatFits] == 1)
    }

    @Test func itPassesTheConformanceKit() throws {
        let report = try GameConformance.check(APITourPlugin(), games: 6, seed: 3)
        #expect(report.games == 6)
    }
}
