import NIOCore

/// Rows in the text format of PostgreSQL's `COPY ... FROM STDIN` (the one postgres-nio
/// sends): columns apart by tabs, a row a line, `\N` for NULL, `bytea` as hex.
///
/// Only integers and bytes are written, so no value can hold a tab, a newline or a
/// backslash of its own: nothing read from an upload reaches the stream unencoded.
package struct CopyRows: Sendable {
    package private(set) var buffer = ByteBuffer()
    /// Rows ended so far.
    package private(set) var count = 0
    private var columnsInRow = 0

    package init() {}

    /// The rows' bytes as sent.
    package var bytes: [UInt8] { Array(buffer.readableBytesView) }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// The bytes before a new column: a tab after the row's first (written with the
    /// column's value, one reservation of the buffer a column rather than two).
    private mutating func separator() -> Int {
        defer { columnsInRow += 1 }
        return columnsInRow > 0 ? 1 : 0
    }

    private mutating func separate() {
        if separator() > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
    }

    package mutating func append(_ value: Int64) {
        let tab = separator()
        // Digits written in place: a String per column was a tenth of a collector's write.
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 21) { out in
            if tab > 0 { out[0] = UInt8(ascii: "\t") }
            var magnitude = value.magnitude, digits = 0
            repeat { digits += 1; magnitude /= 10 } while magnitude > 0
            let count = tab + digits + (value < 0 ? 1 : 0)
            if value < 0 { out[tab] = UInt8(ascii: "-") }
            magnitude = value.magnitude
            for at in stride(from: count - 1, through: count - digits, by: -1) {
                out[at] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            return count
        }
    }

    package mutating func append(_ value: Int64?) {
        guard let value else { return appendNull() }
        append(value)
    }

    /// A `bytea` value: `\x` and its hex digits (the backslash doubled, as COPY's text format escapes it).
    package mutating func append(bytes: [UInt8]) {
        bytes.withUnsafeBytes { append(bytes: $0) }
    }

    /// A `bytea` value from memory in place (an id, a hash held inline: no array made).
    package mutating func append(bytes: UnsafeRawBufferPointer) {
        let tab = separator()
        let count = tab + 3 + 2 * bytes.count
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { out in
            if tab > 0 { out[0] = UInt8(ascii: "\t") }
            out[tab] = UInt8(ascii: "\\")
            out[tab + 1] = UInt8(ascii: "\\")
            out[tab + 2] = UInt8(ascii: "x")
            Self.hexDigits.withUnsafeBufferPointer { digits in
                var at = tab + 3
                for byte in bytes {
                    out[at] = digits[Int(byte >> 4)]
                    out[at + 1] = digits[Int(byte & 0x0F)]
                    at += 2
                }
            }
            return count
        }
    }

    package mutating func appendNull() {
        separate()
        buffer.writeBytes([UInt8(ascii: "\\"), UInt8(ascii: "N")])
    }

    package mutating func endRow() {
        buffer.writeInteger(UInt8(ascii: "\n"))
        count += 1
        columnsInRow = 0
    }
}
