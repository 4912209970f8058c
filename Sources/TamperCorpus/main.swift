// Builds the tamper corpus: a clean log of simulated games and one copy per fault,
// with a manifest of where each fault must be found. Run by tools/build-tamper-corpus.sh.
import EventStore
import Foundation
import Recorder
import Games
import Simulation
import TamperKit

let arguments = CommandLine.arguments
guard arguments.count > 1 else {
    print("usage: TamperCorpus OUTPUT-FOLDER [GAMES]")
    exit(2)
}
let folder = URL(fileURLWithPath: arguments[1])
let games = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let cleanPath = folder.appending(path: "clean.sqlite").path
let clean = try EventStore(path: cleanPath)
let simulator = Simulator(recorder: Recorder(store: clean, clock: FixedClock(), seed: 77), games: .standard, seed: 77, noise: 0.2)
for n in 0..<games { try simulator.play(simulator.mixedKind(n)) }
var manifest: [[String: Any]] = []
for fault in TamperKit.Fault.allCases {
    let path = folder.appending(path: "\(fault.rawValue).sqlite").path
    try? FileManager.default.removeItem(atPath: path)
    let tampered = try TamperKit.make(fault, from: clean, to: path)
    manifest.append(["fault": fault.rawValue, "file": "\(fault.rawValue).sqlite", "position": tampered.position, "check": tampered.check])
    print("\(fault.rawValue): must be found at position \(tampered.position) (\(tampered.check))")
}
let data = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys])
try data.write(to: folder.appending(path: "manifest.json"))
