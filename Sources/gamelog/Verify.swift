import ArgumentParser
import EventStore
import Foundation
import RecordedEvents

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the log's integrity: hash chain, gapless positions and stream versions, every payload decodes.")

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print findings as JSON.") var json = false

    func run() throws {
        try reportingErrors {
            let store = try options.openForReading()
            let progress = ProgressBar(total: Int(try store.count().events), label: "events")
            let started = Date()
            var report = try store.verifyIntegrity { done, _ in progress.update(Int(done)) }
            // Payloads must also make sense as gamelog events.
            var undecodable: [EventStoreError] = []
            if report.problems.isEmpty {
                try store.scan(verify: false) { event in
                    do {
                        _ = try RecordedEvent.decode(type: event.type, typeVersion: event.typeVersion, payload: event.payload)
                    } catch {
                        undecodable.append(.corruptPayload(position: event.position, detail: String(describing: error)))
                    }
                }
            }
            report.problems += undecodable
            progress.finish()
            let seconds = Date().timeIntervalSince(started)
            if json {
                let findings = report.problems.map { ["position": $0.position.map { Int($0) } as Any, "severity": "error", "check": "integrity", "message": $0.description] }
                let object: [String: Any] = ["events": report.eventCount, "ok": report.isSound, "findings": findings, "seconds": seconds]
                print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
            } else if report.isSound {
                print("ok: \(report.eventCount) events, hash chain intact (head \(report.headHash.prefix(8).map { String(format: "%02x", $0) }.joined())…), \(Int(Double(report.eventCount) / max(seconds, 0.001))) events/s")
            } else {
                for problem in report.problems.prefix(50) { print("error: \(problem.description)") }
                if report.problems.count > 50 { print("… and \(report.problems.count - 50) more") }
            }
            if !report.isSound { throw ExitCode(1) }
        }
    }
}
