import ArgumentParser
import Collector
import EventStore
import Foundation
import Hummingbird
import SharedStore

struct Collect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "collect",
        abstract: "Collect devices' logs over HTTP into a shared store, and countersign their heads as a witness.",
        discussion: """
            Serves the collector API (POST /v1/upload, POST /v1/devices, GET /v1/devices/KEY, GET /v1/heads) \
            on --host:--port, storing into the PostgreSQL store --db names (migrated first). A collector keeps \
            nothing of its own: run several against one store behind any load balancer, each with the same \
            --witness-key. On the store's first start it writes the administrator's token (enrolls devices, \
            `gamelog keys enroll`) and a reader token (reads the API when listening beyond loopback) to the \
            keys folder, mode 0600; they are never stored, only their hashes. Ctrl-C stops it.
            """)

    @OptionGroup var options: GlobalOptions
    @Option(help: "The port to listen on (0: any free one).") var port: Int = 8090
    @Option(help: "The address to listen on; 0.0.0.0 opens it to the network (reads then need the reader token).") var host: String = "127.0.0.1"
    @Option(help: "The witness's name in its cosignatures (a schema-less URL naming it).") var witness: String = "gamelog-collector"
    @Option(help: ArgumentHelp("The witness's signing key, made if missing (default: collector-witness.key in the keys folder).",
                               valueName: "FILE")) var witnessKey: String?
    @Option(help: ArgumentHelp("The keys folder (default $GAMELOG_KEYS, else ~/.config/gamelog/keys).", valueName: "DIR")) var keys: String?
    @Option(help: ArgumentHelp("Connections this collector opens to the store at most; requests beyond wait their turn (keep collectors × N below PostgreSQL's max_connections).",
                               valueName: "N")) var connections: Int = 8
    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Keep the game summaries of the conversations uploads store into current (what a page of games reads instead of folding), a pass at most every second after the writes, giving way to uploads in flight.",
        discussion: "--no-summaries leaves them to `gamelog index --db URL` (run by a cron job, say): a page folds a conversation whose summary is not current."))
    var summaries = true
    @Option(name: .customLong("send-to-witness"), help: ArgumentHelp("A witness (C2SP tlog-witness, e.g. `gamelog witness`) that every device's newest accepted head is sent to, with a consistency proof; its cosignatures are stored with the head. A witness that is down is tried again every few seconds and never holds up an upload. Repeatable.", valueName: "URL"))
    var sendToWitness: [String] = []

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be in 0...65535, not \(port).") }
        guard (1...1_000).contains(connections) else { throw ValidationError("--connections must be in 1...1000, not \(connections).") }
        guard !witness.isEmpty, witness.utf8.count <= 200, !witness.contains(where: { $0.isWhitespace || $0 == "+" }) else {
            throw ValidationError("--witness is a name without spaces or '+' (e.g. collector.example.com/gamelog).")
        }
    }

    func run() async throws {
        guard let shared = try options.sharedStore(maximumConnections: connections) else {
            throw ValidationError("collect stores into a shared store: pass --db postgres://user@host:port/database (`gamelog migrate --db URL` makes its schema).")
        }
        let folder = try KeyFolder(path: keys ?? KeyFile.defaultFolder)
        let keyPath = witnessKey ?? folder.path + "/collector-witness.key"
        let key: DeviceKey
        if FileManager.default.fileExists(atPath: keyPath) {
            key = try KeyFile.read(keyPath)
        } else {
            key = try DeviceKey.random(device: "collector-witness")
            try KeyFile.write(key, to: keyPath)
        }
        _ = try await shared.migrate()
        for role in [SharedStore.TokenRole.admin, .reader] {
            if let token = try await shared.makeFirstToken(role) {
                let path = folder.path + "/collector-\(role.rawValue).token"
                try? FileManager.default.removeItem(atPath: path)
                guard FileManager.default.createFile(atPath: path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
                    throw ValidationError("cannot write \(path); pass another --keys folder.")
                }
                // Written at once, not buffered: whoever started the collector waits for this line.
                FileHandle.standardOutput.write(Data("wrote the \(role == .admin ? "administrator's" : "reader") token to \(path) (mode 0600); only its hash is in the store\n".utf8))
            }
        }
        let collector = Collector(store: shared, witness: witness, witnessKey: key, games: summaries ? GamelogCLI.games : nil)
        let witnessURLs = try sendToWitness.map { try HTTPClient.baseURL($0, option: "--send-to-witness") }
        let host = self.host, witness = self.witness
        let app = CollectorServer.application(collector, host: host, port: port) { port in
            FileHandle.standardOutput.write(Data("""
                gamelog collect: http://\(host):\(port) into \(shared.location); witness \(witness) \
                (verifier key \(Cosignature.verifierKey(witness: witness, publicKey: key.publicKey))); Ctrl-C stops it

                """.utf8))
        }
        try await withThrowingTaskGroup { group in
            if !witnessURLs.isEmpty {
                // Off the request path: uploads are answered whatever the witnesses do.
                group.addTask { await WitnessForwarder(store: shared, witnesses: witnessURLs).run() }
            }
            try await runServer(app, host: host, port: port)
            group.cancelAll()
        }
    }
}

/// Runs a Hummingbird application until it stops, with the bind errors said in the user's words.
///
/// On Swift's cooperative pool, not the threads that may block the command ran on: the
/// server's requests are its tasks, and they inherit where this runs.
func runServer(_ app: some ApplicationProtocol, host: String, port: Int) async throws {
    // A stop signal lets requests in progress finish, for at most `stopGrace`: one that
    // waits on a store that went away must not keep the process (and its port) alive.
    // Cut short, a request ends as a crash would end it: its transaction is not committed.
    let stops = [SIGTERM, SIGINT].map { number -> DispatchSourceSignal in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            DispatchQueue.global().asyncAfter(deadline: .now() + stopGrace) {
                Terminal.standardError("gamelog: requests still in progress \(Int(stopGrace)) s after the stop signal; stopping without them (nothing half-stored)")
                exit(1)
            }
        }
        source.resume()
        return source
    }
    defer { stops.forEach { $0.cancel() } }
    var failure: Error?
    do {
        try await withTaskExecutorPreference(globalConcurrentExecutor) { try await app.runService() }
    } catch {
        failure = error
    }
    if let error = failure {
        let text = String(describing: error)
        if text.contains("Address already in use") {
            throw ValidationError("port \(port) on \(host) is in use by another program: pass another --port (or --port 0 for any free one).")
        }
        if text.contains("UnknownHost") {
            throw ValidationError("--host \(SafeText.line(host)) is no address or name this machine can resolve; pass an address of this machine, e.g. 127.0.0.1 (or 0.0.0.0 for every network).")
        }
        if text.contains("Cannot assign requested address") || text.contains("bind") {
            throw ValidationError("cannot listen on \(host):\(port) (\(text)); pass a --host this machine has, e.g. 127.0.0.1.")
        }
        throw error
    }
}

