import EventStore
import Foundation
import GRDB
import MessagesModel
import Replay
import SharedStore
import TestSupport
import Testing

/// The collector as a studio runs it: real processes (`gamelog collect`, `keys enroll`,
/// `push`, `verify`, `games`) over a PostgreSQL server of the test's own, which is crashed
/// and restarted under them.
@Suite(.serialized) struct CollectorCLITests {
    struct Failure: Error { var text: String; init(_ text: String) { self.text = text } }

    /// The folder, environment and store of one run: keys and cached copies stay in the folder.
    struct Studio {
        let folder: Folder
        let server: PostgresServer
        let url: String
        var environment: [String: String] {
            ["GAMELOG_KEYS": folder.path("keys"), "GAMELOG_CACHE": folder.path("cache")]
        }

        func run(_ arguments: [String]) throws -> ChildProcess.Result {
            try ChildProcess.run(try gamelogPath(), arguments, in: folder.url.path, environment: environment, atMost: 300)
        }

        func start(_ arguments: [String]) throws -> ChildProcess {
            try ChildProcess(try gamelogPath(), arguments, in: folder.url.path, environment: environment)
        }

        /// Starts `gamelog collect` and waits for the line that names its URL.
        func collector(port: Int = 0) throws -> (process: ChildProcess, url: String) {
            let process = try start(["collect", "--db", url, "--port", "\(port)"])
            return (process, try waitForURL(process, pattern: #"http://127\.0\.0\.1:[0-9]+"#))
        }

        /// Waits for a server's first line to name its URL.
        func waitForURL(_ process: ChildProcess, pattern: String) throws -> String {
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline {
                let output = process.outputSoFar
                if let range = output.range(of: pattern, options: .regularExpression) { return String(output[range]) }
                if waitpid(process.pid, nil, WNOHANG) == process.pid { break }
                usleep(20_000)
            }
            let result = process.wait(atMost: 1)
            throw Failure("the server did not start: \(result.termination); \(result.stderr)")
        }

        /// Events in the shared store, counted by PostgreSQL itself.
        func storedEvents() throws -> Int {
            Int(try server.psql(url, "SELECT count(*) FROM events")) ?? -1
        }

        func events(in path: String) throws -> Int {
            Int(try EventStore(path: folder.path(path), access: .readOnly).count().events)
        }
    }

    // Issue 36, item 7: the collector knows the sender before it reads the body.
    @Test func anUploadIsJudgedByItsKeyBeforeItsBodyIsRead() throws {
        let server = try PostgresServer()
        defer { server.stop(mode: "immediate") }
        let studio = Studio(folder: try Folder(), server: server, url: try server.makeDatabase())
        let (collector, base) = try studio.collector()
        defer { collector.send(SIGKILL); collector.wait(atMost: 10) }
        // 20 MB of lines that are no upload.
        let big = studio.folder.path("big.jsonl")
        try Data(String(repeating: "{\"not\":\"an event\"}\n", count: 1_000_000).utf8).write(to: URL(fileURLWithPath: big))
        func post(_ headers: [String], file: String) throws -> (status: String, body: String) {
            let run = try ChildProcess.run("curl", ["-s", "-w", "\n%{http_code}", "-X", "POST", "--data-binary", "@" + file] + headers
                                           + [base + "/v1/upload"])
            let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
        }
        let key = try DeviceKey.random(device: "Ann")
        let unenrolled = try post(["-H", "Gamelog-Device-Key: \(Hex.string(key.publicKey))"], file: big)
        #expect(unenrolled.status == "403" && unenrolled.body.contains("not enrolled"), "\(unenrolled)")
        let unnamed = try post([], file: big)
        #expect(unnamed.status == "400" && unnamed.body.contains("Gamelog-Device-Key"), "\(unnamed)")
        // An enrolled key with a body that does not parse: 400, as the protocol says (not 409).
        try KeyFile.write(key, to: studio.folder.path("Ann.key"))
        let enrolled = try studio.run(["keys", "enroll", "--to", base, "--device", "Ann", "--public-key", "Ann.key"])
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        try Data("{\"not\":\"an event\"}\n".utf8).write(to: URL(fileURLWithPath: studio.folder.path("small.jsonl")))
        let malformed = try post(["-H", "Gamelog-Device-Key: \(Hex.string(key.publicKey))"], file: studio.folder.path("small.jsonl"))
        #expect(malformed.status == "400", "\(malformed)")
        #expect(try studio.storedEvents() == 0)

        // Issue 36, item 9: a URL with credentials is never printed with them.
        let secret = "s3cretTOKEN"
        let withCredentials = base.replacingOccurrences(of: "http://", with: "http://reader:\(secret)@")
        #expect(try studio.run(["demo", "--fixed-clock", "--insecure-test-keys"]).status == 0)
        for arguments in [["push", "--to", withCredentials], ["verify", "--no-rerun", "--heads", withCredentials],
                          ["keys", "enroll", "--to", withCredentials, "--device", "Ann", "--public-key", "Ann.key", "--admin-token", "Ann.key"],
                          ["push", "--to", withCredentials.replacingOccurrences(of: "127.0.0.1", with: "[::1")]] {
            let run = try studio.run(arguments)
            #expect(!(run.stdout + run.stderr).contains(secret), "\(arguments[0]): \(run.stdout) \(run.stderr)")
            #expect(!(run.stdout + run.stderr).isEmpty)
        }

        // Issue 37, item 6: what the collector counted, in the Prometheus text format, and a
        // line on standard error for every request and every refusal.
        let metrics = try ChildProcess.run("curl", ["-s", base + "/metrics"]).stdout
        #expect(metrics.contains("gamelog_uploads_refused_total{reason=\"not_enrolled\"} 1")
                && metrics.contains("gamelog_uploads_refused_total{reason=\"malformed\"} 2")
                && metrics.contains("gamelog_enrollments_total 1") && metrics.contains("gamelog_upload_seconds_count 3"), "\(metrics)")
        let lines = collector.errorsSoFar
        #expect(lines.contains("path=/v1/upload") && lines.contains("status=403") && lines.contains("refused") && lines.contains("reason="), "\(lines)")
        // Issue 37, item 6: healthy means the store answers; with PostgreSQL down, 503.
        let healthy = try ChildProcess.run("curl", ["-s", "-w", "\n%{http_code}", base + "/healthz"]).stdout
        #expect(healthy.hasSuffix("\n200") && healthy.hasPrefix("ok"), "\(healthy)")
        server.stop(mode: "immediate")
        let down = try ChildProcess.run("curl", ["-s", "-w", "\n%{http_code}", base + "/healthz"]).stdout
        #expect(down.hasSuffix("\n503") && down.contains("does not answer"), "\(down)")
    }

