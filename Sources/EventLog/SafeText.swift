import Foundation

/// Text from a log, made safe to show: whoever wrote the log chose every name, caption
/// and URL in it, and a terminal obeys escape sequences (retitling the window, erasing
/// lines, moving the cursor) written inside them.
public enum SafeText {
    /// `text` with every control and bidirectional-formatting character replaced by
    /// U+FFFD, so that it prints as one line and cannot drive the terminal.
    public static func line(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(isUnsafe(scalar) ? "\u{FFFD}" : scalar) }
        return String(out)
    }

    /// Like ``line(_:)`` but keeps line feeds and tabs (multi-line text such as a board).
    public static func lines(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isUnsafe($0) && $0 != "\n" && $0 != "\t" }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            out.append(isUnsafe(scalar) && scalar != "\n" && scalar != "\t" ? "\u{FFFD}" : scalar)
        }
        return String(out)
    }

    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true           // C0 and C1 controls (ESC, CR, CSI...)
        case 0x202A...0x202E, 0x2066...0x2069: return true   // bidirectional overrides and isolates
        default: return false
        }
    }
}
