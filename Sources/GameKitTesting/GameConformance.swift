import Foundation
import EventStore
import GameKit
import Interchange
import MessagesModel
import Projections
import RecordedEvents
import Recorder
import Replay
import Rerun
import Simulation

/// What a conformance run found: counts that show it checked something, and each
/// failure as a sentence.
public struct ConformanceReport: Sendable, CustomStringConvertible {
    public var kind: String
    /// Games simulated, and how many of them reached their end.
    public var games = 0
    public var finishedGames = 0
    /// Recordings re-run, and how many produced exactly what was recorded.
    public var recordings = 0
    public var identicalReruns = 0
    /// Device views compared between the merged log and the device's own export.
    public var viewsCompared = 0
    /// (step, device) pairs at which the game had a secret from that device, each
    /// looked for on every surface.
    public var secretChecks = 0
    /// Surfaces searched for secrets (states, events, transcripts).
    public var surfacesSearched = 0
    public var failures: [String] = []

    public var passed: Bool { failures.isEmpty }

    public var description: String {
        "\(kind): \(finishedGames)/\(games) games ended, \(identicalReruns)/\(recordings) recordings re-ran identically, "
            + "\(viewsCompared) device views matched their own exports, \(secretChecks) secret checks over \(surfacesSearched) surfaces"
            + (failures.isEmpty ? "" : "; \(failures.count) failures:\n" + failures.prefix(20).joined(separator: "\n"))
    }
}

/// A conformance kit for any game plug-in: what every game must hold for gamelog's
/// audits, replays and views to be right about it. Run it from your game's tests:
///
///     let report = try GameConformance.check(Codebreaker.game, games: 20)
///     #expect(report.passed, "\(report)")
///
/// It plays simulated games into a real SQLite log in a temporary folder and checks:
/// - every game ends (the simulated players reach the rules' end);
/// - every recording re-runs identically through a fresh extension;
/// - a device's view folded from the merged log equals the one folded from that
///   device's own export (a player's side alone tells the same story);
/// - no secret the game declares (``GamePlugin/secrets(of:hiddenFrom:)``) appears in
///   anything shown to a device it is hidden from, at any step: the device's state
///   (board, transcripts, staged message) and the event as that device's view shows it.
public enum GameConformance {
    public static func check(_ plugin: any GamePlugin, games: Int = 12, seed: UInt64 = 1, noise: Double = 0.1) throws -> ConformanceReport {
        var report = ConformanceReport(kind: plugin.kind)
        let folder = FileManager.default.temporaryDirectory.appending(path: "gamelog-conformance-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let registry = GameRegistry([plugin])
        let store = try EventStore(path: folder.appending(path: "merged.sqlite").path)
        let simulator = Simulator(recorder: Recorder(store: store, clock: FixedClock(), seed: seed), games: registry, seed: seed, noise: noise)
        for number in 0..<games {
            let played = try simulator.play(plugin.kind)
            report.games += 1
            if played.finished && played.isOver {
                report.finishedGames += 1
            } else {
                report.failures.append("game \(number + 1) did not end: \(played.outcome) after \(played.steps.count) steps")
            }
        }

        for result in try Rerunner(games: registry).rerun(store: store) {
            report.recordings += 1
            if result.outcome == .matched {
                report.identicalReruns += 1
            } else {
                report.failures.append("recording \(result.stream) on \(result.device) re-ran \(result.outcome.rawValue)"
                                       + (result.divergence.map { ": \($0)" } ?? ""))
            }
        }

        let index = try GameIndex(store: store)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for conversation in try index.conversations() {
            let streams = try index.streams(of: conversation)
            let replayer = try Replayer(store: store, conversation: conversation, streams: streams, games: registry)
            guard replayer.events.count > 0 else { continue }
            try checkSecrets(plugin, replayer, encoder, &report)
            for device in replayer.devices {
                try compareWithOwnExport(device, conversation, replayer, store, folder, registry, &report)
            }
        }
        return report
    }

    /// At every step, each device's surfaces hold none of the secrets hidden from it.
    private static func checkSecrets(_ plugin: any GamePlugin, _ replayer: Replayer, _ encoder: JSONEncoder,
                                     _ report: inout ConformanceReport) throws {
        for step in 1...replayer.events.count {
            let truth = try replayer.state(at: step)
            for device in replayer.devices {
                let owner = truth.devices[device]?.ownerName
                let secrets = truth.orderedGames.flatMap { plugin.secrets(of: $0.board, hiddenFrom: owner) }
                guard !secrets.isEmpty else { continue }
                report.secretChecks += 1
                let perspective = Perspective.device(device)
                var surfaces: [(String, Data)] = [("state", try encoder.encode(try replayer.state(at: step, as: perspective)))]
                if let event = replayer.viewedEvent(at: step, as: perspective) {
                    surfaces.append(("event \(event.type)", Data(event.payload())))
                }
                for (name, bytes) in surfaces {
                    report.surfacesSearched += 1
                    let text = String(decoding: bytes, as: UTF8.self)
                    for secret in secrets where text.contains(secret) {
                        report.failures.append("step \(step): \(device)'s \(name) shows \(secret), hidden from \(owner ?? "its owner")")
                    }
                }
            }
        }
    }

    /// The device's view from the merged log equals the view from its own export alone.
    private static func compareWithOwnExport(_ device: DeviceID, _ conversation: ConversationID, _ replayer: Replayer,
                                             _ store: EventStore, _ folder: URL, _ registry: GameRegistry,
                                             _ report: inout ConformanceReport) throws {
        let own = Set(replayer.events.filter { $0.device == device }.map(\.stream))
        var lines: [String] = []
        _ = try Interchange.export(from: store, streams: own) { lines.append($0) }
        let alone = try EventStore(path: folder.appending(path: "\(device.name)-\(conversation.uuid.uuidString).sqlite").path)
        try Interchange.import(try Interchange.read(lines.joined(separator: "\n"), file: "export"), into: alone)
        let single = try Replayer(store: alone, conversation: conversation, streams: own, games: registry)
        let merged = try replayer.state(at: replayer.events.count, as: .device(device))
        let fromExport = try single.state(at: single.events.count, as: .device(device))
        report.viewsCompared += 1
        // Positions and step numbers differ between the two logs; what the device saw may not.
        if merged.devices != fromExport.devices {
            report.failures.append("\(device)'s transcript and screen differ between the merged log and its own export")
        }
        let boards = { (state: ConversationState) in state.orderedGames.map { [$0.session.uuid.uuidString, $0.status.rawValue, "\($0.board)"] } }
        if boards(merged) != boards(fromExport) {
            report.failures.append("\(device)'s games differ between the merged log and its own export: \(boards(merged)) vs \(boards(fromExport))")
        }
    }
}
