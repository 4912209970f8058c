import EventStore
import Games
import Recorder
import Replay
import Simulation

// Record a simulated game of tic-tac-toe into a SQLite log.
let store = try EventStore(path: "games.sqlite")
let simulator = Simulator(recorder: Recorder(store: store, seed: 1), games: .standard, seed: 1)
let report = try simulator.play("tictactoe")
print(report.outcome)

// Read the log: every move that arrived on a device.
for event in try store.events(EventQuery(types: ["transcript.arrived"])) { print(event.position, event.type) }

// Replay it: the game as the auditor saw it, and as device B saw it (its own events only).
let catalog = try GameCatalog(store: store, games: .standard)
let replayer = try Replayer(store: store, conversation: report.conversation,
                            streams: catalog.streams[report.conversation] ?? [], games: .standard)
let end = try replayer.state(at: replayer.stepCount)
print("auditor:", end.orderedGames.map { "\($0.kind) \($0.status.rawValue), winner \($0.winner ?? "none")" })
let bob = replayer.seen(by: .device("B"))
let seenByBob = try bob.state(at: bob.stepCount, as: .device("B"))
print("device B, \(bob.stepCount) steps:", seenByBob.orderedGames.map { "\($0.kind) \($0.status.rawValue)" })
