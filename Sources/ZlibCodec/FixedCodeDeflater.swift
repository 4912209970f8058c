/// Compresses small messages (a few hundred bytes each) as raw deflate streams against
/// a preset dictionary, each one block coded with deflate's fixed Huffman codes
/// (RFC 1951, 3.2.6).
///
/// For a message that small, zlib spends most of its time on work that does not depend
/// on the message: ``RawDeflater`` copies a primed stream (window, hash table and
/// chains) for every message, and zlib builds and sends Huffman trees for a block of a
/// few hundred bytes. On a collector's payloads (362 bytes on average, an 8 KB
/// dictionary) that was 15 us a payload at level 6 and still 11 us at level 1. This
/// deflater hashes the dictionary once, reads it without copying, keeps a small table
/// of its own for the message's earlier positions, and codes the block with the fixed
/// codes: about a fifth of the time, for output about 10% larger (docs/BENCHMARKS.md,
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
    /// The positions inside a match longer than this are not hashed (zlib's
    /// `max_insert_length` at its fast levels): a quarter of the time, 1% more bytes.
    private static let insertLimit = 24

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
        var bits = BitWriter(output, codes: FixedCodes.shared)
        bits.put(0b011, 3)  // the last block, fixed codes
        let end = dictionaryCount + input.count
        var position = dictionaryCount
        var found: Match? = nil
        while position < end {
            let match = found ?? longestMatch(at: position, end: end)
            found = nil
            insert(position, end: end)
            guard match.length >= Self.minimumMatch else {
                bits.literal(buffer[position])
                position += 1
                continue
            }
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
            if match.length <= Self.insertLimit {
                for covered in (position + 1)..<(position + match.length) { insert(covered, end: end) }
            }
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
        let bound = count + count / 8 + 24
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
        if stamp[hash] == current,
           walk(from: messageHead[hash], links: messagePrevious, linksStart: dictionaryCount,
                to: position, longest: longest, best: &best) {
            return best
        }
        _ = walk(from: dictionaryHead[hash], links: dictionaryPrevious, linksStart: 0, to: position, longest: longest, best: &best)
        return best
    }

    /// Walks one hash chain from `first` (`links[p - linksStart]` is the position before
    /// `p`), keeping in `best` any longer match for `position`; true once one is `longest`.
    @inline(__always)
    private func walk(from first: Int32, links: UnsafeMutablePointer<Int32>, linksStart: Int,
                      to position: Int, longest: Int, best: inout Match) -> Bool {
        let here = buffer + position
        var candidate = Int(first)
        var tries = Self.chainLimit
        while candidate >= 0 && tries > 0 && position - candidate <= Self.window {
            let length = Self.commonPrefix(buffer + candidate, here, longest)
            if length > best.length {
                best = Match(length: length, distance: position - candidate)
                if length == longest { return true }
            }
            candidate = Int(links[candidate - linksStart])
            tries -= 1
        }
        return false
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
/// reversed), bytes filled from their low bit. Whole bits go out four bytes at a time.
private struct BitWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private var next: UnsafeMutablePointer<UInt8>
    private var pending: UInt64 = 0
    private var count: UInt64 = 0
    private let codes: FixedCodes

    init(_ start: UnsafeMutablePointer<UInt8>, codes: FixedCodes) {
        self.start = start
        next = start
        self.codes = codes
    }

    /// Up to 32 bits.
    @inline(__always)
    mutating func put(_ value: UInt32, _ width: UInt32) {
        pending |= UInt64(value) << count
        count += UInt64(width)
        if count >= 32 {
            UnsafeMutableRawPointer(next).storeBytes(of: UInt32(truncatingIfNeeded: pending).littleEndian, as: UInt32.self)
            next += 4
            pending >>= 32
            count -= 32
        }
    }

    @inline(__always)
    mutating func symbol(_ symbol: Int) {
        let code = codes.literal[symbol]
        put(code & 0xFFFF, code >> 16)
    }

    @inline(__always)
    mutating func literal(_ byte: UInt8) { symbol(Int(byte)) }

    /// A match: its length's code and extra bits, then its distance's, in one write of
    /// at most 31 bits.
    @inline(__always)
    mutating func match(length: Int, distance: Int) {
        let lengthBits = codes.length[length]
        let distanceBits = codes.distance(distance)
        let lengthWidth = lengthBits >> 24
        put((lengthBits & 0xFF_FFFF) | ((distanceBits & 0xFF_FFFF) << lengthWidth), lengthWidth + (distanceBits >> 24))
    }

    /// Pads the last byte; the bytes written.
    mutating func finish() -> Int {
        while count > 0 {
            next.pointee = UInt8(truncatingIfNeeded: pending)
            next += 1
            pending >>= 8
            count = count >= 8 ? count - 8 : 0
        }
        return next - start
    }
}

