import MessagesModel

/// A game's rules as an auditor checks them: fed every ``GameEvent`` of one
/// conversation in the order things happened, it answers with the rules broken.
public protocol LegalityChecker {
    /// The rules `event` breaks, given every event checked before it (none: it is legal).
    mutating func check(_ event: GameEvent) -> [RuleBreak]
}

/// A game rule an event broke, or could not be checked from this log.
public struct RuleBreak: Hashable, Sendable {
    /// A short name, e.g. `legal-move`.
    public var rule: String
    /// What the rule asked for, e.g. "O to move".
    public var expected: String
    /// What the log shows instead, e.g. "Bob, who plays X, moved".
    public var found: String
    /// The game (session) the break is in, when known.
    public var session: SessionID?
    /// The device whose recording shows the break.
    public var device: DeviceID?
    /// Set when the rule cannot be checked because a player's recording is not in
    /// the log: that player's name. Such a break is never an error.
    public var missingRecordingOf: String?

    public init(rule: String, expected: String, found: String, session: SessionID?, device: DeviceID?,
                missingRecordingOf: String? = nil) {
        self.rule = rule
        self.expected = expected
        self.found = found
        self.session = session
        self.device = device
        self.missingRecordingOf = missingRecordingOf
    }

    /// A rule that needs `player`'s recording, which this log lacks.
    public static func notCheckable(_ rule: String, needs what: String, missing player: String?, session: SessionID?,
                                    device: DeviceID?) -> RuleBreak {
        let who = player ?? "the sender"
        return RuleBreak(rule: rule, expected: what, found: "not checkable from this log: \(who)'s recording is missing",
                         session: session, device: device, missingRecordingOf: who)
    }
}

/// A checker for games with no rules to check.
public struct NoRules: LegalityChecker {
    public init() {}
    /// Nothing to break.
    public mutating func check(_ event: GameEvent) -> [RuleBreak] { [] }
}
