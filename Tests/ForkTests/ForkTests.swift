import MessagesHost
import EventStore
import Fork
import Foundation
import GameKit
import Games
import MessagesModel
import Projections
import RecordedEvents
import Recorder
import Replay
import Rerun
import Simulation
import TestSupport
import Testing

@Suite struct ForkingTests {
    /// A fork re-enacts what was shown: at every boundary between one user input (or
    /// arrival) and the next, each device's transcript and input field in the fork read
    /// as in the source, and the games stand as they did; then the fork reruns clean.
    @Test func aForkReenactsWhatEachDeviceShowedAtEveryInputBoundary() throws {
        let folder = try TemporaryFolder()
        let source = try EventStore(path: folder.path("source.sqlite"))
        try playMixedGames(8, into: source, seed: 73, noise: 0.25)
        let catalog = try GameCatalog(store: source, games: .standard)
        var compared = 0
        for (conversation, streams) in catalog.streams where (catalog.eventCounts[conversation] ?? 0) > 20 {
            let replayer = try Replayer(store: source, conversation: conversation, streams: streams, games: .standard)
            let boundaries = replayer.events.indices.filter { index in
                switch replayer.events[index].event {
                case .input, .transcript(.arrived, _): return true
                default: return false
                }
            }
            for step in boundaries.filter({ $0 > 0 }).enumerated().filter({ $0.offset % 5 == 0 }).map(\.element) {
                let out = try EventStore(path: folder.path("fork-\(conversation.uuid)-\(step).sqlite"))
                let fork = try GameFork(source: replayer, sourceStore: source, game: conversation.uuid.uuidString, at: step, into: out,
                                        seed: 5, clock: FixedClock())
                let original = try replayer.state(at: step)
                for device in fork.host.deviceIDs {
                    let shown = fork.host.transcript(on: device, in: fork.conversation).map { bubble -> String in
                        switch bubble.content {
                        case .summary(let text, _): return fork.host.display(text, on: device)
                        case .item(.message(let m)): return fork.host.display(m.caption ?? "message", on: device)
                        case .item(.text(let t)): return t
                        case .item(.sticker(let s)): return "sticker \(s.localizedDescription)"
                        case .item(.attachment(let url, let name)): return "attachment \(name ?? url)"
                        }
                    }
                    #expect(shown == (original.devices[device]?.transcript.map(\.shown) ?? []), "step \(step) device \(device)")
                    #expect((fork.host.staged(on: device, in: fork.conversation) == nil) == (original.devices[device]?.staged == nil))
                }
                let forkCatalog = try GameCatalog(store: out, games: .standard)
                #expect(forkCatalog.games.map(\.status) == original.orderedGames.map(\.status.rawValue), "step \(step)")
                #expect(forkCatalog.games.allSatisfy { $0.forkedFrom?.sourceStep == step })
                #expect(try Rerunner(games: .standard).rerun(store: out).allSatisfy { $0.outcome == .matched })
                compared += 1
            }
        }
        #expect(compared > 20)
    }
}
