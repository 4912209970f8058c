import ArgumentParser

@main
struct Gamelog: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gamelog",
        abstract: "Record, replay and audit turn-based games played through Messages extensions.",
        discussion: """
            Every lifecycle callback and every extension action is stored as a compressed, \
            hash-chained event in one SQLite file (default ./gamelog.sqlite).
            """,
        subcommands: [Demo.self, Simulate.self, GamesCommand.self, Log.self, State.self, Diff.self, ReplayCommand.self, Export.self, Import.self, Index.self, Migrate.self, Verify.self, Bisect.self, Info.self, DictionaryCommand.self])
}
