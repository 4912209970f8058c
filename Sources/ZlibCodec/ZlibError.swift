/// A failure reported by zlib, with the zlib return code and message when there is one.
public enum ZlibError: Error, Equatable, CustomStringConvertible {
    /// zlib could not set up a stream (out of memory, or a library version mismatch).
    case initializationFailed(code: Int32)
    /// The preset dictionary was refused (it is empty, or zlib rejected it).
    case dictionaryRejected(code: Int32)
    /// Compression stopped with an unexpected zlib status.
    case compressionFailed(code: Int32)
    /// The input is not a valid raw deflate stream for this dictionary.
    case corruptInput(message: String)
    /// The input ended before the deflate stream did.
    case truncatedInput
    /// The decompressed bytes would exceed the caller's limit (a defence against
    /// decompression bombs in hostile files).
    case outputTooLarge(limit: Int)

    public var description: String {
        switch self {
        case .initializationFailed(let code): return "zlib could not initialise a stream (code \(code))"
        case .dictionaryRejected(let code): return "zlib rejected the preset dictionary (code \(code))"
        case .compressionFailed(let code): return "zlib compression failed (code \(code))"
        case .corruptInput(let message): return "corrupt deflate data: \(message)"
        case .truncatedInput: return "deflate data ends before the end of its stream"
        case .outputTooLarge(let limit): return "deflate data expands past the limit of \(limit) bytes"
        }
    }
}
