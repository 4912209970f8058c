import MessagesHost
import MessagesModel
import Testing

@Suite struct CallbackOrderTests {
    @Test func openingFromTheDrawerIsCompactWithNoSelection() throws {
        let world = try World()
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        #expect(world.spy("A").log == ["willBecomeActive compact sel=-", "didBecomeActive compact sel=-"])
        // Opening again while running fires nothing.
        try world.host.perform(.openExtension, on: "A")
        #expect(world.spy("A").log.count == 2)
    }

    @Test func launchByTapSetsTheSelectionBeforeWillBecomeActiveInExpandedStyle() throws {
        let world = try World()
        let sent = try world.sendMessage("hello", from: "A")
        try world.host.perform(.openConversation(world.conversation), on: "B")
        #expect(world.spy("B").log.isEmpty) // it arrived while inactive: no didReceive
        try world.host.perform(.tapMessage(sent.id), on: "B")
        #expect(world.spy("B").log == ["willBecomeActive expanded sel=hello", "didBecomeActive expanded sel=hello"])
    }

    @Test func selectWhileRunningCompactChangesSelectionBetweenCallbacksThenExpands() throws {
        let world = try World()
        let first = try world.sendMessage("one", from: "A")
        let second = try world.sendMessage("two", from: "A", session: nil)
        _ = first
        try world.host.perform(.openConversation(world.conversation), on: "B")
        try world.host.perform(.openExtension, on: "B")
        try world.host.perform(.tapMessage(second.id), on: "B")
        #expect(world.spy("B").log == [
            "willBecomeActive compact sel=-", "didBecomeActive compact sel=-",
            "willSelect(two) compact sel=-", "didSelect(two) compact sel=two",
            "willTransition(expanded) compact sel=two", "didTransition(expanded) expanded sel=two",
        ])
    }

    @Test func reTappingTheSelectedMessageFiresNothing() throws {
        let world = try World()
        let sent = try world.sendMessage("hello", from: "A")
        try world.host.perform(.openConversation(world.conversation), on: "B")
        try world.host.perform(.tapMessage(sent.id), on: "B")
        try world.host.perform(.collapse, on: "B")
        let before = world.spy("B").log
        try world.host.perform(.tapMessage(sent.id), on: "B")
        #expect(world.spy("B").log == before)
    }

    @Test func theExpandedExtensionHidesTheTranscript() throws {
        let world = try World()
        let sent = try world.sendMessage("hello", from: "A")
        try world.host.perform(.openConversation(world.conversation), on: "B")
        try world.host.perform(.tapMessage(sent.id), on: "B")
        #expect(throws: HostError.transcriptHidden("B")) { try world.host.perform(.tapMessage(sent.id), on: "B") }
    }

    @Test func sendingCallsDidStartSendingAndMovesTheMessageToTheTranscript() throws {
        let world = try World()
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        world.spy("A").onTouch = { _, h in _ = SpyExtension.insert("move", into: h) }
        try world.host.perform(.touch(.button("go")), on: "A")
        let staged = try #require(world.host.staged(on: "A", in: world.conversation)?.message)
        #expect(staged.isPending)
        #expect(world.host.transcript(on: "A", in: world.conversation).isEmpty)
        try world.host.perform(.tapSend, on: "A")
        #expect(world.spy("A").log.last == "didStartSending(move) compact sel=-")
        // MESSAGES.md: the message has left the input field; isPending is false.
        #expect(world.spy("A").startedSending.map(\.isPending) == [false])
        #expect(world.host.staged(on: "A", in: world.conversation) == nil)
        let inTranscript = try #require(world.host.transcript(on: "A", in: world.conversation).last?.message)
        #expect(inTranscript.id == staged.id && !inTranscript.isPending)
        #expect(world.host.pendingDeliveries.count == 1)
    }

    @Test func deletingTheStagedMessageCallsDidCancelSending() throws {
        let world = try World()
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        world.spy("A").onTouch = { _, h in _ = SpyExtension.insert("oops", into: h) }
        try world.host.perform(.touch(.button("go")), on: "A")
        try world.host.perform(.deleteStaged, on: "A")
        #expect(world.spy("A").log.last == "didCancelSending(oops) compact sel=-")
        #expect(world.host.staged(on: "A", in: world.conversation) == nil)
        #expect(throws: HostError.nothingStaged("A")) { try world.host.perform(.tapSend, on: "A") }
    }

    @Test func dismissFromTheExtensionResignsAfterItsCallbackReturns() throws {
        let world = try World()
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        world.spy("A").onTouch = { spy, h in
            h.dismiss()
            spy.log.append("still in the touch handler")
        }
        try world.host.perform(.touch(.button("done")), on: "A")
        #expect(Array(world.spy("A").log.suffix(3)) == [
            "still in the touch handler", "willResignActive compact sel=-", "didResignActive compact sel=-",
        ])
        #expect(world.host.activeInstance(on: "A") == nil)
    }

    @Test func switchingConversationLeavingAndQuittingResign() throws {
        let world = try World()
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        try world.host.perform(.openConversation(world.other), on: "A")
        #expect(Array(world.spy("A").log.suffix(2)) == ["willResignActive compact sel=-", "didResignActive compact sel=-"])
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        try world.host.perform(.leaveMessages, on: "A")
        #expect(world.spy("A").log.count == 8)
        #expect(world.host.currentConversation(of: "A") == nil)
        let before = world.host.instance(on: "A", in: world.conversation)
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        try world.host.perform(.quitMessages, on: "A")
        #expect(Array(before!.extension is SpyExtension ? (before!.extension as! SpyExtension).log.suffix(2) : []) ==
                ["willResignActive compact sel=-", "didResignActive compact sel=-"])
        // Quitting ends the instance: the next one is new.
        try world.host.perform(.openConversation(world.conversation), on: "A")
        #expect(world.host.instance(on: "A", in: world.conversation) !== before)
    }

    @Test func requestedTransitionsAreDeliveredAndTranscriptCannotBeRequested() throws {
        let world = try World()
        try world.host.perform(.openConversation(world.conversation), on: "A")
        try world.host.perform(.openExtension, on: "A")
        world.spy("A").onTouch = { _, h in h.requestPresentationStyle(.transcript) }
        try world.host.perform(.touch(.button("x")), on: "A")
        #expect(world.spy("A").log.count == 2)
        world.spy("A").onTouch = { _, h in h.requestPresentationStyle(.expanded) }
        try world.host.perform(.touch(.button("x")), on: "A")
        #expect(Array(world.spy("A").log.suffix(2)) == [
            "willTransition(expanded) compact sel=-", "didTransition(expanded) expanded sel=-",
        ])
        try world.host.perform(.collapse, on: "A")
        #expect(Array(world.spy("A").log.suffix(2)) == [
            "willTransition(compact) expanded sel=-", "didTransition(compact) compact sel=-",
        ])
    }

    @Test func receivingWhileRunningInactiveAndElsewhere() throws {
        let world = try World()
        try world.host.perform(.openConversation(world.conversation), on: "B")
        try world.host.perform(.openExtension, on: "B")
        try world.sendMessage("while running", from: "A")
        #expect(world.spy("B").log.last == "didReceive(while running) compact sel=-")
        try world.host.perform(.dismissExtension, on: "B")
        let count = world.spy("B").log.count
        try world.sendMessage("while inactive", from: "A")
        try world.host.perform(.leaveMessages, on: "B")
        try world.sendMessage("while elsewhere", from: "A")
        #expect(world.spy("B").log.count == count)
        let captions = world.host.transcript(on: "B", in: world.conversation).compactMap { $0.message?.caption }
        #expect(captions == ["while running", "while inactive", "while elsewhere"])
    }

    @Test func transcriptStyleGetsNoSelectReceiveSendCancelOrTransitionCallbacks() throws {
        let world = try World()
        let live = try world.sendMessage("live", from: "A", live: true)
        try world.host.perform(.openConversation(world.conversation), on: "B")
        try world.host.perform(.viewLiveMessage(live.id), on: "B")
        let liveSpy = try #require(world.spies("B").last)
        #expect(liveSpy !== world.spy("B"))
        #expect(liveSpy.log == ["willBecomeActive transcript sel=live", "didBecomeActive transcript sel=live",
                                "contentSizeThatFits(300x480) transcript sel=live"])
        // Requests and dismiss do nothing in transcript style.
        liveSpy.host!.requestPresentationStyle(.expanded)
        liveSpy.host!.dismiss()
        #expect(liveSpy.host!.presentationStyle == .transcript)
        // A message arriving now reaches no transcript-style instance.
        try world.sendMessage("later", from: "A")
        #expect(liveSpy.log.count == 3)
        #expect(world.host.deliveredCallbacks[.didReceive] == nil)
    }
}