    // Issue 37, item 4: no push ends without its cosignature when its events were stored.
    // The collector stores an upload and its answer never reaches the phone (here: the
    // phone's copy of it is deleted, as a timeout leaves it); the next push finds nothing to
    // send and takes the cosignature from the collector's head.
    @Test func aPushWhoseAnswerWasLostGetsItsCosignatureNextTime() throws {
        let server = try PostgresServer()
        defer { server.stop(mode: "immediate") }
        let studio = Studio(folder: try Folder(), server: server, url: try server.makeDatabase())
        let simulated = try studio.run(["simulate", "--games", "3", "--seed", "5", "--clock", "fixed", "--per-device", "phones", "--devices", "Ann,Ben"])
        try #require(simulated.status == 0, "\(simulated.stderr)")
        let (collector, base) = try studio.collector()
        defer { collector.send(SIGKILL); collector.wait(atMost: 10) }
        #expect(try studio.run(["keys", "enroll", "--to", base, "--device", "Ann", "--public-key", "keys/Ann.key"]).status == 0)
        let phone = studio.folder.path("phones/Ann.sqlite")
        func cosignatures() throws -> Int {
            try DatabaseQueue(path: phone).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM cosignatures") ?? -1 }
        }
        let first = try studio.run(["push", "--db", "phones/Ann.sqlite", "--to", base])
        #expect(first.status == 0 && first.stdout.contains("cosigned the head"), "\(first.stderr)")
        try #require(try cosignatures() == 1)
        try DatabaseQueue(path: phone).write { try $0.execute(sql: "DELETE FROM cosignatures") }
        #expect(try cosignatures() == 0)
        let again = try studio.run(["push", "--db", "phones/Ann.sqlite", "--to", base])
        #expect(again.status == 0 && again.stdout.contains("the collector has all"), "\(again.stdout) \(again.stderr)")
        #expect(try cosignatures() == 1)
        // The cosignature taken back is the collector's, over the phone's own head.
        let heads = try studio.run(["heads", "--db", "phones/Ann.sqlite"])
        #expect(heads.status == 0 && heads.stdout.contains("gamelog-collector"), "\(heads.stdout) \(heads.stderr)")
    }

