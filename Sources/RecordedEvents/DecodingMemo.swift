import Foundation
import MessagesModel

/// Values a reader of many events decoded lately, by the exact bytes they were read from:
/// a recording repeats its conversation in every activation's callbacks (four a time,
/// with the message selected in it) and a message in the callbacks and transcript events
/// around it. A value read again from the same bytes, with the same recording's
/// constants, is the same value; the memo hands the one decoded before (sharing its
/// storage) instead of reading it again.
///
/// For one reader at a time (a decoding thread's): not `Sendable`.
package final class DecodingMemo {
    struct Entry<Value> {
        /// The bytes the value was read from: one whole canonical JSON value, so input that
        /// begins with them holds that value and nothing else there.
        var bytes: [UInt8]
        var constants: StreamConstants?
        var value: Value
    }

    private(set) var conversations: [Entry<Conversation>] = []
    private(set) var messages: [Entry<Message>] = []
    /// Lookups answered from the memo, for tests and benchmarks.
    package private(set) var hits = 0

    /// How many of each kind it keeps: most repeats are within a few events of a
    /// recording, and a miss compares the bytes of each entry kept.
    static let capacity = 4
    /// Values read from more bytes than this are not kept (nor compared).
    static let largestValue = 4_096

    package init() {}

    func conversation(at bytes: UnsafeBufferPointer<UInt8>, _ constants: StreamConstants?) -> (Conversation, Int)? {
        Self.find(in: conversations, at: bytes, constants).map { hits += 1; return $0 }
    }

    func message(at bytes: UnsafeBufferPointer<UInt8>, _ constants: StreamConstants?) -> (Message, Int)? {
        Self.find(in: messages, at: bytes, constants).map { hits += 1; return $0 }
    }

    func keep(_ value: Conversation, from bytes: UnsafeBufferPointer<UInt8>, _ constants: StreamConstants?) {
        Self.keep(&conversations, Entry(bytes: Array(bytes), constants: constants, value: value))
    }

    func keep(_ value: Message, from bytes: UnsafeBufferPointer<UInt8>, _ constants: StreamConstants?) {
        Self.keep(&messages, Entry(bytes: Array(bytes), constants: constants, value: value))
    }

    /// The value of the first entry whose bytes `input` begins with, and their count.
    private static func find<Value>(in entries: [Entry<Value>], at input: UnsafeBufferPointer<UInt8>,
                                    _ constants: StreamConstants?) -> (Value, Int)? {
        for entry in entries where entry.bytes.count <= input.count {
            let same = entry.bytes.withUnsafeBufferPointer { kept in
                memcmp(kept.baseAddress!, input.baseAddress!, kept.count) == 0
            }
            // A compact payload's references mean its recording's ids: the same bytes of
            // another recording are another value.
            if same && entry.constants == constants { return (entry.value, entry.bytes.count) }
        }
        return nil
    }

    private static func keep<Value>(_ entries: inout [Entry<Value>], _ entry: Entry<Value>) {
        // Newest first: the next event most likely repeats the last.
        if entries.count >= capacity { entries.removeLast() }
        entries.insert(entry, at: 0)
    }
}