/// How long a stopping server waits for its requests in progress.
private let stopGrace: Double = 30

/// Sends every device's newest head in a shared store to witnesses, and stores what they
/// cosign: a round every few seconds, each head a witness has not cosigned yet sent again,
/// so a witness that was down catches up when it is back.
struct WitnessForwarder {
    let store: SharedStore
    let witnesses: [URL]
    static let interval: Duration = .seconds(2)

    /// Rounds until the task is cancelled (the collector stops).
    func run() async {
        // Heads each witness cosigned (witness, key, size), and what was said once already.
        var cosigned: Set<String> = [], told: Set<String> = []
        while !Task.isCancelled {
            do {
                try await round(cosigned: &cosigned, told: &told)
            } catch {
                let text = "\(error)"
                if told.insert(text).inserted { Terminal.standardError("witnesses: \(text); trying again") }
            }
            try? await Task.sleep(for: Self.interval)
        }
    }

    private func round(cosigned: inout Set<String>, told: inout Set<String>) async throws {
        let heads = try await store.latestHeads()
        // The proofs are read from the store as it is.
        let log = store.reader()
        for base in witnesses {
            let origin = HTTPClient.origin(of: base)
            for head in heads {
                let key = "\(origin) \(Hex.string(head.head.publicKey)) \(head.head.size)"
                guard !cosigned.contains(key) else { continue }
                switch try await WitnessClient.cosign(head.head, store: log, witness: base) {
                case .cosigned(let cosignature):
                    if !head.cosignatures.contains(where: { $0.witnessKey == cosignature.witnessKey }) {
                        let pair = (head.head, cosignature)
                        _ = try await store.writeNatively { try $0.store(cosignatures: [pair]) }
                    }
                    cosigned.insert(key)
                case .refused(let reason):
                    if told.insert(reason).inserted { Terminal.standardError("witnesses: \(reason)") }
                }
            }
        }
    }
}