    // Issue 36, item 8: `verify --witness-key` and `--witnesses` as an auditor types them.
    @Test func cosignaturesInAHeadsFileAreCheckedAgainstTheWitnessKey() throws {
        let server = try PostgresServer()
        defer { server.stop(mode: "immediate") }
        let studio = Studio(folder: try Folder(), server: server, url: try server.makeDatabase())
        let (collector, base) = try studio.collector()
        defer { collector.send(SIGKILL); collector.wait(atMost: 10) }
        let witnessKey = try #require(collector.outputSoFar.range(of: #"(?<=verifier key )[^)\s]+"#, options: .regularExpression)
            .map { String(collector.outputSoFar[$0]) })
        #expect(try studio.run(["demo", "--fixed-clock", "--insecure-test-keys"]).status == 0)
        for device in ["A", "B"] {
            try Hex.string(try DeviceKey.insecureTestKey(device: device).publicKey).write(toFile: studio.folder.path("\(device).pub"), atomically: true, encoding: .utf8)
            let enrolled = try studio.run(["keys", "enroll", "--to", base, "--device", device, "--public-key", "\(device).pub"])
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
        }
        let pushed = try studio.run(["push", "--to", base])
        #expect(pushed.status == 0, "\(pushed.stderr)")
        let heads = try studio.run(["heads", "--json"])
        #expect(heads.status == 0 && heads.stdout.contains("\"cosignatures\":[{"), "\(heads.stdout)")
        try heads.stdout.write(toFile: studio.folder.path("heads.json"), atomically: true, encoding: .utf8)
        let ok = try studio.run(["verify", "--no-rerun", "--heads", "heads.json", "--witness-key", witnessKey, "--witnesses", "1"])
        #expect(ok.status == 0 && ok.stdout.contains("witnesses: gamelog-collector cosigned A at"), "\(ok.stdout)\(ok.stderr)")
        // Two required, one given: refused before anything is read.
        let tooMany = try studio.run(["verify", "--witness-key", witnessKey, "--witnesses", "2"])
        #expect(tooMany.status != 0 && tooMany.stderr.contains("--witnesses 2"), "\(tooMany.stderr)")
        // A cosignature line changed in the heads file: the file is refused.
        let line = try #require(heads.stdout.range(of: #"(?<="line":"— )[^ ]+ [A-Za-z0-9+/]{8}"#, options: .regularExpression))
        var changed = heads.stdout
        let at = changed.index(before: line.upperBound)
        changed.replaceSubrange(at...at, with: changed[at] == "A" ? "B" : "A")
        try changed.write(toFile: studio.folder.path("changed.json"), atomically: true, encoding: .utf8)
        let refused = try studio.run(["verify", "--no-rerun", "--heads", "changed.json", "--witness-key", witnessKey])
        #expect(refused.status != 0, "\(refused.stdout)\(refused.stderr)")
        #expect((refused.stdout + refused.stderr).contains("cosignature"), "\(refused.stdout)\(refused.stderr)")
    }

