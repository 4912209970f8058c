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
            message not yet delivered, do not fail). A log from some devices only is checked \
            as far as it can be: rules that need a missing device's recording are reported \
            as "not checkable", never as errors.
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
            let unchecked = findings.filter { $0.severity == .notCheckable }
            let warnings = findings.count - errors.count - unchecked.count
            let devices = try recordedDevices(store).map(\.name)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                let report = Report(events: total, ok: errors.isEmpty, seconds: seconds, recordedDevices: devices,
                                    notCheckable: unchecked.count, findings: findings)
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                for finding in findings.prefix(100) { print(finding.description) }
                if findings.count > 100 { print("… and \(findings.count - 100) more (use --json for all)") }
                let rate = Int(Double(total) / max(seconds, 0.001))
                print("recordings from device\(devices.count == 1 ? "" : "s") \(devices.joined(separator: ", "))"
                      + (unchecked.isEmpty ? "" : "; \(unchecked.count) checks need a recording this log does not hold"))
                if errors.isEmpty {
                    print("ok: \(total) events checked, no errors\(warnings == 0 ? "" : ", \(warnings) warnings") (\(rate) events/s)")
                } else {
                    print("\(errors.count) errors, \(warnings) warnings in \(total) events")
                }
            }
            if !errors.isEmpty { throw ExitCode(1) }
        }
    }

    struct Report: Encodable {
        var events: Int
        var ok: Bool
        var seconds: Double
        var recordedDevices: [String]
        var notCheckable: Int
        var findings: [Finding]
    }
}
