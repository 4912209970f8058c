import ArgumentParser
import EventStore
import Foundation
import SharedStore

struct Gamelog: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gamelog",
        abstract: "Record, replay and audit turn-based games played through Messages extensions.",
        discussion: """
            Every lifecycle callback and every extension action is stored as a compressed, \
            hash-chained event in one SQLite file (default ./gamelog.sqlite, or $GAMELOG_DB).
            """,
        version: GamelogCLI.version,
        subcommands: [Demo.self, Simulate.self, GamesCommand.self, Log.self, State.self, Diff.self, ReplayCommand.self, Export.self,
                      Import.self, Index.self, Migrate.self, Verify.self, RerunCommand.self, ForkCommand.self, Serve.self, Keys.self, Heads.self, Bisect.self, Info.self, DictionaryCommand.self,
                      Collect.self, Push.self, ProofCommand.self, WitnessCommand.self])

    /// Parses and runs, with `--db` accepted before the subcommand too, and argument
    /// errors as one or two plain lines; exits.
    ///
    /// On the main actor, so a synchronous command runs on the main thread as it would in
    /// a synchronous program. An asynchronous command (every one that may reach a shared
    /// store or a collector) runs on threads that may block (``SharedStore/blocking(_:)``):
    /// it reads through synchronous readers and checks on threads of its own, and the
    /// cooperative pool (one thread per core) stays free for the store's connections.
    @MainActor
    static func start() async -> Never {
        let arguments = movingGlobalOptions(Array(CommandLine.arguments.dropFirst()))
        var command: ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            exitExplaining(error, arguments: arguments)
        }
        do {
            if let asynchronous = command as? AsyncParsableCommand {
                try await runMayBlock(asynchronous)
            } else {
                try command.run()
            }
        } catch {
            // Every command's errors end here: the library's are printed once, with their hint.
            if let code = reportedFailure(error) { Foundation.exit(code.rawValue) }
            exitExplaining(error, arguments: arguments)
        }
        Foundation.exit(0)
    }

    private nonisolated static func runMayBlock(_ command: sending AsyncParsableCommand) async throws {
        var command = command
        try await SharedStore.blocking { try await command.run() }
    }

    /// `gamelog --db X games` means `gamelog games --db X`: every command takes --db.
    static func movingGlobalOptions(_ arguments: [String]) -> [String] {
        var moved: [String] = [], rest = arguments
        while let first = rest.first, first == "--db" || first.hasPrefix("--db=") {
            rest.removeFirst()
            moved.append(first)
            if first == "--db", let value = rest.first {
                moved.append(value)
                rest.removeFirst()
            }
        }
        guard !moved.isEmpty, let subcommand = rest.first else { return arguments }
        return [subcommand] + moved + rest.dropFirst()
    }

    static func exitExplaining(_ error: Error, arguments: [String]) -> Never {
        let code = exitCode(for: error)
        if code == .success || error is CleanExit {
            exit(withError: error) // help and version requests print in full
        }
        let message = self.message(for: error)
        if !message.isEmpty {
            let subcommand = arguments.first { !$0.hasPrefix("-") }.flatMap { name in
                configuration.subcommands.first { $0._commandName == name }?._commandName
            }
            var said = message.replacingOccurrences(of: "Error: ", with: "")
            // `--seed -5`: the parser takes -5 for an option and says the value is missing.
            if said.hasPrefix("Missing value for '"), let option = said.split(separator: "'").dropFirst().first?.split(separator: " ").first,
               let at = arguments.firstIndex(of: String(option)), at + 1 < arguments.count,
               arguments[at + 1].range(of: #"^-[0-9]"#, options: .regularExpression) != nil {
                said = "\(option) \(SafeText.line(arguments[at + 1])): a negative number is not accepted here"
            }
            // An argument (an id, a path) a screen long is named by its start.
            Terminal.standardError("error: " + shortened(said))
            // A mistyped command: name the nearest ones.
            if subcommand == nil, let first = arguments.first, !first.hasPrefix("-") {
                let names = configuration.subcommands.map { $0._commandName }
                let near = Spelling.nearest(first, in: names)
                if !near.isEmpty { Terminal.standardError("Did you mean \(near.map { "`gamelog \($0)`" }.joined(separator: " or "))?") }
            }
            if error is ValidationError || code == .validationFailure {
                Terminal.standardError("See `gamelog \(subcommand.map { $0 + " " } ?? "")--help`.")
            }
        }
        Foundation.exit(code.rawValue)
    }
}
