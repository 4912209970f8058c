import EventStore
import Foundation
import GameKit
import Games
import Recorder
import Replay
import Simulation
import TestSupport

/// A log of one simulated game of every kind (players who stray now and then), in a
/// temporary folder, with its catalog: for tests that check something at every step of
/// games of every kind.
struct EveryKindLog {
    let folder: TemporaryFolder
    let store: EventStore
    let catalog: GameCatalog

    init(seed: UInt64) throws {
        folder = try TemporaryFolder()
        store = try EventStore(path: folder.path("every-kind-\(seed).sqlite"))
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: seed), games: .standard, seed: seed, noise: 0.3)
        for kind in GameRegistry.standard.kinds { _ = try simulator.play(kind) }
        catalog = try GameCatalog(store: store, games: .standard)
    }

    /// Each conversation's replayer.
    func replayers() throws -> [Replayer] {
        try catalog.streams.map { try Replayer(store: store, conversation: $0.key, streams: $0.value, games: .standard) }
    }
}
