import EventStore
import Foundation
import Interchange

/// A log whose names were chosen by an attacker: markup and script for the browser,
/// escape sequences for the terminal. Made from a clean log by rewriting its payloads
/// and importing them unsigned, as a log handed over by someone else could be.
public enum HostileLog {
    /// Shown instead of Alice: an image whose error handler runs script.
    public static let markup = "<img src=x onerror=alert(document.domain)>"
    /// Shown instead of Bob: retitles the window, returns the carriage and erases the line.
    public static let escapes = "Bob\u{1B}]0;owned\u{07}\r\u{1B}[2K"
    /// The name device A is given: a script element.
    public static let device = "<script>alert(1)</script>"

    public static func make(from clean: EventStore, to path: String) throws {
        var lines: [String] = []
        _ = try Interchange.export(from: clean) { lines.append($0) }
        let text = lines.filter { !$0.hasPrefix(#"{"head":"#) && !$0.hasPrefix(#"{"tree":"#) && !$0.hasPrefix(#"{"checkpoint":"#) }
            .map { $0.replacingOccurrences(of: #","leaf":[0-9]+"#, with: "", options: .regularExpression) }
            .joined(separator: "\n")
        var events = try Interchange.read(text, file: "clean.jsonl")
        for index in events.indices {
            events[index].payload = events[index].payload
                .replacingOccurrences(of: "\"Alice\"", with: "\"\(markup)\"")
                .replacingOccurrences(of: "\"Bob\"", with: "\"Bob\\u001b]0;owned\\u0007\\r\\u001b[2K\"")
                .replacingOccurrences(of: "\"device\":\"A\"", with: "\"device\":\"\(device)\"")
            events[index].streamHash = nil
            events[index].leaf = nil
        }
        try Interchange.import(events, into: try EventStore(path: path))
    }
}
