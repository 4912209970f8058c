/// Compresses small messages (a few hundred bytes each) as raw deflate streams against
/// a preset dictionary, each one block coded with deflate's fixed Huffman codes
/// (RFC 1951, 3.2.6).
///
/// For a message that small, zlib spends most of its time on work that does not depend
/// on the message: ``RawDeflater`` copies a primed stream (window, hash table and
/// chains) for every message, and zlib builds and sends Huffman trees for a block of a
/// few hundred bytes. On a collector's payloads (365 bytes on average, an 8 KB
/// dictionary) that was 15 us a payload at level 6 and still 11 us at level 1. This
/// deflater hashes the dictionary once, reads it without copying, keeps a small table
/// of its own for the message's earlier positions, and codes the block with the fixed
/// codes: about a quarter of the time, for output about 8% larger (docs/BENCHMARKS.md,
/// session 36).
///
/// Any raw inflater with deflate's full 32 KiB window, primed with the same dictionary,
/// decodes the output (``RawInflater`` does); a dictionary longer than 32 KiB counts by
/// its last 32 KiB, as zlib's. Not thread-safe: use one per thread.
public final class FixedCodeDeflater {
    private static let hashBits = 13
    private static let hashSize = 1 << hashBits
    private static let window = 32768
    private static let minimumMatch = 4
    private static let maximumMatch = 258
    /// Candidates tried in each of the two chains (the message's own positions, then the
    /// dictionary's): a longer walk found 3% smaller output at twice the time.
    private static let chainLimit = 8
    /// A match at least this long is taken at once, without looking one byte further.
    private static let goodEnough = 32

    /// The dictionary's part in the window, then room for the message.
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private let dictionaryCount: Int
    /// The dictionary's hash chains: the newest position of each hash, each position's
    /// previous one with the same hash (-1: none).
    private let dictionaryHead: UnsafeMutablePointer<Int32>
    private let dictionaryPrevious: UnsafeMutablePointer<Int32>
    /// The message's own chains, valid where `stamp` holds the current message's number,
    /// so that nothing is cleared between messages.
    private let messageHead: UnsafeMutablePointer<Int32>
    private let stamp: UnsafeMutablePointer<UInt32>
    private var messagePrevious: UnsafeMutablePointer<Int32>
    private var current: UInt32 = 0
    private var output: UnsafeMutablePointer<UInt8>
    private var outputCapacity: Int

