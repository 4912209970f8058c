import ArgumentParser
import Audit
import EventStore
import Foundation
import GameKit
import Games
import MessagesModel
import Presentation
import Projections
import RecordedEvents
import Replay

struct Bisect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bisect",
        abstract: "Find the first step of a game at which a check or invariant fails, and show that step.",
        // Not listed here: every command reads this text as it starts, and listing the plug-ins'
        // invariants cost each of them the games' set-up. A name it does not know gets the list.
        discussion: "NAME is a check (lifecycle, legality, consistency), a rule (e.g. legal-move) or an invariant of the game's plug-in (e.g. lives-never-negative); a name bisect does not know is answered with every name it does.")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The game's id (or its conversation's), or a unique prefix.") var game: String
    @Option(help: "The check, rule or invariant to bisect on.") var invariant: String
    @Option(name: .customLong("as"), help: "Whose view to show: a device (e.g. A) or auditor.") var perspective: String = "auditor"
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let auditor = Auditor(games: GamelogCLI.games)
        guard auditor.isRule(invariant) else {
            throw ValidationError("--invariant '\(invariant)' is no check, rule or invariant; choose one of \(auditor.checkNames.joined(separator: ", ")), or a rule name that `gamelog verify` reports.")
        }
        let opened = try await OpenedGame(options: options, id: game)
        let replayer = opened.replayer
        let seenAs = try opened.perspective(perspective)
        let kinds = Set(replayer.events.compactMap { e -> String? in
            if case .recordingStarted(let info) = e.event { return info.kind }
            return nil
        })
        if invariant == "legality", let unknown = kinds.first(where: { GamelogCLI.games.plugin(for: $0) == nil }) {
            throw ValidationError("the game is of kind \(unknown), which is not registered in this gamelog: its rules cannot be checked, so legality cannot be bisected. Bisect lifecycle or consistency, or use a gamelog built with that game.")
        }
        guard let result = auditor.bisect(replayer.conversation, replayer.events, rule: invariant) else {
            if json {
                print(#"{"holds":true,"invariant":"\#(invariant)","steps":\#(replayer.stepCount)}"#)
            } else {
                print("\(invariant) holds at every step of this game (\(replayer.stepCount) steps).")
            }
            return
        }

        // The states around it as the chosen view shows them, in that view's own steps
        // (a device's are its own events): the moment before the failing event, and after.
        let view = replayer.seen(by: seenAs)
        let (before, after) = (replayer.step(result.step - 1, in: view), replayer.step(result.step, in: view))
        if json {
            let finding = try JSONStyle.text(encoding: result.finding)
            let before = try StateText.json(try view.state(at: before, as: seenAs), step: before, replayer: view, perspective: seenAs)
            let after = try StateText.json(try view.state(at: after, as: seenAs), step: after, replayer: view, perspective: seenAs)
            print(#"{"holds":false,"step":\#(result.step),"finding":\#(finding),"before":\#(before),"after":\#(after)}"#)
            throw ExitCode(1)
        }
        print("first failing step: \(result.step) of \(replayer.stepCount)")
        print(result.finding.description)
        print("\n--- before (step \(result.step - 1)) ---")
        StateText.render(try view.state(at: before, as: seenAs), step: before, replayer: view,
                         perspective: seenAs, focus: opened.session).forEach { print($0) }
        print("\n--- after (step \(result.step)) ---")
        StateText.render(try view.state(at: after, as: seenAs), step: after, replayer: view,
                         perspective: seenAs, focus: opened.session).forEach { print($0) }
        throw ExitCode(1)
    }
}
