import ArgumentParser
import EventStore
import Foundation
import Games
import Hummingbird
import SharedStore
import WebViewer

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the log in a browser: every game, and each game step by step from each device's view.",
        discussion: """
            Opens the database read-only (nothing is written to it or beside it) and serves pages \
            and a JSON API (/api/games?page=N&per_page=M, /api/games/ID, /api/games/ID/steps/N?as=D, /api/verify/ID) \
            on loopback unless --host says otherwise. Ctrl-C stops it.
            """)

    @OptionGroup var options: GlobalOptions
    @Option(help: "The port to listen on (0: any free one).") var port: Int = 8080
    @Option(help: "The address to listen on; 0.0.0.0 opens it to the network.") var host: String = "127.0.0.1"

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be in 0...65535, not \(port).") }
    }

    func run() throws {
        try reportingErrors {
            let model = try ViewerModel(path: try options.readablePath(), games: GamelogCLI.games)
            model.auditInBackground()
            let path = SharedStoreLocation.isURL(options.db) ? "\(try SharedStore(url: options.db).location) as copied now" : options.db
            let host = self.host
            let app = WebViewer.application(model, host: host, port: port) { port in
                // Written at once (not buffered), so a script waiting for this line sees it.
                FileHandle.standardOutput.write(Data("gamelog serve: http://\(host):\(port)/games (a read-only view of \(path)); Ctrl-C stops it\n".utf8))
            }
            // The server is asynchronous; this command waits for it, as `swift run` users expect.
            try runServer(app, host: host, port: port)
        }
    }
}
