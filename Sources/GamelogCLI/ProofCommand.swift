import ArgumentParser
import EventStore
import Foundation
import Presentation
import Projections

/// `gamelog proof --consistency`: an RFC 9162 consistency proof between two sizes of a
/// device's tree, as a witness (C2SP tlog-witness) or an auditor checks it.
struct ProofCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proof",
        abstract: "Print an RFC 9162 consistency proof between two sizes of a device's tree.",
        discussion: "The proof shows that the device's tree of --to leaves extends its tree of --from leaves: the hashes in RFC 9162's order, which any RFC 9162 or tlog verifier checks against the two roots.")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "A consistency proof (the only kind so far).") var consistency = false
    @Option(help: "The device whose tree.") var device: String
    @Option(help: "The smaller size.") var from: Int64
    @Option(help: "The larger size (default: the device's newest signed head).") var to: Int64?
    @Flag(help: "Print JSON: {\"from\", \"to\", \"oldRoot\", \"newRoot\", \"proof\"} (roots and hashes in base64, the proof in RFC order).")
    var json = false

    func validate() throws {
        guard consistency else { throw ValidationError("say which proof: --consistency.") }
        guard from >= 1 else { throw ValidationError("--from \(from): the smaller tree holds at least one leaf (an empty tree proves nothing).") }
        if let to, to < from { throw ValidationError("--to \(to) is smaller than --from \(from).") }
    }

    struct Document: Encodable {
        var from: Int64
        var to: Int64
        var oldRoot: String
        var newRoot: String
        var proof: [String]
    }

    func run() async throws {
        let store = try await options.openReader()
        let made: ConsistencyProof
        do {
            made = try store.consistencyProof(device: device, from: from, to: to)
        } catch let error as ConsistencyProofError {
            throw CommandFailure("\(error); `gamelog keys` lists the devices and their tree sizes.")
        }
        let base64 = { (bytes: [UInt8]) in Data(bytes).base64EncodedString() }
        if json {
            print(try JSONStyle.text(encoding: Document(from: made.from, to: made.to, oldRoot: base64(made.oldRoot), newRoot: base64(made.newRoot),
                                                        proof: made.proof.map(base64))))
            return
        }
        print("device \(SafeText.line(made.device)): its tree of \(made.to) leaves (root \(base64(made.newRoot))) extends its tree of \(made.from) leaves (root \(base64(made.oldRoot)))")
        for hash in made.proof { print(base64(hash)) }
    }
}
