import Replay
import ArgumentParser
import Foundation
import Presentation
import Projections

struct State: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state",
        abstract: "Show a game's state at a step: boards, each device's transcript and extension UI.")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The game's id (or its conversation's), or a unique prefix of it.") var game: String
    @Option(parsing: .unconditional, help: "The step (0 is before the first event; default: the last). Under --as a device, that device's own steps.") var at: Int?
    @OptionGroup var view: ViewOption
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let (opened, seenAs) = try await view.open(game, options)
        try opened.printState(at: at, as: seenAs, json: json)
    }
}

struct Diff: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "diff", abstract: "What changed in a game between two steps.")

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The game's id, or a unique prefix.") var game: String
    @Argument(help: "The earlier step (under --as a device, that device's own steps).") var from: Int
    @Argument(help: "The later step.") var to: Int
    @OptionGroup var view: ViewOption
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let (opened, seenAs) = try await view.open(game, options)
        try opened.checkStep(from)
        try opened.checkStep(to)
        let changes = try opened.replayer.diff(from: from, to: to, as: seenAs)
        if json {
            print(JSONStyle.text(.array(changes.map(\.jsonValue))))
        } else if changes.filter({ !$0.isBookkeeping }).isEmpty {
            print("no changes between steps \(from) and \(to)" + (changes.isEmpty ? "" : " but where the game's events end (--json lists it)"))
        } else {
            // Ids short, times readable, long values folded; --json has every change in full.
            changes.filter { !$0.isBookkeeping }.forEach { print($0.readable) }
        }
        if opened.reportDamage(through: to) { throw ExitCode.failure }
    }
}

/// `--as`: whose view a command shows, and the game opened as that view steps through it.
struct ViewOption: ParsableArguments {
    @Option(name: .customLong("as"),
            help: "Whose view: one of the conversation's devices (e.g. A: its own events, numbered as its own steps), or auditor for everything.")
    var perspective: String = "auditor"

    /// The game, as the view sees it (a device's own events alone), and the view.
    func open(_ game: String, _ options: GlobalOptions) async throws -> (OpenedGame, Perspective) {
        let (whole, seenAs) = try await openWhole(game, options)
        return (whole.seen(by: seenAs), seenAs)
    }

    /// The whole game (every device's events) and the view asked for.
    func openWhole(_ game: String, _ options: GlobalOptions) async throws -> (OpenedGame, Perspective) {
        let whole = try await OpenedGame(options: options, id: game)
        return (whole, try whole.perspective(perspective))
    }
}

extension OpenedGame {
    /// Prints the state at `step` (default: the last) as text or JSON; exits 1 after it
    /// when a damaged event left out comes at or before that step.
    func printState(at step: Int?, as seenAs: Perspective, json: Bool) throws {
        let step = step ?? replayer.stepCount
        try checkStep(step)
        let state = try replayer.state(at: step, as: seenAs)
        if json {
            print(try StateText.json(state, step: step, replayer: replayer, perspective: seenAs))
        } else {
            StateText.render(state, step: step, replayer: replayer, perspective: seenAs, focus: session, origin: origin).forEach { print($0) }
        }
        if reportDamage(through: step) { throw ExitCode.failure }
    }
}
