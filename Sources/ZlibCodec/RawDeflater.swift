import CZlib

/// Compresses independent small messages as raw deflate streams (no zlib header or
/// checksum), each primed with the same preset dictionary.
///
/// Priming zlib with a dictionary costs time in proportion to its size (every
/// position is hashed), which for an 8 KiB dictionary is several times the cost of
/// compressing a 400-byte message. So the deflater primes a template stream once and
/// starts each message from a copy of it (`deflateCopy`), which only copies memory.
/// The window is sized to the dictionary, to keep that copy small. Any raw inflater
/// (window 2^15) decodes the output. Not thread-safe: use one per thread.
public final class RawDeflater {
    // zlib keeps a pointer back to its z_stream and checks it on every call, so
    // streams must live at fixed addresses.
    private let template: UnsafeMutablePointer<z_stream>
    private let work: UnsafeMutablePointer<z_stream>
    private var workIsLive = false
    private var scratch: [UInt8] = []

    /// Creates a deflater.
    /// - Parameters:
    ///   - level: zlib compression level, 0...9.
    ///   - memoryLevel: zlib's memLevel, 1...9: the size of its hash table.
    ///   - dictionary: preset dictionary; empty for none. zlib uses at most its last 32 KiB.
    ///   - largestWindow: use zlib's largest window (32 KiB) whatever the dictionary's
    ///     size, for inputs long enough to repeat themselves further back than it.
    public init(level: Int32 = 6, memoryLevel: Int32 = 4, dictionary: [UInt8] = [], largestWindow: Bool = false) throws {
        template = .allocate(capacity: 1)
        template.initialize(to: z_stream())
        work = .allocate(capacity: 1)
        work.initialize(to: z_stream())
        // The smallest window that holds the whole dictionary (zlib allows 2^9...2^15).
        var windowBits: Int32 = largestWindow ? 15 : 9
        while windowBits < 15 && (1 << windowBits) < dictionary.count { windowBits += 1 }
        let status = deflateInit2_(template, level, Z_DEFLATED, -windowBits, memoryLevel, Z_DEFAULT_STRATEGY,
                                   zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            Self.release(template)
            Self.release(work)
            throw ZlibError.initializationFailed(code: status)
        }
        if !dictionary.isEmpty {
            let primed = dictionary.withUnsafeBufferPointer {
                deflateSetDictionary(template, $0.baseAddress, uInt($0.count))
            }
            guard primed == Z_OK else {
                deflateEnd(template)
                Self.release(template)
                Self.release(work)
                throw ZlibError.dictionaryRejected(code: primed)
            }
        }
    }

    deinit {
        if workIsLive { deflateEnd(work) }
        deflateEnd(template)
        Self.release(template)
        Self.release(work)
    }

    private static func release(_ stream: UnsafeMutablePointer<z_stream>) {
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses `input` as one complete raw deflate stream.
    public func compress(_ input: [UInt8]) throws -> [UInt8] {
        if workIsLive { deflateEnd(work) }
        let copied = deflateCopy(work, template)
        workIsLive = copied == Z_OK
        guard copied == Z_OK else { throw ZlibError.compressionFailed(code: copied) }
        let bound = Int(deflateBound(work, uLong(input.count)))
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        let produced: Int = try input.withUnsafeBufferPointer { inBuf in
            try scratch.withUnsafeMutableBufferPointer { outBuf in
                work.pointee.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
                work.pointee.avail_in = uInt(inBuf.count)
                work.pointee.next_out = outBuf.baseAddress
                work.pointee.avail_out = uInt(outBuf.count)
                let result = deflate(work, Z_FINISH)
                defer {
                    work.pointee.next_in = nil
                    work.pointee.next_out = nil
                }
                // deflateBound guarantees room for a single Z_FINISH call.
                guard result == Z_STREAM_END else { throw ZlibError.compressionFailed(code: result) }
                return outBuf.count - Int(work.pointee.avail_out)
            }
        }
        return Array(scratch[0..<produced])
    }
}