    @Test func phonesPushThroughAKilledCollectorAndACrashedStoreAndNothingIsLostOrDoubled() throws {
        let server = try PostgresServer()
        defer { server.stop(mode: "immediate") }
        let studio = Studio(folder: try Folder(), server: server, url: try server.makeDatabase())

        // Two phones, each with a log of its own that signs a head after every game.
        let simulated = try studio.run(["simulate", "--games", "40", "--seed", "11", "--clock", "fixed", "--per-device", "phones", "--devices", "Ann,Ben"])
        try #require(simulated.status == 0, "\(simulated.stderr)")
        let annEvents = try studio.events(in: "phones/Ann.sqlite"), benEvents = try studio.events(in: "phones/Ben.sqlite")
        #expect(annEvents > 1_000 && benEvents > 1_000)

        // First start: the store is migrated and the tokens are written, readable by their owner alone.
        var (collector, base) = try studio.collector()
        #expect(collector.outputSoFar.contains("wrote the administrator's token to"))
        let adminToken = studio.folder.path("keys/collector-admin.token")
        #expect((try FileManager.default.attributesOfItem(atPath: adminToken)[.posixPermissions] as? Int) == 0o600)

        // A device the collector does not know is turned away, with the command that enrolls it.
        let unknown = try studio.run(["push", "--db", "phones/Ann.sqlite", "--to", base])
        #expect(unknown.status != 0 && unknown.stderr.contains("gamelog keys enroll --to \(base) --device Ann"), "\(unknown.stderr)")
        #expect(try studio.storedEvents() == 0)
        // Enrolling needs the administrator's token: a wrong one is refused.
        try "not-the-token\n".write(toFile: studio.folder.path("wrong.token"), atomically: true, encoding: .utf8)
        let wrong = try studio.run(["keys", "enroll", "--to", base, "--device", "Ann", "--public-key", "keys/Ann.key", "--admin-token", "wrong.token"])
        #expect(wrong.status != 0 && wrong.stderr.contains("refused the administrator's token"), "\(wrong.stderr)")
        for device in ["Ann", "Ben"] {
            let enrolled = try studio.run(["keys", "enroll", "--to", base, "--device", device, "--public-key", "keys/\(device).key"])
            #expect(enrolled.status == 0 && enrolled.stdout.contains("enrolled device \(device)"), "\(enrolled.stderr)")
        }

        // Ann pushes one game per request; the collector is killed once some are stored.
        let push = try studio.start(["push", "--db", "phones/Ann.sqlite", "--to", base, "--batch", "1"])
        var stored = 0
        let deadline = Date().addingTimeInterval(120)
        while stored == 0 && Date() < deadline {
            stored = try studio.storedEvents()
            if stored == 0 { usleep(5_000) }
        }
        push.send(SIGSTOP)
        collector.send(SIGKILL)
        collector.wait(atMost: 30)
        push.send(SIGCONT)
        let interrupted = push.wait(atMost: 120)
        let storedAtKill = try studio.storedEvents()
        #expect(interrupted.status != 0, "push outran the kill: \(interrupted.stdout)")
        #expect(interrupted.stderr.contains("the collector at \(base) did not answer") && interrupted.stderr.contains("push again"), "\(interrupted.stderr)")
        #expect(storedAtKill > 0 && storedAtKill < annEvents)

        // PostgreSQL crashes: the collector cannot start without its store, and says which.
        server.stop(mode: "immediate")
        let withoutStore = try studio.run(["collect", "--db", studio.url, "--port", "0"])
        #expect(withoutStore.status != 0 && withoutStore.stderr.contains("127.0.0.1:\(server.port)"), "\(withoutStore.stderr)")
        try server.start()
        #expect(try studio.storedEvents() == storedAtKill)

        // A collector again on the same port: pushing resumes where the store stands.
        let port = Int(base.split(separator: ":").last!)!
        (collector, base) = try studio.collector(port: port)
        defer { collector.send(SIGTERM); collector.wait(atMost: 30) }
        #expect(!collector.outputSoFar.contains("wrote the administrator's token"))
        let resumed = try studio.run(["push", "--db", "phones/Ann.sqlite", "--to", base])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("device Ann: sent \(annEvents - storedAtKill) events (\(storedAtKill + 1)...\(annEvents))"), "\(resumed.stdout)")
        let again = try studio.run(["push", "--db", "phones/Ann.sqlite", "--to", base, "--json"])
        #expect(again.status == 0 && again.stdout.contains("\"sent\":0"), "\(again.stdout)\(again.stderr)")
        let ben = try studio.run(["push", "--db", "phones/Ben.sqlite", "--to", base])
        #expect(ben.status == 0 && ben.stdout.contains("device Ben: sent \(benEvents) events"), "\(ben.stdout)\(ben.stderr)")
        #expect(try studio.storedEvents() == annEvents + benEvents)

