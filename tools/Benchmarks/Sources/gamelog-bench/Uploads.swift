// The uploads phones would send a collector that has accepted nothing of them yet, written
// to files, so that a load test measures the collector and not the phones: on a studio's
// machine the phones' work (reading their logs, building their uploads) is done elsewhere.
import ArgumentParser
import EventStore
import Foundation
import Interchange
import Measure

struct Uploads: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write each phone's first upload (as `gamelog push` sends it, default batch) to a folder.",
        discussion: """
            For every PHONES/NAME.sqlite and each device tree in it, writes OUT/NAME-N.upload \
            (the request body) and OUT/NAME-N.key (the tree's public key, hex: the \
            Gamelog-Device-Key header). tools/post-uploads.py sends them.
            """)

    @Argument(help: "A folder of phones' logs (`gamelog simulate --per-device phones`).") var phones: String
    @Argument(help: "The folder to write the uploads to (made if missing).") var out: String
    @Option(help: "At most about this many events per upload, as push's --batch.") var batch: Int64 = 20_000

    func run() throws {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let names = try FileManager.default.contentsOfDirectory(atPath: phones).filter { $0.hasSuffix(".sqlite") }.sorted()
        var uploads = 0, events = 0
        for name in names {
            let store = try EventStore(path: phones + "/" + name, access: .readOnly)
            for (index, tree) in try store.deviceTrees().enumerated() {
                guard case .send(let upload) = try Interchange.upload(from: store, tree: tree.owner.publicKey, accepted: 0,
                                                                      maximumEvents: batch) else { continue }
                let stem = out + "/" + name.dropLast(".sqlite".count) + "-\(index)"
                try Data(upload.body.utf8).write(to: URL(fileURLWithPath: stem + ".upload"))
                try Data(Hex.string(tree.owner.publicKey).utf8).write(to: URL(fileURLWithPath: stem + ".key"))
                uploads += 1
                events += upload.events
            }
        }
        guard uploads > 0 else { throw ValidationError("no phone in \(phones) has a signed device tree to upload") }
        print("{\"uploads\": \(uploads), \"events\": \(events)}")
    }
}

/// What a collector does to every upload before it stores it, alone: read and check the
/// lines, chains, trees and heads (`Interchange.check`), as `collect` does, on one thread.
struct CheckUploads: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-uploads",
        abstract: "Check every upload of a folder (written by `uploads`) as a collector does; prints the events a second of CPU.",
        discussion: "Each pass checks every upload once; the fastest pass is printed (the least disturbed by the machine's other work).")

    @Argument(help: "A folder of .upload files.") var folder: String
    @Option(help: "Passes over the folder.") var passes: Int = 5

    func run() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".upload") }.sorted()
        let bodies = try names.map { try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0)) }
        guard !bodies.isEmpty else { throw ValidationError("no .upload file in \(folder)") }
        var best = Double.infinity, events = 0
        for _ in 0..<passes {
            events = 0
            let start = processCPUSeconds()
            for (name, body) in zip(names, bodies) {
                events += try Interchange.check(files: [ExportFile(name: name, contents: body)]).count
            }
            best = min(best, processCPUSeconds() - start)
        }
        print(String(format: "%d uploads, %d events: fastest of %d passes %.3f s of CPU, %.0f events/s, %.1f us an event",
                     bodies.count, events, passes, best, Double(events) / best, best / Double(events) * 1e6))
        // One more pass with the heap's allocations counted (the check runs on this thread).
        if let counted = try countingAllocations({
            for (name, body) in zip(names, bodies) { _ = try Interchange.check(files: [ExportFile(name: name, contents: body)]) }
        }) {
            print(String(format: "allocations an event: %.2f", Double(counted.thisThread) / Double(events)))
        }
    }
}