    /// Creates a deflater for `dictionary` (empty for none).
    public init(dictionary: [UInt8] = []) {
        let used = dictionary.suffix(Self.window)
        let count = used.count
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: count + 1024)
        used.withUnsafeBufferPointer { _ = UnsafeMutableBufferPointer(start: buffer, count: count).initialize(from: $0) }
        let head = UnsafeMutablePointer<Int32>.allocate(capacity: Self.hashSize)
        head.initialize(repeating: -1, count: Self.hashSize)
        let previous = UnsafeMutablePointer<Int32>.allocate(capacity: max(count, 1))
        previous.initialize(repeating: -1, count: max(count, 1))
        if count >= Self.minimumMatch {
            for position in 0...(count - Self.minimumMatch) {
                let hash = Self.hash(buffer + position)
                previous[position] = head[hash]
                head[hash] = Int32(position)
            }
        }
        self.buffer = buffer
        capacity = count + 1024
        dictionaryCount = count
        dictionaryHead = head
        dictionaryPrevious = previous
        messageHead = .allocate(capacity: Self.hashSize)
        messageHead.initialize(repeating: -1, count: Self.hashSize)
        stamp = .allocate(capacity: Self.hashSize)
        stamp.initialize(repeating: 0, count: Self.hashSize)
        messagePrevious = .allocate(capacity: 1024)
        outputCapacity = 1024
        output = .allocate(capacity: outputCapacity)
    }

    deinit {
        buffer.deallocate()
        dictionaryHead.deallocate()
        dictionaryPrevious.deallocate()
        messageHead.deallocate()
        stamp.deallocate()
        messagePrevious.deallocate()
        output.deallocate()
    }

    /// Compresses `input` as one complete raw deflate stream.
    public func compress(_ input: [UInt8]) -> [UInt8] {
        reserve(input.count)
        input.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { (buffer + dictionaryCount).update(from: base, count: source.count) }
        }
        if current == UInt32.max {
            stamp.update(repeating: 0, count: Self.hashSize)
            current = 0
        }
        current += 1
        var bits = BitWriter(output)
        bits.put(0b011, 3)  // the last block, fixed codes
        let end = dictionaryCount + input.count
        var position = dictionaryCount
        var found: Match? = nil
        while position < end {
            let match = found ?? longestMatch(at: position, end: end)
            found = nil
            guard match.length >= Self.minimumMatch else {
                insert(position, end: end)
                bits.literal(buffer[position])
                position += 1
                continue
            }
            insert(position, end: end)
            // One byte later may start a longer match (zlib's lazy matching).
            if match.length < Self.goodEnough && position + 1 < end {
                let next = longestMatch(at: position + 1, end: end)
                if next.length > match.length {
                    bits.literal(buffer[position])
                    position += 1
                    found = next
                    continue
                }
            }
            bits.match(length: match.length, distance: match.distance)
            for covered in (position + 1)..<(position + match.length) { insert(covered, end: end) }
            position += match.length
        }
        bits.symbol(256)  // end of block
        let produced = bits.finish()
        return Array(UnsafeBufferPointer(start: output, count: produced))
    }

    private struct Match {
        var length: Int
        var distance: Int
    }

    /// Room for a message of `count` bytes and its worst-case output (every byte a
    /// 9-bit literal).
    private func reserve(_ count: Int) {
        if dictionaryCount + count > capacity {
            let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: dictionaryCount + count)
            grown.initialize(from: buffer, count: dictionaryCount)
            buffer.deallocate()
            buffer = grown
            messagePrevious.deallocate()
            messagePrevious = .allocate(capacity: count)
            capacity = dictionaryCount + count
        }
        let bound = count + count / 8 + 16
        if bound > outputCapacity {
            output.deallocate()
            output = .allocate(capacity: bound)
            outputCapacity = bound
        }
    }

    @inline(__always)
    private static func hash(_ pointer: UnsafePointer<UInt8>) -> Int {
        let word = UnsafeRawPointer(pointer).loadUnaligned(as: UInt32.self)
        return Int((word &* 2_654_435_761) >> UInt32(32 - hashBits))
    }

    @inline(__always)
    private func insert(_ position: Int, end: Int) {
        guard end - position >= Self.minimumMatch else { return }
        let hash = Self.hash(buffer + position)
        if stamp[hash] != current {
            stamp[hash] = current
            messageHead[hash] = -1
        }
        messagePrevious[position - dictionaryCount] = messageHead[hash]
        messageHead[hash] = Int32(position)
    }

    /// The longest match for `position` among the message's earlier positions (nearest
    /// first) and then the dictionary's, up to ``chainLimit`` of each.
    @inline(__always)
    private func longestMatch(at position: Int, end: Int) -> Match {
        let longest = min(end - position, Self.maximumMatch)
        var best = Match(length: 0, distance: 0)
        guard longest >= Self.minimumMatch else { return best }
        let hash = Self.hash(buffer + position)
        let here = buffer + position
        if stamp[hash] == current {
            var candidate = Int(messageHead[hash])
            var tries = Self.chainLimit
            while candidate >= 0 && tries > 0 && position - candidate <= Self.window {
                let length = Self.commonPrefix(buffer + candidate, here, longest)
                if length > best.length {
                    best = Match(length: length, distance: position - candidate)
                    if length == longest { return best }
                }
                candidate = Int(messagePrevious[candidate - dictionaryCount])
                tries -= 1
            }
        }
        var candidate = Int(dictionaryHead[hash])
        var tries = Self.chainLimit
        while candidate >= 0 && tries > 0 && position - candidate <= Self.window {
            let length = Self.commonPrefix(buffer + candidate, here, longest)
            if length > best.length {
                best = Match(length: length, distance: position - candidate)
                if length == longest { return best }
            }
            candidate = Int(dictionaryPrevious[candidate])
            tries -= 1
        }
        return best
    }

    @inline(__always)
    private static func commonPrefix(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ limit: Int) -> Int {
        var count = 0
        while count + 8 <= limit {
            let difference = UnsafeRawPointer(a + count).loadUnaligned(as: UInt64.self)
                ^ UnsafeRawPointer(b + count).loadUnaligned(as: UInt64.self)
            if difference != 0 { return count + (UInt64(littleEndian: difference).trailingZeroBitCount >> 3) }
            count += 8
        }
        while count < limit && a[count] == b[count] { count += 1 }
        return count
    }
}

