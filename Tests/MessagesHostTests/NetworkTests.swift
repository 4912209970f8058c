import Foundation
import MessagesHost
import MessagesModel
import Testing

/// The network between devices: each thing it does to a message, forced with a chance of
/// 1, and what Messages then shows on each side.
@Suite struct NetworkTests {
    /// Stages and sends a message from A without delivering it.
    func send(_ world: World, _ caption: String) throws {
        try world.host.perform(.openConversation(world.conversation), on: "A")
        if world.host.activeInstance(on: "A") == nil { try world.host.perform(.openExtension, on: "A") }
        world.spy("A").onTouch = { _, h in _ = SpyExtension.insert(caption, into: h) }
        try world.host.perform(.touch(.button("insert")), on: "A")
        try world.host.perform(.tapSend, on: "A")
    }

    func captions(_ world: World, on device: DeviceID) -> [String] {
        world.host.transcript(on: device, in: world.conversation).compactMap { $0.message?.caption }
    }

    func profile(latency: Int = 0, loss: Double = 0, failure: Double = 0, duplication: Double = 0, reordering: Double = 0,
                 offline: Double = 0) -> NetworkProfile {
        NetworkProfile(name: "test", latency: latency, loss: loss, failure: failure, duplication: duplication,
                       reordering: reordering, offline: offline)
    }

    @Test func aLostMessageNeverArrivesAndNobodyIsTold() throws {
        let world = try World()
        world.host.network = profile(loss: 1)
        try send(world, "lost")
        #expect(world.host.pendingDeliveries.isEmpty && world.host.networkEvents[.lost] == 1)
        #expect(captions(world, on: "A") == ["lost"] && captions(world, on: "B").isEmpty)
        #expect(world.host.latestMessage(on: "A")?.error == nil)
    }

    @Test func aFailedSendStaysWithItsErrorAndGoesNowhere() throws {
        let world = try World()
        world.host.network = profile(failure: 1)
        try send(world, "refused")
        #expect(world.host.pendingDeliveries.isEmpty && world.host.networkEvents[.failed] == 1)
        let mine = try #require(world.host.transcript(on: "A", in: world.conversation).last?.message)
        #expect(mine.error?.code == .unknown && mine.isPending == false)
    }

    /// Issue 41: a failed send no longer stalls the game: the user taps Try Again on its
    /// bubble and the same message goes out again, and arrives.
    @Test func tryAgainSendsAFailedMessageAgain() throws {
        let world = try World()
        world.host.network = profile(failure: 1)
        try send(world, "retried")
        let failed = try #require(world.host.transcript(on: "A", in: world.conversation).last?.message)
        #expect(failed.error != nil)
        // Only a failed bubble offers Try Again; the extension out of the way.
        let unknown = MessageID(UUID())
        #expect(throws: HostError.nothingToTryAgain(unknown)) { try world.host.perform(.tryAgain(unknown), on: "A") }
        if world.host.activeInstance(on: "A")?.style == .expanded { try world.host.perform(.collapse, on: "A") }
        world.host.network = profile()
        try world.host.perform(.tryAgain(failed.id), on: "A")
        let mine = world.host.transcript(on: "A", in: world.conversation).compactMap(\.message)
        #expect(mine.count == 1 && mine.first?.id == failed.id && mine.first?.error == nil, "\(mine)")
        world.host.deliverAll()
        #expect(captions(world, on: "B") == ["retried"])
        #expect(world.host.networkEvents[.failed] == 1 && world.host.networkEvents[.delivered] == 1)
        // Sent now: nothing left to try again.
        #expect(throws: HostError.nothingToTryAgain(failed.id)) { try world.host.perform(.tryAgain(failed.id), on: "A") }
    }

