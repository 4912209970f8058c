import Foundation

/// One thing an audit found: where, which rule, what was expected and what was found.
public struct Finding: Hashable, Codable, Sendable, CustomStringConvertible {
    public enum Severity: String, Hashable, Codable, Sendable {
        case error, warning
        /// The rule needs a recording this log does not hold (a log from one device):
        /// neither kept nor broken, and never an error.
        case notCheckable
        /// Not a fault of this log but of the game's design: what its messages carry to a
        /// device beyond what that device's player may see (a modified client there could
        /// read it). Never an error.
        case design
    }
    public enum Check: String, Hashable, Codable, Sendable {
        case integrity, lifecycle, legality, consistency, invariant
        /// The devices' signatures over their streams.
        case signature
        /// Stored projection snapshots against the events.
        case snapshot
        /// The recorded outputs against the extension's code, re-run.
        case rerun
        /// The catalog of conversations and games against the events it is derived from.
        case catalog
        /// What a game's messages reveal beyond its player views.
        case design
        /// What the network did to a message (lost, not delivered yet, a send that failed):
        /// a fact about the delivery, never about the log's honesty, so never an error.
        case network
    }

    public var severity: Severity
    public var check: Check
    /// The global position of the event at fault, when there is one.
    public var position: Int64?
    public var game: String?
    public var device: String?
    /// A short name of the rule, e.g. `didBecomeActive-after-willBecomeActive`.
    public var rule: String
    public var expected: String
    public var found: String

    public init(_ severity: Severity, _ check: Check, position: Int64?, game: String? = nil, device: String? = nil,
                rule: String, expected: String, found: String) {
        self.severity = severity
        self.check = check
        self.position = position
        self.game = game
        self.device = device
        self.rule = rule
        self.expected = expected
        self.found = found
    }

    public var description: String {
        "\(heading(naming: game)): expected \(expected), found \(found)"
    }

    /// The finding without what was expected and found, which quote messages in full:
    /// what a device's view may show of it (an auditor's text could carry a game's secret).
    public var outline: String { heading(naming: nil) }

    /// Severity, check, rule and where.
    private func heading(naming game: String?) -> String {
        var place = position.map { "position \($0)" } ?? "log"
        if let device { place += ", device \(device)" }
        if let game { place += ", game \(game.prefix(8).lowercased())" }
        let label = severity == .notCheckable ? "not checkable" : severity.rawValue
        return "\(label): \(check) \(rule) at \(place)"
    }
}