        // The phone keeps the collector's countersignature; its log reaches the collector's heads.
        let heads = try studio.run(["heads", "--db", "phones/Ann.sqlite"])
        #expect(heads.stdout.contains("\u{2014} gamelog-collector "), "\(heads.stdout)")
        let checked = try studio.run(["verify", "--db", "phones/Ann.sqlite", "--heads", base])
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        // Ann's phone rolled back to its state after 20 games (the same seed, clock and keys
        // record the same first games): alone it verifies; against the collector's heads it is behind.
        let earlier = try studio.run(["simulate", "--games", "20", "--seed", "11", "--clock", "fixed", "--per-device", "rolled-back", "--devices", "Ann,Ben"])
        try #require(earlier.status == 0, "\(earlier.stderr)")
        #expect(try studio.run(["verify", "--no-rerun", "--db", "rolled-back/Ann.sqlite"]).status == 0)
        let rolledBack = try studio.run(["verify", "--no-rerun", "--db", "rolled-back/Ann.sqlite", "--heads", base])
        #expect(rolledBack.status == 1 && rolledBack.stdout.contains("rolledBack"), "\(rolledBack.stdout)\(rolledBack.stderr)")

        // The shared store reads like a log: every game of both phones, and a whole-log verify.
        func games(_ db: String) throws -> [[String: Any]] {
            let run = try studio.run(["games", "--db", db, "--all", "--json"])
            #expect(run.status == 0, "\(run.stderr)")
            return (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [[String: Any]]) ?? []
        }
        let onThePhone = try games("phones/Ann.sqlite"), shared = try games(studio.url)
        #expect(onThePhone.count > 10 && shared.count == onThePhone.count)
        #expect(shared.allSatisfy { ($0["devices"] as? [String])?.sorted() == ["Ann", "Ben"] && (($0["missingRecordings"] as? [Any])?.isEmpty ?? true) })
        let verified = try studio.run(["verify", "--db", studio.url])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")

