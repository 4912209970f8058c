import ArgumentParser
import Audit
import EventStore
import Foundation
import Games

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Audit the log: integrity, Messages lifecycle, game legality and cross-device consistency.",
        discussion: """
            Each finding names the event position, game, device, the rule broken, and what was \
            expected versus found. Exits 1 if any finding is an error (warnings, such as a \
            message not yet delivered, do not fail).
            """)

    @OptionGroup var options: GlobalOptions
    @Argument(help: "Only this game (or conversation): an id or a unique prefix.") var game: String?
    @Flag(help: "Print findings as JSON.") var json = false

    func run() throws {
        try reportingErrors {
            let store = try options.openForReading()
            let total = Int(try store.count().events)
            let progress = ProgressBar(total: total, label: "events")
            let started = Date()
            let findings = try Auditor(games: .standard).audit(store, game: game) { done, _ in progress.update(done) }
            progress.finish()
            let seconds = Date().timeIntervalSince(started)
            let errors = findings.filter { $0.severity == .error }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                let report = Report(events: total, ok: errors.isEmpty, seconds: seconds, findings: findings)
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                for finding in findings.prefix(100) { print(finding.description) }
                if findings.count > 100 { print("… and \(findings.count - 100) more (use --json for all)") }
                let rate = Int(Double(total) / max(seconds, 0.001))
                if errors.isEmpty {
                    print("ok: \(total) events checked, no errors\(findings.isEmpty ? "" : ", \(findings.count) warnings") (\(rate) events/s)")
                } else {
                    print("\(errors.count) errors, \(findings.count - errors.count) warnings in \(total) events")
                }
            }
            if !errors.isEmpty { throw ExitCode(1) }
        }
    }

    struct Report: Encodable {
        var events: Int
        var ok: Bool
        var seconds: Double
        var findings: [Finding]
    }
}
