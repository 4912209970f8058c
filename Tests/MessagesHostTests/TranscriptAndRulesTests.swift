import Foundation
import MessagesHost
import MessagesModel
import Testing

@Suite struct SessionRuleTests {
    @Test func aNewMessageInTheSessionReplacesTheOldOneWithItsSummary() throws {
        let world = try World()
        let first = try world.sendMessage("first move", from: "A", summary: "Alice moved")
        try world.sendMessage("unrelated", from: "A")
        try world.sendMessage("second move", from: "A", session: first.session)
        for device: DeviceID in ["A", "B"] {
            let transcript = world.host.transcript(on: device, in: world.conversation)
            #expect(transcript.count == 3)
            #expect(transcript[0].content == .summary(text: "Alice moved", replaced: first.id))
            #expect(transcript[1].message?.caption == "unrelated")
            #expect(transcript[2].message?.caption == "second move")
        }
    }

    @Test func withoutSummaryTextADefaultDescriptionStays() throws {
        let world = try World()
        let first = try world.sendMessage("opening", from: "A")
        try world.sendMessage("reply", from: "A", session: first.session)
        let transcript = world.host.transcript(on: "B", in: world.conversation)
        #expect(transcript.first?.content == .summary(text: "Earlier: opening", replaced: first.id))
    }

    @Test func theRuleIsAPureFunction() {
        let session = SessionID(UUID())
        let me = ParticipantID(UUID())
        let a = Message(id: MessageID(UUID()), session: session, summaryText: "a")
        let b = Message(id: MessageID(UUID()), session: session)
        let other = Message(id: MessageID(UUID()), session: SessionID(UUID()))
        var t: [Bubble] = []
        for m in [a, other, b] { t = applyingSessionRule(t, adding: Bubble(content: .item(.message(m)), sender: me, isOutgoing: true)) }
        #expect(t.map(\.message?.id) == [nil, other.id, b.id])
        #expect(t[0].content == .summary(text: "a", replaced: a.id))
    }
}

@Suite struct ParticipantTests {
    @Test func identifiersArePerDeviceAndCaptionsResolveToNames() throws {
        let world = try World()
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        let aliceOnA = world.host.instance(on: "A", in: world.conversation)!.info.localParticipant
        world.spy("A").onTouch = { _, h in _ = SpyExtension.insert("$\(aliceOnA.uuid.uuidString) placed their ships!", into: h) }
        try world.host.perform(.touch(.button("go")), on: "A")
        try world.host.perform(.tapSend, on: "A")
        world.host.deliverAll()
        try world.host.perform(.openConversation(world.conversation), on: "B")
        let onB = try #require(world.host.latestMessage(on: "B"))
        let infoB = world.host.instance(on: "B", in: world.conversation)!.info
        let aliceOnB = try #require(infoB.remoteParticipants.first)
        #expect(aliceOnB != aliceOnA)
        #expect(onB.senderParticipantIdentifier == aliceOnB)
        #expect(onB.caption == "$\(aliceOnB.uuid.uuidString) placed their ships!")
        #expect(world.host.display(onB.caption!, on: "B") == "Alice placed their ships!")
        #expect(world.host.display(world.host.latestMessage(on: "A")!.caption!, on: "A") == "Alice placed their ships!")
        #expect(ParticipantNames.resolve("$\(UUID().uuidString) hi", names: [:]).hasPrefix("$"))
    }
}

@Suite struct URLRuleTests {
    let seedBattleship = "www.shinobicontrols.com/battleship?Ship_Location=0&Ship_Location=1&Is_Complete=0"
    let seedTicTacToe = "?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0"

    @Test func seedURLsAreAcceptedAsShippedWithAWarning() {
        for url in [seedBattleship, seedTicTacToe] {
            #expect(URLRules.validate(url) == nil)
            #expect(URLRules.warnings(for: url) == [.missingScheme(carriesQuery: true)])
        }
        #expect(URLRules.validate("https://example.com/game?x=1") == nil)
        #expect(URLRules.validate("data:text/plain,hello") == nil)
    }

