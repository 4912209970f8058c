import ArgumentParser
import EventStore
import Foundation
import Witness

/// `gamelog witness`: a C2SP tlog-witness that is not the operator.
struct WitnessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "witness",
        abstract: "Run a witness: cosign device heads that extend the ones it cosigned before (C2SP tlog-witness).",
        discussion: """
            Serves POST /add-checkpoint on --host:--port for the logs listed in STATE/logs (one signed-note \
            verifier key a line: a device's `verifierKey` from `gamelog keys --json`; read again on every \
            request). It keeps only each log's latest cosigned size and root in STATE/checkpoints, written to \
            disk before it answers, and no event data. Its key is STATE/witness.key, made on first start; the \
            start line prints its verifier key, which auditors pass to `verify --witness-key`. Ctrl-C stops it.
            """)

    @Option(help: ArgumentHelp("The witness's state folder (made if missing).", valueName: "DIR")) var state: String
    @Option(help: "The port to listen on (0: any free one).") var port: Int = 7380
    @Option(help: "The address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "The witness's name in its cosignatures (a schema-less URL naming it, without spaces or '+').")
    var name: String = "gamelog-witness"

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be in 0...65535, not \(port).") }
    }

    func run() async throws {
        let witness: Witness
        do {
            witness = try Witness(folder: state, name: name)
            _ = try witness.knownLogs()
        } catch let error as WitnessError {
            throw CommandFailure("\(error); fix \(state)/logs (one verifier key a line) or pass another --state.")
        }
        let host = self.host, logs = (try? witness.knownLogs().count) ?? 0
        let app = WitnessServer.application(witness, host: host, port: port) { port in
            FileHandle.standardOutput.write(Data("""
                gamelog witness: http://\(host):\(port) (verifier key \(witness.verifierKey)); \(logs) log\(logs == 1 ? "" : "s") known from \(state)/logs; Ctrl-C stops it

                """.utf8))
        }
        try await runServer(app, host: host, port: port)
    }
}

/// A client of witnesses: sends a device's newest head with a consistency proof from the
/// size the witness last cosigned, and keeps the cosignature in the log.
enum WitnessClient {
    /// What one witness said of one head.
    enum Outcome {
        case cosigned(Cosignature)
        case refused(String)
    }

    /// Asks the witness at `base` to cosign `head`, proving it from `store`'s leaves; a
    /// 409 names the size the witness holds, and the request is made again from there.
    static func cosign(_ head: TreeHead, store: any SignedLogReader, witness base: URL) async throws -> Outcome {
        let keyReply = try await HTTPClient.request("GET", base.appending(path: "verifier-key"), timeout: 30)
        guard keyReply.status == 200, let key = try? WitnessKey(verifierKey: String(decoding: keyReply.body, as: UTF8.self)) else {
            return .refused("\(HTTPClient.origin(of: base)) gave no witness verifier key (HTTP \(keyReply.status))")
        }
        var old: Int64 = 0
        for _ in 0..<3 {
            let proof = old == 0 || old == head.size ? [] : try store.consistencyProof(device: head.device, from: old, to: head.size).proof
            let body = "old \(old)\n" + proof.map { Data($0).base64EncodedString() + "\n" }.joined() + "\n" + head.note
            let reply = try await HTTPClient.request("POST", base.appending(path: "add-checkpoint"), body: Data(body.utf8),
                                               contentType: "text/plain", timeout: 30)
            let text = String(decoding: reply.body, as: UTF8.self)
            switch reply.status {
            case 200:
                guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("\u{2014} \(key.name) ") }),
                      let cosignature = Cosignature(line: String(line), witnessKey: key.publicKey), cosignature.isValid(for: head) else {
                    return .refused("witness \(SafeText.line(key.name)) answered without a valid cosignature of the head")
                }
                return .cosigned(cosignature)
            case 409:
                guard let size = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)), size != old, size <= head.size else {
                    return .refused("witness \(SafeText.line(key.name)) holds device \(SafeText.line(head.device))'s tree at \(SafeText.line(text.trimmingCharacters(in: .whitespacesAndNewlines))) events, which this head of \(head.size) does not extend: a rollback or a fork (HTTP 409)")
                }
                old = size
            default:
                return .refused("witness \(SafeText.line(key.name)) refused device \(SafeText.line(head.device))'s head of \(head.size) events (HTTP \(reply.status)): \(SafeText.line(text.trimmingCharacters(in: .whitespacesAndNewlines)))")
            }
        }
        return .refused("witness \(SafeText.line(key.name)) kept answering 409")
    }
}
