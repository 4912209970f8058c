import CZlib

/// Decompresses raw deflate streams made by ``RawDeflater`` with the same preset
/// dictionary. Keeps its zlib state between calls; not thread-safe.
public final class RawInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let dictionary: [UInt8]
    private var scratch: [UInt8] = []

    /// Creates an inflater primed with `dictionary` (empty for none).
    public init(dictionary: [UInt8] = []) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        self.dictionary = dictionary
        let status = inflateInit2_(stream, -15, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw ZlibError.initializationFailed(code: status)
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Resets the stream for a new input and primes it with the dictionary.
    private func begin() throws {
        var status = inflateReset(stream)
        guard status == Z_OK else { throw ZlibError.initializationFailed(code: status) }
        if !dictionary.isEmpty {
            // Raw streams carry no dictionary id, so zlib lets us set it up front.
            status = dictionary.withUnsafeBufferPointer {
                inflateSetDictionary(stream, $0.baseAddress, uInt($0.count))
            }
            guard status == Z_OK else { throw ZlibError.dictionaryRejected(code: status) }
        }
    }

    /// One call to zlib: `input` from `consumed` into `scratch[produced..<end]`; returns its
    /// status and the bytes it took and gave.
    private func step(_ input: [UInt8], consumed: Int, produced: Int, end: Int) -> (result: Int32, taken: Int, given: Int) {
        input.withUnsafeBufferPointer { inBuf in
            scratch.withUnsafeMutableBufferPointer { outBuf -> (Int32, Int, Int) in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress.map { $0 + consumed })
                stream.pointee.avail_in = uInt(inBuf.count - consumed)
                stream.pointee.next_out = outBuf.baseAddress! + produced
                stream.pointee.avail_out = uInt(end - produced)
                let result = inflate(stream, Z_NO_FLUSH)
                let taken = inBuf.count - consumed - Int(stream.pointee.avail_in)
                let given = end - produced - Int(stream.pointee.avail_out)
                stream.pointee.next_in = nil
                stream.pointee.next_out = nil
                return (result, taken, given)
            }
        }
    }

    /// The error for a status that ends a stream badly.
    private func failure(_ result: Int32) -> ZlibError {
        switch result {
        case Z_NEED_DICT: return .corruptInput(message: "stream asks for a dictionary")
        case Z_DATA_ERROR: return .corruptInput(message: stream.pointee.msg.map { String(cString: $0) } ?? "invalid data")
        default: return .corruptInput(message: "zlib status \(result)")
        }
    }

    /// Decompresses one complete raw deflate stream.
    /// - Parameters:
    ///   - input: the compressed bytes.
    ///   - expectedSize: the decompressed size if known; used to size the buffer and
    ///     checked exactly.
    ///   - limit: the most bytes the output may have.
    public func decompress(_ input: [UInt8], expectedSize: Int? = nil, limit: Int = 16 << 20) throws -> [UInt8] {
        try begin()
        var capacity = min(limit, max(expectedSize.map { $0 + 1 } ?? input.count * 4, 64))
        if scratch.count < capacity { scratch = [UInt8](repeating: 0, count: capacity) }
        var produced = 0
        var consumed = 0
        while true {
            let (result, inUsed, outUsed) = step(input, consumed: consumed, produced: produced, end: capacity)
            consumed += inUsed
            produced += outUsed
            switch result {
            case Z_STREAM_END:
                // Bytes after the stream's end are not part of any event: a stored
                // payload was changed (docs/FORMAT.md: nothing may follow the stream).
                guard consumed == input.count else {
                    throw ZlibError.corruptInput(message: "\(input.count - consumed) bytes follow the end of the deflate stream")
                }
                if let expectedSize, expectedSize != produced {
                    throw ZlibError.corruptInput(message: "expected \(expectedSize) bytes, got \(produced)")
                }
                return Array(scratch[0..<produced])
            case Z_OK, Z_BUF_ERROR:
                if produced < capacity {
                    // zlib made no progress with room to spare: the input ran out.
                    if consumed >= input.count { throw ZlibError.truncatedInput }
                    continue
                }
                guard capacity < limit else { throw ZlibError.outputTooLarge(limit: limit) }
                capacity = min(limit, capacity * 2)
                if scratch.count < capacity {
                    scratch.append(contentsOf: [UInt8](repeating: 0, count: capacity - scratch.count))
                }
            default:
                throw failure(result)
            }
        }
    }

    /// Inflates one raw deflate stream that holds `size` bytes only as far as `read` needs:
    /// `read` is handed the bytes out so far (the first `first`, then as many as it asked
    /// for) and answers how many it needs in all, or nil once it has what it wants. What
    /// follows is never inflated, so never checked: a reader of the whole stream checks it.
    /// - Throws: ``ZlibError`` for damaged input, a stream shorter than `size`, or a
    ///   request past `size`; whatever `read` throws.
    public func decompressPrefix(_ input: [UInt8], size: Int, first: Int,
                                 _ read: (UnsafeBufferPointer<UInt8>) throws -> Int?) throws {
        try begin()
        guard size >= 0 else { throw ZlibError.corruptInput(message: "a stream of \(size) bytes") }
        if scratch.count < size { scratch = [UInt8](repeating: 0, count: size) }
        var produced = 0, consumed = 0
        var target = min(size, max(0, first))
        while true {
            while produced < target {
                // Out exactly as far as asked: zlib stops when its output is full.
                let (result, inUsed, outUsed) = step(input, consumed: consumed, produced: produced, end: target)
                consumed += inUsed
                produced += outUsed
                switch result {
                case Z_STREAM_END:
                    guard produced == size else {
                        throw ZlibError.corruptInput(message: "expected \(size) bytes, got \(produced)")
                    }
                case Z_OK, Z_BUF_ERROR:
                    // No progress with room to spare: the input ran out.
                    if outUsed == 0 && inUsed == 0 { throw ZlibError.truncatedInput }
                default:
                    throw failure(result)
                }
            }
            let wanted = try scratch.withUnsafeBufferPointer { try read(UnsafeBufferPointer(rebasing: $0[0..<produced])) }
            guard let wanted else { return }
            guard wanted > produced, wanted <= size else {
                throw ZlibError.corruptInput(message: "\(wanted) bytes asked of a stream of \(size), \(produced) out")
            }
            target = wanted
        }
    }
}