        // The viewer over the shared store shows the audits `verify --workers` stored, not
        // its own: a finding planted in one stored audit is what the game's page shows.
        let workers = try studio.run(["verify", "--db", studio.url, "--workers", "2"])
        #expect(workers.status == 0, "\(workers.stdout)\(workers.stderr)")
        let game = (shared.first?["conversation"] as? String) ?? ""
        let planted = #"[{"check":"legality","expected":"what the test planted","found":"a <b>planted</b> finding","game":"\#(game)","rule":"planted-by-the-test","severity":"error"}]"#
        _ = try server.psql(studio.url, "UPDATE audit_results SET report = '\(planted)' WHERE game = decode('\(game.replacingOccurrences(of: "-", with: ""))', 'hex')")
        let viewer = try studio.start(["serve", "--db", studio.url, "--port", "0", "--host", "127.0.0.2"])
        defer { viewer.send(SIGTERM); viewer.wait(atMost: 30) }
        let viewerURL = try studio.waitForURL(viewer, pattern: #"http://127\.0\.0\.2:[0-9]+"#)
        func fetch(_ path: String, _ credentials: [String] = []) throws -> (status: String, body: String) {
            let run = try ChildProcess.run("curl", ["-s", "-w", "\n%{http_code}"] + credentials + [viewerURL + path])
            let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
        }
        // Listening beyond loopback, a shared store's viewer asks for the reader token.
        let readerToken = try String(contentsOfFile: studio.folder.path("keys/collector-reader.token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try fetch("/games").status == "401")
        #expect(try fetch("/games", ["-u", "anyone:not-the-token"]).status == "401")
        #expect(try fetch("/games", ["-H", "Authorization: Bearer \(readerToken)x"]).status == "401")
        let page = try fetch("/games/\(game)", ["-u", "auditor:\(readerToken)"])
        #expect(page.status == "200" && page.body.contains("as `verify --workers` stored it"), "\(page.body.prefix(300))")
        #expect(page.body.contains("verify: 1 error ") && !page.body.contains("<b>planted</b>"))
        let api = try fetch("/api/verify/\(game)", ["-H", "Authorization: Bearer \(readerToken)"])
        #expect(api.status == "200" && api.body.contains("planted-by-the-test"), "\(api.body.prefix(300))")

        // A collector listening beyond loopback reads only for a reader (or the
        // administrator); uploads need no token (the device's signatures are its proof).
        let open = try studio.start(["collect", "--db", studio.url, "--port", "0", "--host", "127.0.0.2"])
        defer { open.send(SIGTERM); open.wait(atMost: 60) }
        let openURL = try studio.waitForURL(open, pattern: #"http://127\.0\.0\.2:[0-9]+"#)
        func ask(_ path: String, _ headers: [String] = []) throws -> (status: String, body: String) {
            let run = try ChildProcess.run("curl", ["-s", "-w", "\n%{http_code}"] + headers + [openURL + path])
            let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
        }
        #expect(try ask("/v1/heads").status == "401")
        #expect(try ask("/v1/heads", ["-H", "Authorization: Bearer \(readerToken)x"]).status == "401")
        let openHeads = try ask("/v1/heads", ["-H", "Authorization: Bearer \(readerToken)"])
        #expect(openHeads.status == "200" && openHeads.body.contains("cosignedNote"), "\(openHeads.body.prefix(300))")
        // The same document as `heads --json` (one type serves both), field for field.
        let listed = try JSONSerialization.jsonObject(with: Data(openHeads.body.utf8)) as? [[String: Any]] ?? []
        #expect(!listed.isEmpty && listed.allSatisfy {
            Set($0.keys) == ["device", "publicKey", "size", "root", "signedAt", "note", "cosignedNote", "cosignatures"]
        }, "\(openHeads.body.prefix(300))")
        // Enrolling needs the administrator's token; the reader's is not it.
        let enroll = try ask("/v1/devices", ["-H", "Authorization: Bearer \(readerToken)", "-H", "Content-Type: application/json",
                                             "--data", #"{"device":"Eve","publicKey":"\#(String(repeating: "ab", count: 32))"}"#])
        #expect(enroll.status == "401", "\(enroll.body)")
    }

    @Test func workersSplitAVerifyAndARerunAndAgreeWithOneProcess() throws {
        let server = try PostgresServer.shared()
        let studio = Studio(folder: try Folder(), server: server, url: try server.makeDatabase())
        let simulated = try studio.run(["simulate", "--games", "12", "--seed", "5", "--noise", "0.3", "--per-device", "phones", "--devices", "Ann,Ben"])
        try #require(simulated.status == 0, "\(simulated.stderr)")
        // One phone's log only: every game has checks that need the other's, so there is plenty to agree on.
        let exported = try studio.run(["export", "--db", "phones/Ann.sqlite"])
        try exported.stdout.write(toFile: studio.folder.path("ann.jsonl"), atomically: true, encoding: .utf8)
        let imported = try studio.run(["import", "--db", studio.url, "ann.jsonl"])
        try #require(imported.status == 0, "\(imported.stderr)")

        func findings(_ arguments: [String]) throws -> [[String: String]] {
            let run = try studio.run(["verify", "--db", studio.url, "--json"] + arguments)
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            let document = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
            return (document?["findings"] as? [[String: Any]] ?? []).map { $0.mapValues { "\($0)" } }
        }
        let alone = try findings([]), shared = try findings(["--workers", "3"])
        #expect(!alone.isEmpty && alone.contains { $0["severity"] == "notCheckable" })
        #expect(shared == alone)

        // Every game of the run was claimed and done once, and its result is each game's stored audit.
        let games = try server.psql(studio.url, "SELECT count(*) || '/' || count(DISTINCT game) || '/' || bool_and(done) FROM audit_tasks")
        let stored = try server.psql(studio.url, "SELECT count(*) FROM audit_results")
        let listed = try studio.run(["games", "--db", studio.url, "--all", "--json"])
        let conversations = Int(games.split(separator: "/").first ?? "") ?? 0
        #expect(conversations >= 12 && games == "\(conversations)/\(conversations)/true" && stored == "\(conversations)")
        #expect(listed.status == 0)

        let rerunAlone = try studio.run(["rerun", "--db", studio.url, "--json"])
        let rerunShared = try studio.run(["rerun", "--db", studio.url, "--json", "--workers", "2"])
        #expect(rerunAlone.status == 0 && rerunShared.status == 0, "\(rerunShared.stderr)")
        #expect(rerunShared.stdout == rerunAlone.stdout && rerunAlone.stdout.contains("\"outcome\":\"matched\""))

        // A helper checks a run's games on several lanes at once, each game once: the
        // lanes of one process claim under names of their own (a claim takes back its
        // own worker's leases, so lanes sharing one name took each other's games).
        let store = try SharedStore(url: studio.url, cacheFolder: studio.folder.url.appending(path: "cache"))
        let everyGame = try GameIndex(store: store.reader()).conversations().map(\.uuid)
        let revision = try store.reader().revision()
        let helped = try SharedStore.wait { try await store.startAuditRun(.verify, revision: revision, reruns: true, games: everyGame) }
        let helper = try studio.run(["verify", "--db", studio.url, "--join", helped.id.uuidString.lowercased(), "--lanes", "3"])
        #expect(helper.status == 0 && helper.stdout.contains("checked \(everyGame.count) games of run"), "\(helper.stdout)\(helper.stderr)")
        let claimers = try server.psql(studio.url, "SELECT count(DISTINCT claimed_by) || '/' || count(*) FILTER (WHERE done) FROM audit_tasks WHERE run = '\(helped.id.uuidString.lowercased())'")
        #expect(everyGame.count >= 12 && claimers.hasSuffix("/\(everyGame.count)") && !claimers.hasPrefix("0/"), "\(claimers)")

        // Wrong uses are named, with the way out.
        let lanesAlone = try studio.run(["verify", "--db", studio.url, "--lanes", "2"])
        #expect(lanesAlone.status != 0 && lanesAlone.stderr.contains("pass it with --join RUN"), "\(lanesAlone.stderr)")
        let onSQLite = try studio.run(["verify", "--db", "phones/Ann.sqlite", "--workers", "2"])
        #expect(onSQLite.status != 0 && onSQLite.stderr.contains("--db postgres://"), "\(onSQLite.stderr)")
        let unknown = try studio.run(["verify", "--db", studio.url, "--join", UUID().uuidString])
        #expect(unknown.status != 0 && unknown.stderr.contains("--workers N` starts one"), "\(unknown.stderr)")
    }

    /// Reading commands read a shared store as it is in PostgreSQL: the same answers as
    /// the SQLite log it was imported from, and nothing copied to this machine. A store
    /// whose catalog does not cover its events is read through a copy, and says so.
    @Test func readingCommandsReadTheStoreNativelyWithNothingCopied() throws {
        let server = try PostgresServer.shared()
        let studio = Studio(folder: try Folder(), server: server, url: try server.makeDatabase())
        try #require(try studio.run(["simulate", "--games", "8", "--seed", "12"]).status == 0)
        let exported = try studio.run(["export"])
        try exported.stdout.write(toFile: studio.folder.path("all.jsonl"), atomically: true, encoding: .utf8)
        let imported = try studio.run(["import", "--db", studio.url, "all.jsonl"])
        try #require(imported.status == 0, "\(imported.stderr)")
        // The import stored its conversations' game summaries: a pass finds them all current.
        #expect(imported.stderr.contains("stored the game summaries of the"), "\(imported.stderr)")
        let indexed = try studio.run(["index", "--db", studio.url])
        #expect(indexed.status == 0 && indexed.stdout.contains("stored the game summaries of 0 conversations ("), "\(indexed.stdout) \(indexed.stderr)")
        try? FileManager.default.removeItem(atPath: studio.folder.path("cache"))

        let listed = try studio.run(["games", "--db", studio.url])
        try #require(listed.status == 0, "\(listed.stderr)")
        let id = try #require(listed.stdout.split(separator: "\n").dropFirst().first.map { String($0.prefix(8)) })
        var compared = 0
        for command in [["games"], ["games", "--json", "--per-page", "3", "--page", "2"], ["state", id], ["state", id, "--json"],
                        ["log", "--game", id], ["log", "--game", id, "--as", "B"], ["log", "--limit", "40"], ["heads"], ["heads", "--json"],
                        ["export"], ["export", "--game", id], ["keys", "--json"], ["rerun", "--json"],
                        ["proof", "--consistency", "--device", "A", "--from", "5", "--json"], ["dictionary", "list"], ["games", "--all", "--json"],
                        ["games", "--json", "--from-events"]] {
            let native = try studio.run(command + ["--db", studio.url]), file = try studio.run(command)
            #expect(native.status == 0 && native.status == file.status, "\(command): \(native.stderr)")
            #expect(!native.stdout.isEmpty && native.stdout == file.stdout, "\(command)")
            compared += 1
        }
        #expect(compared == 17)
        // info, read as the store is: the same log (its size and storage are the store's own).
        let info = try studio.run(["info", "--json", "--db", studio.url]), fileInfo = try studio.run(["info", "--json"])
        #expect(info.status == 0 && fileInfo.status == 0, "\(info.stderr)")
        func fields(_ text: String) throws -> [String: String] {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            return try object.filter { ["events", "lastPosition", "streams", "headHash", "catalogComplete", "catalogThrough", "dictionaries"].contains($0.key) }
                .mapValues { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self) }
        }
        let nativeFields = try fields(info.stdout), fileFields = try fields(fileInfo.stdout)
        #expect(nativeFields.count == 7 && nativeFields == fileFields)
        // One game's audit and the whole log's, read as the store is: the same documents but for the time they took.
        func verdict(_ arguments: [String]) throws -> NSDictionary {
            let run = try studio.run(["verify", "--json"] + arguments)
            #expect(run.status == 0, "\(run.stderr)")
            let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(document["ok"] as? Bool == true && (document["events"] as? Int ?? 0) > 0)
            return document.filter { $0.key != "seconds" } as NSDictionary
        }
        #expect(try verdict([id, "--db", studio.url]) == (try verdict([id])))
        #expect(try verdict(["--db", studio.url]) == (try verdict([])))
        #expect(!FileManager.default.fileExists(atPath: studio.folder.path("cache")), "a reading command copied the store")

        // A catalog that no longer covers the log: read through a copy, with a note.
        _ = try server.psql(studio.url, "UPDATE catalog_coverage SET through = 1")
        let throughCopy = try studio.run(["games", "--db", studio.url])
        #expect(throughCopy.status == 0 && throughCopy.stdout == listed.stdout, "\(throughCopy.stderr)")
        #expect(throughCopy.stderr.contains("does not cover every event") && throughCopy.stderr.contains("copy"), "\(throughCopy.stderr)")
    }
}