/// The fixed codes (RFC 1951, 3.2.5 and 3.2.6), each as the bits to write (its code
/// reversed, then its extra bits) and their width. Made once and never changed or
/// freed, so its tables are safe to share between threads.
private final class FixedCodes: @unchecked Sendable {
    static let shared = FixedCodes()

    private static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                     35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                      3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
                                       257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
                                       8193, 12289, 16385, 24577]
    private static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
                                        7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// Each literal/length symbol: its code reversed in the low 16 bits, its width above.
    let literal: UnsafePointer<UInt32>
    /// Each match length 0...258 (3...258 used): its symbol's code and extra bits in the
    /// low 24 bits, their width in the top 8.
    let length: UnsafePointer<UInt32>
    /// Each distance code: its 5-bit code reversed, its base from bit 8, the width of its
    /// extra bits in the top 8.
    private let distanceCodes: UnsafePointer<UInt32>
    /// Each distance 1...512's code, then each larger one's by its bits above the seventh
    /// (every code's base less one from 257 on is a multiple of 128).
    private let nearDistance: UnsafePointer<UInt8>
    private let farDistance: UnsafePointer<UInt8>

    private init() {
        func reversed(_ code: Int, _ width: Int) -> UInt32 {
            var result: UInt32 = 0
            var rest = code
            for _ in 0..<width {
                result = (result << 1) | UInt32(rest & 1)
                rest >>= 1
            }
            return result
        }
        let literal = UnsafeMutablePointer<UInt32>.allocate(capacity: 288)
        for symbol in 0..<288 {
            let (code, width): (Int, Int) = switch symbol {
            case ..<144: (0x30 + symbol, 8)
            case ..<256: (0x190 + symbol - 144, 9)
            case ..<280: (symbol - 256, 7)
            default: (0xC0 + symbol - 280, 8)
            }
            literal[symbol] = reversed(code, width) | UInt32(width) << 16
        }
        let length = UnsafeMutablePointer<UInt32>.allocate(capacity: 259)
        length.initialize(repeating: 0, count: 259)
        for value in 3...258 {
            let index = value == 258 ? 28 : Self.lengthBase.lastIndex { $0 <= value }!
            let code = literal[257 + index]
            let codeWidth = code >> 16
            let extra = UInt32(value - Self.lengthBase[index])
            length[value] = (code & 0xFFFF) | extra << codeWidth | (codeWidth + UInt32(Self.lengthExtra[index])) << 24
        }
        let distanceCodes = UnsafeMutablePointer<UInt32>.allocate(capacity: 30)
        for code in 0..<30 {
            distanceCodes[code] = reversed(code, 5) | UInt32(Self.distanceBase[code]) << 8 | UInt32(Self.distanceExtra[code]) << 24
        }
        let nearDistance = UnsafeMutablePointer<UInt8>.allocate(capacity: 513)
        nearDistance[0] = 0
        for value in 1...512 { nearDistance[value] = UInt8(Self.distanceBase.lastIndex { $0 <= value }!) }
        let farDistance = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
        for high in 0..<256 {
            let value = max((high << 7) + 1, 513)
            farDistance[high] = UInt8(Self.distanceBase.lastIndex { $0 <= value }!)
        }
        self.literal = UnsafePointer(literal)
        self.length = UnsafePointer(length)
        self.distanceCodes = UnsafePointer(distanceCodes)
        self.nearDistance = UnsafePointer(nearDistance)
        self.farDistance = UnsafePointer(farDistance)
    }

    /// A distance 1...32768: its code and extra bits in the low 24 bits, their width in
    /// the top 8.
    @inline(__always)
    func distance(_ value: Int) -> UInt32 {
        let index = value <= 512 ? Int(nearDistance[value]) : Int(farDistance[(value - 1) >> 7])
        let code = distanceCodes[index]
        let extraWidth = code >> 24
        let extra = UInt32(value) - (code >> 8 & 0xFFFF)
        return (code & 0x1F) | extra << 5 | (5 + extraWidth) << 24
    }
}
