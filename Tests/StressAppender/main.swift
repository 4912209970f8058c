// Appends events in a loop for crash and contention tests, printing one line per
// committed batch: "ACK <stream> <first-index> <last-index>" (indexes into this
// process's deterministic event ids), or "CONFLICT <stream>" when an expected-version
// check fails and the batch is retried. Flushes after every line, so a parent that
// kills this process knows exactly what was acknowledged.
//
// Usage: StressAppender DATABASE SEED EVENTS BATCH [shared-stream-uuid]
import EventStore
import Foundation
import MessagesModel
import RecordedEvents

let arguments = CommandLine.arguments
guard arguments.count >= 5, let seed = UInt64(arguments[2]), let total = Int(arguments[3]), let batch = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: StressAppender DATABASE SEED EVENTS BATCH [SHARED-STREAM]\n".utf8))
    exit(2)
}
let shared = arguments.count > 5 ? UUID(uuidString: arguments[5]) : nil
/// Writes a line straight to the file descriptor: nothing waits in a buffer when
/// the process is killed.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// The i-th event id of this process: the parent recomputes them to check what is stored.
func eventID(_ index: Int) -> UUID {
    var generator = SeededGenerator(seed: seed &* 1_000_003 &+ UInt64(index))
    return generator.uuid()
}

let store = try EventStore(path: arguments[1])
var idGenerator = SeededGenerator(seed: seed)
let own = idGenerator.uuid()
var version = try store.streamVersion(own)
var index = 0
// A recording's first event, then taps: valid gamelog events, so `gamelog verify` can judge the log. The
// kind is no game gamelog carries: these taps were never made on a real extension, so none is re-run.
let conversation = ConversationID(idGenerator.uuid())
if version == 0 {
    let info = InstanceInfo(instanceID: own, device: "A", conversation: conversation, kind: "stress-taps",
                            localParticipant: ParticipantID(idGenerator.uuid()), remoteParticipants: [], names: [:])
    let started = RecordedEvent.recordingStarted(info)
    try store.append([NewEvent(id: own, stream: own, type: started.type, recordedAt: Timestamp(Date()), payload: started.payload())],
                     expecting: [own: .noStream])
    version = 1
}
let context = EventContext(device: "A", conversation: conversation, style: .expanded, isActive: true, selectedMessage: nil)
let tap = RecordedEvent.input(.touch(.cell(4)), context)
let payload = tap.payload()
// The first event of the own stream is the recording's start: indexes count taps.
index = Int(version) - 1
while index < total {
    let count = min(batch, total - index)
    // Every other batch also writes to the shared stream, where processes race.
    let stream = shared != nil && (index / batch).isMultiple(of: 2) ? shared! : own
    let expected: Int64 = try store.streamVersion(stream)
    let events = (index..<(index + count)).map {
        NewEvent(id: eventID($0), stream: stream, type: tap.type, recordedAt: Timestamp(Date()), payload: payload)
    }
    do {
        try store.append(events, expecting: [stream: expected == 0 ? .noStream : .exactly(expected)])
        say("ACK \(stream.uuidString) \(index) \(index + count - 1)")
        index += count
        version += Int64(count)
    } catch EventStoreError.versionConflict {
        say("CONFLICT \(stream.uuidString)")
    }
}
say("DONE \(index)")
