/// Bounds every store holds events to, whoever wrote them.
public enum LogLimits {
    /// The largest canonical payload accepted, so one bad event cannot bloat the log.
    public static let maximumPayloadSize = 1 << 20
}
