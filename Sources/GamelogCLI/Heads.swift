import ArgumentParser
import EventStore
import Foundation
import Presentation
import SharedStore

struct Heads: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "heads",
        abstract: "Print each device's latest signed tree head: what the log commits to.",
        discussion: """
            A head is a C2SP tlog-checkpoint signed note: the device, how many events it had \
            recorded, the Merkle root of them, the time, and the device's signature, followed by \
            the cosignature lines of the witnesses (collectors) that accepted it. Keep the \
            --json output somewhere else (another machine, the other player, a collector): \
            `gamelog verify --heads HEADS.json` later finds a log that was rolled back behind it \
            or rewritten since.
            """)

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print JSON: [{\"device\", \"publicKey\", \"size\", \"root\", \"signedAt\", \"note\", \"cosignedNote\", \"cosignatures\"}].")
    var json = false

    func run() async throws {
        let heads: [CosignedHead], location: String
        if let shared = try options.sharedStore() {
            // Read as the store is, by its indexes: each device's newest head and its
            // cosignatures (those that verify, as a SQLite log's reader keeps them).
            heads = try await shared.latestHeads().map { entry in
                CosignedHead(head: entry.head, cosignatures: entry.cosignatures.filter { $0.isValid(for: entry.head) })
            }
            location = shared.location.description
        } else {
            let store = try await options.openForReading()
            // Each head with the witnesses' cosignatures the log holds for it.
            var cosigned: [TreeHead: [Cosignature]] = [:]
            for entry in try store.cosignedHeads() { cosigned[entry.head] = entry.cosignatures }
            heads = try store.deviceTrees().compactMap { $0.heads.last }.map { CosignedHead(head: $0, cosignatures: cosigned[$0] ?? []) }
            location = store.path
        }
        if json {
            print(try CommandDocuments.text(heads.map(CommandDocuments.Head.init)))
            return
        }
        if heads.isEmpty { print("No signed tree heads in \(location).") }
        for head in heads { print(SafeText.lines(head.note)) }
    }
}
