import ArgumentParser
import EventStore
import Foundation
import Presentation

struct Heads: ParsableCommand {
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

    func run() throws {
        let store = try options.openForReading()
        let latest = try store.deviceTrees().compactMap { $0.heads.last }
        // Each head with the witnesses' cosignatures the log holds for it.
        var cosigned: [TreeHead: [Cosignature]] = [:]
        for entry in try store.cosignedHeads() { cosigned[entry.head] = entry.cosignatures }
        if json {
            let document = latest.map { CommandDocuments.Head(CosignedHead(head: $0, cosignatures: cosigned[$0] ?? [])) }
            print(try CommandDocuments.text(document))
            return
        }
        if latest.isEmpty { print("No signed tree heads in \(store.path).") }
        for head in latest { print(SafeText.lines(CosignedHead(head: head, cosignatures: cosigned[head] ?? []).note)) }
    }
}