    /// Seed 004 sends `emptyURL`: accepted as shipped, with the broken rule named; refused as documented.
    @Test func emptyURLIsAcceptedAsShippedWithTheRuleNamedAndRefusedAsDocumented() throws {
        #expect(URLRules.validate("emptyURL") == nil)
        #expect(URLRules.warnings(for: "emptyURL") == [.missingScheme(carriesQuery: false)])
        #expect(URLRules.warnings(for: "emptyURL").first?.description.contains("no scheme") == true)
        let error = try #require(URLRules.validate("emptyURL", policy: .documented))
        #expect(error.code == .unknown)
        #expect(error.reason.contains("no scheme"))
    }

    @Test func documentedPolicyRefusesEveryURLWithoutScheme() {
        #expect(URLRules.validate(seedBattleship, policy: .documented)?.reason.contains("no scheme") == true)
        #expect(URLRules.validate("https://example.com/?a=1", policy: .documented) == nil)
    }

    @Test func tooLongAndCustomSchemesAreRefused() {
        let long = "https://example.com/?" + String(repeating: "a", count: 5_000)
        #expect(URLRules.validate(long)?.code == .urlExceedsMaxSize)
        #expect(URLRules.validate("https://example.com/?" + String(repeating: "a", count: 4_979)) == nil)
        #expect(URLRules.validate("myapp://move?cell=3")?.reason.contains("myapp") == true)
    }

    @Test func theHostReportsTheRuleThroughTheCompletion() throws {
        let world = try World(policy: .documented)
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        var outcome: MessagesError?
        world.spy("A").onTouch = { _, h in outcome = SpyExtension.insert("bad", url: "emptyURL", into: h) }
        try world.host.perform(.touch(.button("go")), on: "A")
        #expect(outcome?.code == .unknown)
        #expect(world.host.staged(on: "A", in: world.conversation) == nil)
    }
}

@Suite struct InsertAndSendRuleTests {
    @Test func attachmentsAndStickersAreValidated() throws {
        let world = try World()
        world.host.files["A"] = ["file:///photo.jpg": 10_000, "file:///big.gif": 900_000, "file:///ok.png": 1_000]
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        var results: [MessagesErrorCode?] = []
        world.spy("A").onTouch = { _, h in
            h.insertAttachment("https://example.com/photo.jpg", alternateFilename: nil) { results.append($0?.code) }
            h.insertAttachment("file:///missing.jpg", alternateFilename: nil) { results.append($0?.code) }
            h.insertAttachment("file:///photo.jpg", alternateFilename: "photo.jpg") { results.append($0?.code) }
            h.insertSticker(Sticker(fileURL: "file:///doc.pdf", localizedDescription: "doc")) { results.append($0?.code) }
            h.insertSticker(Sticker(fileURL: "file:///big.gif", localizedDescription: "big")) { results.append($0?.code) }
            h.insertSticker(Sticker(fileURL: "file:///ok.png", localizedDescription: "ok")) { results.append($0?.code) }
            h.insertText("hi") { results.append($0?.code) }
        }
        try world.host.perform(.touch(.button("go")), on: "A")
        #expect(results == [.improperFileURL, .fileNotFound, nil, .stickerFileImproperFileFormat,
                            .stickerFileImproperFileSize, nil, nil])
        #expect(world.host.staged(on: "A", in: world.conversation) == .text("hi"))
    }

    @Test func iOS11SendNeedsARecentTouchAndVisibility() throws {
        let world = try World()
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        var withTouch: MessagesError?? = .none
        world.spy("A").onTouch = { _, h in h.sendText("now") { withTouch = .some($0) } }
        try world.host.perform(.touch(.button("send")), on: "A")
        #expect(withTouch == .some(nil))
        #expect(world.host.transcript(on: "A", in: world.conversation).last?.content == .item(.text("now")))
        // From a callback with no touch in this interaction: error 9.
        var fromReceive: MessagesError?
        world.spy("A").onReceive = { h in h.sendText("auto") { fromReceive = $0 } }
        try world.sendMessage("ping", from: "B")
        #expect(fromReceive?.code == .sendWithoutRecentInteraction)
        // Once dismissed, not visible: error 10.
        let host = try #require(world.spy("A").host)
        try world.host.perform(.dismissExtension, on: "A")
        var hidden: MessagesError?
        host.sendText("late") { hidden = $0 }
        #expect(hidden?.code == .sendWhileNotVisible)
    }
}
