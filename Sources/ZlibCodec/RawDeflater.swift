import CZlib

/// Compresses independent small messages as raw deflate streams (no zlib header or
/// checksum), each primed with the same preset dictionary.
///
/// One deflater keeps its zlib state between calls and resets it per message, so the
/// per-message cost is the reset plus re-priming the dictionary, not an allocation of
/// zlib's ~260 KiB of tables. Not thread-safe: use one per thread.
public final class RawDeflater {
    // zlib keeps a pointer back to its z_stream and checks it on every call, so the
    // stream must live at a fixed address for the deflater's whole life.
    private let stream: UnsafeMutablePointer<z_stream>
    private let dictionary: [UInt8]
    private var scratch: [UInt8] = []

    /// Creates a deflater.
    /// - Parameters:
    ///   - level: zlib compression level, 0...9 (`Z_DEFAULT_COMPRESSION` is -1).
    ///   - dictionary: preset dictionary; empty for none. zlib uses at most its last 32 KiB.
    public init(level: Int32 = 6, dictionary: [UInt8] = []) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        self.dictionary = dictionary
        // windowBits -15 selects raw deflate; memLevel 8 is zlib's default.
        let status = deflateInit2_(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY,
                                   zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw ZlibError.initializationFailed(code: status)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses `input` as one complete raw deflate stream.
    public func compress(_ input: [UInt8]) throws -> [UInt8] {
        var status = deflateReset(stream)
        guard status == Z_OK else { throw ZlibError.compressionFailed(code: status) }
        if !dictionary.isEmpty {
            status = dictionary.withUnsafeBufferPointer {
                deflateSetDictionary(stream, $0.baseAddress, uInt($0.count))
            }
            guard status == Z_OK else { throw ZlibError.dictionaryRejected(code: status) }
        }
        let bound = Int(deflateBound(stream, uLong(input.count)))
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        let produced: Int = try input.withUnsafeBufferPointer { inBuf in
            try scratch.withUnsafeMutableBufferPointer { outBuf in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
                stream.pointee.avail_in = uInt(inBuf.count)
                stream.pointee.next_out = outBuf.baseAddress
                stream.pointee.avail_out = uInt(outBuf.count)
                let result = deflate(stream, Z_FINISH)
                defer {
                    stream.pointee.next_in = nil
                    stream.pointee.next_out = nil
                }
                // deflateBound guarantees room for a single Z_FINISH call.
                guard result == Z_STREAM_END else { throw ZlibError.compressionFailed(code: result) }
                return outBuf.count - Int(stream.pointee.avail_out)
            }
        }
        return Array(scratch[0..<produced])
    }
}