    /// Issue 41: a copy of a game's message may come late, after the next message of its
    /// session; Messages has the message and drops the copy, so the stale move never shows.
    @Test func aStaleCopyArrivingLateIsDropped() throws {
        let world = try World()
        world.host.network = profile(duplication: 1)
        let session = SessionID(UUID())
        func sendInSession(_ caption: String) throws {
            try world.host.perform(.openConversation(world.conversation), on: "A")
            if world.host.activeInstance(on: "A") == nil { try world.host.perform(.openExtension, on: "A") }
            world.spy("A").onTouch = { _, h in _ = SpyExtension.insert(caption, session: session, into: h) }
            try world.host.perform(.touch(.button("insert")), on: "A")
            try world.host.perform(.tapSend, on: "A")
        }
        try sendInSession("move 1")
        // The first copy now; the second waits for its later time.
        let firstDue = try #require(world.host.pendingDeliveries.map(\.due).min())
        #expect(world.host.pendingDeliveries.count == 2)
        try world.host.deliverNext(to: "B")
        world.host.network = profile()
        try sendInSession("move 2")
        try world.host.deliverNext(to: "B")
        #expect(captions(world, on: "B").last == "move 2")
        // The stale copy of move 1 comes when its time comes.
        while world.host.pendingDeliveries.contains(where: { $0.due > world.host.now }) { world.host.advanceClock() }
        #expect(world.host.pendingDeliveries.count == 1 && world.host.pendingDeliveries.allSatisfy { $0.due >= firstDue })
        world.host.deliverAll()
        #expect(captions(world, on: "B").last == "move 2")
        #expect(world.host.networkEvents[.duplicateDropped] == 1 && world.host.networkEvents[.staleCopyDropped] == 1)
    }

    @Test func aDuplicatedMessageArrivesOnce() throws {
        let world = try World()
        world.host.network = profile(duplication: 1)
        try send(world, "twice")
        #expect(world.host.pendingDeliveries.count == 2)
        world.host.deliverAll()
        #expect(captions(world, on: "B") == ["twice"])
        #expect(world.host.networkEvents[.delivered] == 1 && world.host.networkEvents[.duplicateDropped] == 1)
    }

    @Test func aReorderingNetworkDeliversALaterMessageFirst() throws {
        let world = try World()
        world.host.network = profile(reordering: 1)
        try send(world, "first")
        try send(world, "second")
        try world.host.deliverNext(to: "B")
        try world.host.deliverNext(to: "B")
        #expect(captions(world, on: "B") == ["second", "first"])
        #expect(world.host.networkEvents[.reordered] == 1)
    }

    @Test func aDelayedMessageWaitsForItsTick() throws {
        let world = try World()
        world.host.network = profile(latency: 50)
        var delayed = 0
        for n in 0..<20 {
            try send(world, "m\(n)")
            guard let due = world.host.pendingDeliveries.last?.due else { continue }
            if due > world.host.now {
                delayed += 1
                #expect(!world.host.canDeliver(to: "B"))
                #expect(throws: HostError.noSuchDelivery) { try world.host.deliverNext(to: "B") }
                while world.host.now < due { world.host.tick() }
                #expect(world.host.canDeliver(to: "B"))
            }
            world.host.deliverAll()
        }
        #expect(delayed > 0 && world.host.networkEvents[.delayed] == delayed)
        #expect(captions(world, on: "B").count == 20)
    }

    @Test func anOfflineSenderQueuesAndAnOfflineReceiverWaits() throws {
        let world = try World()
        world.host.setOnline("A", false)
        try send(world, "from the tunnel")
        #expect(world.host.pendingDeliveries.isEmpty && world.host.heldDeliveries.count == 1)
        #expect(world.host.networkEvents[.queuedWhileOffline] == 1)
        world.host.setOnline("B", false)
        world.host.setOnline("A", true)
        #expect(world.host.heldDeliveries.isEmpty && world.host.pendingDeliveries.count == 1)
        #expect(!world.host.canDeliver(to: "B") && world.host.devicesAwaitingDelivery.isEmpty)
        world.host.deliverAll()
        #expect(captions(world, on: "B").isEmpty)
        world.host.setOnline("B", true)
        world.host.deliverAll()
        #expect(captions(world, on: "B") == ["from the tunnel"])
        #expect(world.host.networkEvents[.wentOffline] == 2 && world.host.networkEvents[.cameOnline] == 2)
    }

    /// The ideal network draws nothing from the generator: a seed's identifiers are the
    /// same whatever chances another profile would have drawn.
    @Test func theIdealNetworkLeavesIdentifiersAsTheyWere() throws {
        func ids(_ network: NetworkProfile) throws -> [MessageID?] {
            let world = try World()
            world.host.network = network
            for n in 0..<5 {
                try send(world, "m\(n)")
                world.host.tick()
                world.host.deliverAll()
            }
            return captions(world, on: "A").isEmpty ? [] : world.host.transcript(on: "A", in: world.conversation).map { $0.message?.id }
        }
        let plain = try ids(.ideal), again = try ids(.ideal), doubled = try ids(profile(duplication: 1))
        #expect(plain.count == 5 && plain == again)
        #expect(plain == doubled, "the network's draws come from a generator of its own")
    }
}
