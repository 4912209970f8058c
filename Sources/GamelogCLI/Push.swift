import ArgumentParser
import Collector
import EventStore
import Foundation
import Presentation
import Interchange

struct Push: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a device's log to a collector: what it has not accepted yet, with the proof it extends what it has.",
        discussion: """
            For each device tree in the log, asks the collector how many of its events it accepted, sends \
            the rest in batches (each ending at a head the device signed), and stores the collector's \
            cosignature of each accepted head in the log (`gamelog heads` shows them). Sending again \
            sends nothing; after a failure, push again: it resumes where the collector stands. The \
            device's key must be enrolled (`gamelog keys enroll`). With --witness, each device's newest \
            head also goes to those witnesses (C2SP tlog-witness, e.g. `gamelog witness`), with a \
            consistency proof from the size each last cosigned, and their cosignatures are stored in \
            the log; a witness that is down or refuses is named, and the exit status is 1.
            """)

    @OptionGroup var options: GlobalOptions
    @Option(help: ArgumentHelp("The collector's URL.", valueName: "URL")) var to: String?
    @Option(name: .customLong("witness"), help: ArgumentHelp("A witness's URL (its add-checkpoint is URL/add-checkpoint). Repeatable.", valueName: "URL"))
    var witnesses: [String] = []
    @Option(help: ArgumentHelp("At most about this many events per request (each request ends at a head the device signed).",
                               valueName: "N")) var batch: Int = 20_000
    @Flag(help: "Print JSON: [{\"device\", \"publicKey\", \"from\", \"to\", \"sent\", \"note\"}].") var json = false

    func validate() throws {
        guard batch >= 1 else { throw ValidationError("--batch must be at least 1, not \(batch).") }
        guard to != nil || !witnesses.isEmpty else { throw ValidationError("say where to: --to COLLECTOR, --witness URL, or both.") }
    }

    func run() async throws {
        do { try await push() } catch let failure as HTTPClient.Failure {
            let text = "\(failure)"
            throw CommandFailure(text + (text.hasSuffix("?") ? " " : ". ") + "What the collector acknowledged is kept; push again when it answers: it sends only the rest.")
        }
    }

    private func push() async throws {
        let witnessURLs = try witnesses.map { try HTTPClient.baseURL($0, option: "--witness") }
        let store = try options.openExistingForWriting()
        let trees = try store.deviceTrees().filter { !$0.heads.isEmpty }
        guard !trees.isEmpty else {
            throw CommandFailure("\(store.path) holds no signed events: nothing to push (a device's log signs its events as it records).")
        }
        if let to { try await pushToCollector(to, store: store, trees: trees) }
        // Witnesses: every device's newest head; one down or refusing does not stop the others.
        var refusals: [String] = []
        for base in witnessURLs {
            for tree in trees {
                guard let head = tree.heads.last else { continue }
                do {
                    switch try await WitnessClient.cosign(head, store: store, witness: base) {
                    case .cosigned(let cosignature):
                        try store.store(cosignatures: [(head, cosignature)])
                        if !json { print("device \(SafeText.line(tree.owner.device)): witness \(SafeText.line(cosignature.witness)) cosigned the head of \(head.size)") }
                    case .refused(let reason):
                        refusals.append(reason)
                    }
                } catch let failure as HTTPClient.Failure {
                    refusals.append("\(failure)")
                }
            }
        }
        for refusal in refusals { Terminal.standardError("error: " + refusal) }
        if !refusals.isEmpty { throw ExitCode.failure }
    }

    private func pushToCollector(_ to: String, store: EventStore, trees: [DeviceTree]) async throws {
        let base = try HTTPClient.baseURL(to, option: "--to")
        var report: [CommandDocuments.Push] = []
        for tree in trees {
            let device = SafeText.line(tree.owner.device)
            let headURL = base.appending(path: "v1/devices/\(hex(tree.owner.publicKey))")
            let asked = try await HTTPClient.request("GET", headURL)
            let reply = try? JSONDecoder().decode(CommandDocuments.CollectorReply.self, from: asked.body)
            guard asked.status == 200, let accepted = reply?.size else {
                if asked.status == 404 {
                    throw CommandFailure("device \(device)'s key is not enrolled at \(HTTPClient.shown(to)): `gamelog keys enroll --to \(HTTPClient.shown(to)) --device \(device) --public-key FILE` (an administrator's token) enrolls it.")
                }
                throw CommandFailure("the collector answered \(asked.status) for device \(device): \(asked.message)")
            }
            // A push whose events were stored but whose answer was lost (a timeout, a
            // dropped connection) takes the cosignature from the collector's head now.
            if accepted > 0, let reply { try keepMissedCosignature(reply, size: Int64(accepted), of: tree, in: store) }
            var result = CommandDocuments.Push(owner: tree.owner, accepted: Int64(accepted))
            while true {
                switch try Interchange.upload(from: store, tree: tree.owner.publicKey, accepted: Int64(result.to), maximumEvents: Int64(batch)) {
                case .upToDate:
                    break
                case .behind(let logSize, let accepted):
                    throw CommandFailure("the collector accepted \(accepted) events of device \(device), and this log has signed only \(logSize): it is an older copy of the device's log, or the device was rolled back.")
                case .send(let upload):
                    // The key first, so the collector refuses an unenrolled device before it reads the body.
                    let reply = try await HTTPClient.request("POST", base.appending(path: "v1/upload"), body: Data(upload.body.utf8),
                                                       contentType: "application/x-ndjson",
                                                       headers: [(Collector.deviceKeyHeader, Hex.string(upload.owner.publicKey))])
                    guard reply.status == 200, let accepted = try? JSONDecoder().decode(Collector.Accepted.self, from: reply.body) else {
                        throw CommandFailure("the collector refused device \(device)'s events \(upload.from + 1)...\(upload.to) (HTTP \(reply.status)): \(reply.message)")
                    }
                    try keep(accepted, of: tree, in: store)
                    result.record(sent: upload.events, acceptedSize: accepted.size, note: accepted.note)
                    continue
                }
                break
            }
            if !json {
                print(result.to == result.from ? "device \(device): the collector has all \(result.to) events" :
                    "device \(device): sent \(result.sent) events (\(result.from + 1)...\(result.to)); the collector cosigned the head of \(result.to)")
            }
            report.append(result)
        }
        if json {
            print(try CommandDocuments.text(report))
        }
    }

    /// Stores the collector's cosignature of the head it accepted at `size`, from its
    /// note, when the device's log lacks it; nothing when the log has it or the note holds
    /// none that verifies.
    private func keepMissedCosignature(_ reply: CommandDocuments.CollectorReply, size: Int64, of tree: DeviceTree,
                                       in store: EventStore) throws {
        guard let note = reply.note, let keyText = reply.witnessKey, let key = Hex.bytes(keyText, count: 32),
              let head = try store.deviceTrees().first(where: { $0.owner == tree.owner })?.heads.first(where: { $0.size == size }),
              try !store.cosignatures(of: head).contains(where: { $0.witnessKey == key }) else { return }
        for line in note.split(separator: "\n") {
            if let cosignature = Cosignature(line: String(line), witnessKey: key), cosignature.isValid(for: head) {
                try store.store(cosignatures: [(head, cosignature)])
                return
            }
        }
    }

    /// Stores the collector's cosignature of the accepted head in the device's log.
    private func keep(_ accepted: Collector.Accepted, of tree: DeviceTree, in store: EventStore) throws {
        guard let head = try store.deviceTrees().first(where: { $0.owner == tree.owner })?.heads.first(where: { $0.size == accepted.size }),
              let key = Hex.bytes(accepted.witnessKey, count: 32), let cosignature = Cosignature(line: accepted.cosignature, witnessKey: key),
              cosignature.isValid(for: head) else {
            throw CommandFailure("the collector's answer does not cosign device \(SafeText.line(tree.owner.device))'s head at \(accepted.size) events.")
        }
        try store.store(cosignatures: [(head, cosignature)])
    }
}
