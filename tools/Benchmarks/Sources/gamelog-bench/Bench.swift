// gamelog's benchmarks, one executable: `gamelog-bench table|store|replay|commands`.
// Every figure is printed next to a baseline measured in the same run.
import ArgumentParser

@main struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gamelog-bench",
        abstract: "gamelog's benchmarks; each prints its figures next to a baseline measured in the same run.",
        subcommands: [Table.self, Store.self, ReplayCommand.self, Payloads.self, AppendOnly.self, ReplayMemory.self, ReplayStages.self, ReplayParameters.self, Uploads.self, CheckUploads.self])
}
