import ArgumentParser
import EventStore
import Fork
import Foundation
import Games
import MessagesModel
import Recorder
import Replay

struct ForkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fork",
        abstract: "Branch a recorded game at a step into a new log, then play on with new inputs.",
        discussion: """
            The game is re-enacted up to the step in a fresh simulated world (users' inputs and \
            arrivals, in the order they happened; everything else is produced again) and recorded \
            into OUT as new streams that name their origin. The source log is only read. New inputs \
            come from --input, one step a line: `B touch cell 4`, `A send`, `B deliver`, \
            `A tap-latest`, `A open`, `A open-extension`, `B expand`, `B collapse`, `A dismiss`, \
            `A delete`, `A touch button Start game`, `A touch alert`, `A leave` (# starts a comment).
            """)

    @OptionGroup var options: GlobalOptions
    @Argument(help: "The game's id (or its conversation's), or a unique prefix.") var game: String
    @Option(parsing: .unconditional, help: "The step to branch after (0 is before the first event).") var at: Int
    @Option(help: ArgumentHelp("The log to write the fork into (created if missing).", valueName: "OUT.sqlite")) var into: String
    @Option(help: ArgumentHelp("A file of new steps to play after the fork point; - reads standard input.", valueName: "SCRIPT"))
    var input: String?
    @Option(help: "The new world's seed (identifiers).") var seed: UInt64 = 1
    @OptionGroup var signing: SigningOptions

    func validate() throws {
        guard !Self.sameFile(into, options.db) else {
            throw ValidationError("--into must name another file than --db (here the two are one file, through a link or `..`): a fork never writes its source.")
        }
    }

    /// Whether two paths reach one file: the same path once `..` and symbolic links are
    /// resolved, or, for files that exist, the same device and inode (a hard link).
    static func sameFile(_ a: String, _ b: String) -> Bool {
        func resolved(_ path: String) -> String {
            // The folder resolves even when the file does not exist yet.
            let url = URL(fileURLWithPath: path).standardizedFileURL
            let file = url.resolvingSymlinksInPath()
            if FileManager.default.fileExists(atPath: file.path) { return file.path }
            return url.deletingLastPathComponent().resolvingSymlinksInPath().appending(path: url.lastPathComponent).path
        }
        if resolved(a) == resolved(b) { return true }
        var first = stat(), second = stat()
        guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    func run() async throws {
        let opened = try await OpenedGame(options: options, id: game)
        try opened.checkStep(at)
        // Read the script before anything is written, so a bad line leaves OUT alone.
        var lines: [(number: Int, text: String)] = []
        if let input {
            let text: String
            if input == "-" {
                text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            } else {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: input, isDirectory: &isFolder) else {
                    throw ValidationError("--input: \(input): No such file; nothing was written.")
                }
                guard !isFolder.boolValue, let data = FileManager.default.contents(atPath: input) else {
                    throw ValidationError("--input: cannot read \(input) (\(isFolder.boolValue ? "it is a folder" : "no permission to read it")); nothing was written.")
                }
                text = String(decoding: data, as: UTF8.self)
            }
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty && !trimmed.hasPrefix("#") { lines.append((index + 1, trimmed)) }
            }
        }
        let out = try EventStore(path: into, access: .readWrite)
        let signer = try signing.signer(logPath: out.path)
        let fork: GameFork
        do {
            fork = try GameFork(source: opened.replayer, sourceStore: opened.store, game: game, at: at, into: out, seed: seed,
                                keys: signer.key)
        } catch EventStoreError.versionConflict {
            // The same seed makes the same world, whose recordings the file already holds.
            throw ValidationError("\(into) already holds a fork made with seed \(seed) (the same world's recordings); pass another --seed or another --into. Nothing was written.")
        }
        var played = 0
        for line in lines {
            guard let (device, step) = fork.parse(line.text) else {
                throw ValidationError("\(input!):\(line.number): '\(line.text)' is not a step (e.g. `B touch cell 4`, `A send`, `B deliver`).")
            }
            do {
                try fork.play(step, on: device)
            } catch {
                throw ValidationError("\(input!):\(line.number): \(error); the fork and the steps before this line are kept in \(into).")
            }
            played += 1
        }
        let id = fork.conversation.uuid.uuidString.lowercased()
        print("forked \(game) at step \(at) of \(opened.replayer.stepCount) into \(into) as conversation \(id.prefix(8)); played \(played) new steps")
        print("Next: `gamelog replay \(id.prefix(8)) --db \(into)` shows the branch; `gamelog verify --db \(into)` checks it.")
    }
}