/// Deflate's bit order: values low bit first, Huffman codes high bit first (so stored
/// reversed), bytes filled from their low bit.
private struct BitWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private var next: UnsafeMutablePointer<UInt8>
    private var pending: UInt64 = 0
    private var count = 0

    init(_ start: UnsafeMutablePointer<UInt8>) {
        self.start = start
        next = start
    }

    @inline(__always)
    mutating func put(_ value: UInt32, _ width: Int) {
        pending |= UInt64(value) << UInt64(count)
        count += width
        while count >= 8 {
            next.pointee = UInt8(truncatingIfNeeded: pending)
            next += 1
            pending >>= 8
            count -= 8
        }
    }

    @inline(__always)
    mutating func symbol(_ symbol: Int) {
        let code = FixedCodes.literalLength[symbol]
        put(UInt32(code.bits), Int(code.width))
    }

    @inline(__always)
    mutating func literal(_ byte: UInt8) { symbol(Int(byte)) }

    @inline(__always)
    mutating func match(length: Int, distance: Int) {
        let lengthCode = Int(FixedCodes.lengthCode[length])
        symbol(257 + lengthCode)
        let lengthExtra = Int(FixedCodes.lengthExtra[lengthCode])
        if lengthExtra > 0 { put(UInt32(length - Int(FixedCodes.lengthBase[lengthCode])), lengthExtra) }
        let distanceCode = FixedCodes.distanceCode(distance)
        put(UInt32(FixedCodes.reversedDistance[distanceCode]), 5)
        let distanceExtra = Int(FixedCodes.distanceExtra[distanceCode])
        if distanceExtra > 0 { put(UInt32(distance - Int(FixedCodes.distanceBase[distanceCode])), distanceExtra) }
    }

    /// Pads the last byte; the bytes written.
    mutating func finish() -> Int {
        if count > 0 { put(0, 8 - count) }
        return next - start
    }
}

/// The fixed codes' tables (RFC 1951, 3.2.5 and 3.2.6).
private enum FixedCodes {
    static let lengthBase: [UInt16] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                       35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                       3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase: [UInt16] = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
                                         257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
                                         8193, 12289, 16385, 24577]
    static let distanceExtra: [UInt8] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
                                         7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// Each literal/length symbol's code, bit-reversed, and its width.
    static let literalLength: [(bits: UInt16, width: UInt8)] = (0..<288).map { symbol in
        switch symbol {
        case ..<144: return (reversed(0x30 + symbol, 8), 8)
        case ..<256: return (reversed(0x190 + symbol - 144, 9), 9)
        case ..<280: return (reversed(symbol - 256, 7), 7)
        default: return (reversed(0xC0 + symbol - 280, 8), 8)
        }
    }

    /// For each match length 0...258, the index of its length code.
    static let lengthCode: [UInt8] = (0...258).map { length in
        guard length >= 3 else { return 0 }
        if length == 258 { return 28 }
        return UInt8(lengthBase.lastIndex { Int($0) <= length }!)
    }

    static let reversedDistance: [UInt8] = (0..<30).map { UInt8(reversed($0, 5)) }

    /// For distances 1...512, the index of its distance code; further ones from their
    /// high bits.
    private static let nearDistanceCode: [UInt8] = (0...512).map { distance in
        guard distance >= 1 else { return 0 }
        return UInt8(distanceBase.lastIndex { Int($0) <= distance }!)
    }
    private static let farDistanceCode: [UInt8] = (0...256).map { high in
        let distance = max((high << 7) + 1, 513)
        return UInt8(distanceBase.lastIndex { Int($0) <= distance }!)
    }

    @inline(__always)
    static func distanceCode(_ distance: Int) -> Int {
        // Above 512, every code's base less one is a multiple of 128, so the bits above
        // the seventh decide it.
        distance <= 512 ? Int(nearDistanceCode[distance]) : Int(farDistanceCode[(distance - 1) >> 7])
    }

    private static func reversed(_ code: Int, _ width: Int) -> UInt16 {
        var result = 0
        var rest = code
        for _ in 0..<width {
            result = (result << 1) | (rest & 1)
            rest >>= 1
        }
        return UInt16(result)
    }
}
