import ArgumentParser
import HTTPServing
import Audit
import EventStore
import Foundation
import Games
import Hummingbird
import MessagesModel
import SharedStore
import WebViewer

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Show the log in a browser: every game, and each game step by step from each device's view.",
        discussion: """
            Opens the database read-only (nothing is written to it or beside it) and serves pages \
            and a JSON API (/api/games?page=N&per_page=M, /api/games/ID, /api/games/ID/steps/N?as=D, /api/verify/ID) \
            on loopback unless --host says otherwise. A finished audit is kept in $GAMELOG_CACHE/viewer \
            (default ~/.cache/gamelog/viewer), named by a hash of the file's bytes and of this build, so the \
            next start on the same file shows every verdict at once. Ctrl-C stops it.
            """)

    @OptionGroup var options: GlobalOptions
    @Option(help: "The port to listen on (0: any free one).") var port: Int = 8080
    @Option(help: "The address to listen on; 0.0.0.0 opens it to the network.") var host: String = "127.0.0.1"

    @Flag(help: "Read and audit the log again, though an earlier start kept the game list and audit of this very file (in $GAMELOG_CACHE/viewer).")
    var fresh = false
    @Flag(help: "Follow a log that is still being written (by `simulate`, a recorder, `import` or a collector): pages show new events as they are appended.")
    var follow = false

    /// This program's size and time of change: another build never reuses kept audits.
    static var buildIdentity: String {
        let executable = Bundle.main.executablePath.flatMap { try? FileManager.default.attributesOfItem(atPath: $0) }
        let size = executable?[.size] as? Int ?? 0
        let changed = (executable?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "gamelog \(size) \(changed)"
    }

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be in 0...65535, not \(port).") }
    }

    func run() async throws {
        let follow = self.follow
        let shared = try options.sharedStore()
        let keepIn = fresh ? nil : SharedStore.defaultCacheFolder.appending(path: "viewer")
        let model: ViewerModel
        var shownAs = options.db
        if let shared, try options.nativeReader() != nil {
            // Pages and the audit read the store as it is: nothing is copied.
            model = try ViewerModel(location: shared.location.description, games: GamelogCLI.games, reader: { shared.reader() })
            shownAs = "\(shared.location) as it is in PostgreSQL"
        } else {
            var copy: LocalCopy?
            if let shared { copy = try await options.localCopy(of: shared) }
            if let shared { shownAs = "\(shared.location) as copied now" }
            if follow, shared != nil {
                throw CommandFailure("--follow reads a shared store as it is, and the catalog of \(shared!.location) does not cover every event (it is read through a copy)")
            }
            model = try ViewerModel(path: copy?.path ?? options.db, games: GamelogCLI.games, keepingResultsIn: follow ? nil : keepIn,
                                    build: Self.buildIdentity, followingAppends: follow)
        }
        if follow {
            do {
                try model.follow()
            } catch let error as ViewerFollowError {
                throw CommandFailure("\(error); `gamelog index --db \(options.db)` fills the catalog")
            }
        }
        var reader: (@Sendable (String) async throws -> Bool)?
        if let shared {
            // The audits `verify --workers` stored are shown, not computed again; the
            // background audit checks the other games and the whole log's signatures.
            let audits = try await storedAudits(shared)
            try model.useStoredAudits(audits)
            if !audits.isEmpty {
                Terminal.standardError("showing the audits `verify --workers` stored for \(audits.count) games")
            }
            // A shared store's games are the studio's: beyond loopback, only its readers see them.
            if !["127.0.0.1", "localhost", "::1"].contains(host.lowercased()) {
                reader = { token in try await shared.role(ofToken: token) != nil }
            }
        }
        // A log file shown beyond loopback: its games are its holder's, so a reader token is
        // made for this run and printed once; requests from the network give it (as the
        // password, any user name), and then any name of this machine reaches the viewer.
        var madeToken: String?
        if shared == nil, !HTTPServing.isLoopback(host) {
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            madeToken = token
            reader = { given in given.utf8.count == token.utf8.count && zip(given.utf8, token.utf8).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0 }
        }
        // The list and the verdicts fill in while the pages already answer.
        model.listInBackground()
        model.auditInBackground()
        let path = shownAs
        let host = self.host, printedToken = madeToken
        let app = WebViewer.application(model, host: host, port: port, reader: reader) { port in
            // Written at once (not buffered), so a script waiting for this line sees it.
            FileHandle.standardOutput.write(Data("gamelog serve: http://\(host):\(port)/games (a read-only view of \(path)\(follow ? ", following it as it grows" : "")); Ctrl-C stops it\n".utf8))
            if let printedToken {
                FileHandle.standardOutput.write(Data("reader token for this run (the password, any user name): \(printedToken)\n".utf8))
            }
        }
        // The server is asynchronous; this command waits for it, as `swift run` users expect.
        try await runServer(app, host: host, port: port)
    }

    /// The audits the store keeps, by conversation; one that does not read is left out
    /// (its game is checked here instead).
    private func storedAudits(_ shared: SharedStore) async throws -> [ConversationID: ViewerModel.StoredAudit] {
        var audits: [ConversationID: ViewerModel.StoredAudit] = [:]
        let decoder = JSONDecoder()
        for row in try await shared.storedAudits() {
            guard row.report.utf8.count < 16 << 20, let findings = try? decoder.decode([Finding].self, from: Data(row.report.utf8)) else {
                Terminal.standardError("note: the stored audit of game \(row.game.uuidString.lowercased()) does not read; that game is checked here")
                continue
            }
            audits[ConversationID(row.game)] = .init(findings: findings, revision: row.revision)
        }
        return audits
    }
}
