import EventStore
import Games
import Recorder
import Simulation

/// Records `count` simulated games of every registered kind in turn into `store`, with a
/// fixed clock: the same seed gives the same log every time.
public func playMixedGames(_ count: Int, into store: EventStore, seed: UInt64, noise: Double = 0) throws {
    let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: seed), games: .standard, seed: seed, noise: noise)
    for n in 0..<count { try simulator.play(simulator.mixedKind(n)) }
}
