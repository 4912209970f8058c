// A seeded fuzzer for gamelog's decoders of hostile input: both games' URL decoders,
// the recorded-event payload decoder (full and compact layouts), the JSON value reader, the raw inflater,
// the fixed-code deflater (its every stream read back by zlib),
// the event block decoder alone and inside a log file. Each input must be
// accepted or refused with a typed error, never crash, and never take long.
// Usage: Fuzz [INPUTS-PER-DECODER] [SEED]    (prints a line per decoder; exit 1 on a slow input)
import Foundation
import BattleshipGame
import TicTacToeGame
import MessagesModel
import RecordedEvents
import EventStore
import GRDB
import ZlibCodec
import Witness
import Projections

let arguments = CommandLine.arguments
let count = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
var generator = SeededGenerator(seed: arguments.count > 2 ? UInt64(arguments[2]) ?? 1 : 1)

@MainActor func random(_ n: Int) -> Int { Int(generator.next() % UInt64(max(n, 1))) }

let alphabet = Array("0123456789-=&?%#/:;.,_ aZ\u{0}\u{7F}éß😀Ship_LocationIs_Complete".unicodeScalars)

/// A hostile variant of `seed`: characters inserted, deleted, replaced, repeated.
@MainActor func mutate(_ seed: String) -> String {
    var scalars = Array(seed.unicodeScalars)
    for _ in 0..<(1 + random(6)) {
        switch random(6) {
        case 0 where !scalars.isEmpty: scalars.remove(at: random(scalars.count))
        case 1: scalars.insert(alphabet[random(alphabet.count)], at: random(scalars.count + 1))
        case 2 where !scalars.isEmpty: scalars[random(scalars.count)] = alphabet[random(alphabet.count)]
        case 3 where !scalars.isEmpty:
            let start = random(scalars.count)
            let piece = scalars[start..<min(scalars.count, start + 1 + random(20))]
            scalars.insert(contentsOf: Array(repeating: Array(piece), count: 1 + random(300)).flatMap { $0 }, at: random(scalars.count + 1))
        case 4: scalars = Array(seed.prefix(random(seed.count + 1)).unicodeScalars)
        default: scalars += Array("&\(random(100) - 50)=\(random(100) - 50)".unicodeScalars)
        }
    }
    var out = String.UnicodeScalarView()
    out.append(contentsOf: scalars)
    return String(out)
}

struct Tally {
    var accepted = 0, refused = 0
    var slowest = 0.0
    mutating func time(_ body: () -> Bool) {
        let start = DispatchTime.now().uptimeNanoseconds
        if body() { accepted += 1 } else { refused += 1 }
        slowest = max(slowest, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
}

/// A hostile variant of payload bytes: bytes replaced, the tail cut, bytes (or one of
/// `pieces`) inserted.
@MainActor func mutate(bytes seed: [UInt8], pieces: [[UInt8]] = []) -> [UInt8] {
    var bytes = seed
    for _ in 0..<(1 + random(4)) where !bytes.isEmpty {
        switch random(pieces.isEmpty ? 3 : 4) {
        case 0: bytes[random(bytes.count)] = UInt8(truncatingIfNeeded: generator.next())
        case 1: bytes.removeLast(random(bytes.count))
        case 2: bytes.insert(UInt8(truncatingIfNeeded: generator.next()), at: random(bytes.count))
        default: bytes.insert(contentsOf: pieces[random(pieces.count)], at: random(bytes.count))
        }
    }
    return bytes
}
/// References a compact payload may hold, and some that name nothing.
let referencePieces = ["\"$c\"", "\"$l\"", "\"$r0\"", "\"$r7\"", "\"$$\"", "\"$\""].map { Array($0.utf8) }

let battleshipSeeds = ["www.shinobicontrols.com/battleship?Ship_Location=0&Ship_Location=1&Is_Complete=0",
                       "www.shinobicontrols.com/battleship?Ship_Location=2&Ship_Location=6&Is_Complete=1"]
let ticTacToeSeeds = ["?0=0&0=0&0=0&0=0&1=1&0=0&0=0&0=0&0=0&1=0", "?-1=-1&0=0&1=1&0=0&1=1&0=0&0=0&0=0&0=0&1=0"]
let context = EventContext(device: "A", conversation: ConversationID(generator.uuid()), style: .expanded, isActive: true, selectedMessage: nil)
let payloadSeeds: [(String, [UInt8])] = [
    RecordedEvent.input(.touch(.cell(3)), context),
    RecordedEvent.callback(CallbackRecord(callback: .didTransition, style: .expanded), context),
    RecordedEvent.screen(Screen(name: "board", labels: ["X to move"], cells: ["x", "empty"]), context),
    RecordedEvent.transcript(.arrived(.message(Message(
        id: MessageID(generator.uuid()), session: SessionID(generator.uuid()), url: "?1=1&0=0&0=0&0=0&0=0&0=0&0=0&0=0&0=0&1=0",
        layout: .template(TemplateLayout(caption: "Game On", image: MessageImage(kind: "tictactoe-board", cells: ["x", "empty"]))),
        senderParticipantIdentifier: ParticipantID(generator.uuid()))), sender: ParticipantID(generator.uuid())), context),
    RecordedEvent.action(ActionRecord(action: .insert(Message(id: MessageID(generator.uuid()), url: "x?Ship_Location=1&Is_Complete=0")),
                                      error: MessagesError(.urlExceedsMaxSize, "too long"), warnings: ["no scheme"]), context),
].map { ($0.type, $0.payload()) }
let types = payloadSeeds.map(\.0) + ["recording.started", "transcript.sent", "nonsense", "", "callback."]

var results: [(String, Tally)] = []
var disagreements = 0
var tally = Tally()
for _ in 0..<count {
    let url = mutate(battleshipSeeds[random(battleshipSeeds.count)])
    tally.time { (try? Battleship.GameModel(url: url)) != nil }
}
results.append(("Battleship URL decoder", tally))

tally = Tally()
for _ in 0..<count {
    let url = mutate(ticTacToeSeeds[random(ticTacToeSeeds.count)])
    tally.time { (try? TicTacToe.GameState(url: url)) != nil }
}
results.append(("Tic-tac-toe URL decoder", tally))

tally = Tally()
for _ in 0..<count {
    let (type, seed) = payloadSeeds[random(payloadSeeds.count)]
    let bytes = mutate(bytes: seed)
    let claimed = random(4) == 0 ? types[random(types.count)] : type
    let version = 1 + random(2)
    var decoded: RecordedEvent?
    tally.time {
        decoded = try? RecordedEvent.decode(type: claimed, typeVersion: version, payload: bytes)
        return decoded != nil
    }
    // Differential: the fast canonical path must agree with the reference decoder.
    let reference = try? RecordedEvent.decodeWithReferenceDecoder(type: claimed, typeVersion: version, payload: bytes)
    if reference != decoded {
        print("the payload decoders disagree on \(claimed): \(String(decoding: bytes, as: UTF8.self))")
        disagreements += 1
    }
}
results.append(("Event payload decoder", tally))

// Compact (version 2) payloads: hostile bytes through the upcaster, then the decoders.
let recording = InstanceInfo(instanceID: generator.uuid(), device: context.device, conversation: context.conversation, kind: "tictactoe",
                             localParticipant: ParticipantID(generator.uuid()), remoteParticipants: [ParticipantID(generator.uuid())], names: [:])
let constants = StreamConstants(recording)
let compactSeeds: [(String, [UInt8])] = payloadSeeds.compactMap { type, payload in
    CompactPayload.compact(payload, with: constants).map { (type, $0) }
}
tally = Tally()
for _ in 0..<count {
    let (type, seed) = compactSeeds[random(compactSeeds.count)]
    let bytes = mutate(bytes: seed, pieces: referencePieces)
    var decoded: RecordedEvent?
    tally.time {
        decoded = try? RecordedEvent.decode(type: type, typeVersion: 2, payload: bytes, stream: constants)
        return decoded != nil
    }
    // Differential: whatever the upcaster makes of it, the reference reads the same.
    if let expanded = try? CompactPayload.expand(bytes, with: constants),
       decoded != (try? RecordedEvent.decodeWithReferenceDecoder(type: type, typeVersion: 1, payload: expanded)) {
        print("the compact payload decoders disagree on \(type): \(String(decoding: bytes, as: UTF8.self))")
        disagreements += 1
    }
}
results.append(("Compact payload decoder", tally))

// The same hostile payloads through one decoder of many events, which hands back values it
// read before from the same bytes (a memo), for two recordings whose references mean
// different ids: it must read each exactly as a decoder that remembers nothing.
let otherRecording = InstanceInfo(instanceID: generator.uuid(), device: context.device, conversation: ConversationID(generator.uuid()),
                                  kind: "tictactoe", localParticipant: ParticipantID(generator.uuid()),
                                  remoteParticipants: [ParticipantID(generator.uuid())], names: [:])
let otherConstants = StreamConstants(otherRecording)
var remembering = StreamDecoder()
remembering.learn(recording, stream: recording.instanceID)
remembering.learn(otherRecording, stream: otherRecording.instanceID)
// A callback naming the recording's own conversation and participants: compact, its
// references mean the other recording's ids when read as that recording's.
let ownConversation = RecordedEvent.callback(CallbackRecord(callback: .willBecomeActive, conversation: Conversation(
    id: recording.conversation, localParticipantIdentifier: recording.localParticipant,
    remoteParticipantIdentifiers: recording.remoteParticipants,
    selectedMessage: Message(id: MessageID(generator.uuid()), url: "?1=0", senderParticipantIdentifier: recording.localParticipant))), context)
let rememberingSeeds = compactSeeds + [ownConversation, ownConversation].compactMap { event in
    CompactPayload.compact(event.payload(), with: constants).map { (event.type, $0) }
}
tally = Tally()
for _ in 0..<count {
    let (type, seed) = rememberingSeeds[random(rememberingSeeds.count)]
    // Unchanged now and then, so that whole values repeat, as they do in a log.
    let bytes = random(3) == 0 ? seed : mutate(bytes: seed, pieces: referencePieces)
    let (stream, streamConstants) = random(2) == 0 ? (recording.instanceID, constants) : (otherRecording.instanceID, otherConstants)
    var decoded: RecordedEvent?
    tally.time {
        decoded = try? remembering.decode(stream: stream, type: type, typeVersion: 2, payload: bytes)
        return decoded != nil
    }
    if decoded != (try? RecordedEvent.decode(type: type, typeVersion: 2, payload: bytes, stream: streamConstants)) {
        print("a remembering decoder reads \(type) otherwise: \(String(decoding: bytes, as: UTF8.self))")
        disagreements += 1
    }
}
results.append(("Compact, remembering", tally))

// The JSON reader behind the viewer's payload panel, `log --json` and the diffs: hostile
// text accepted or refused, never a crash; what it accepts, written in gamelog's style and
// read again, is the same value.
tally = Tally()
for _ in 0..<count {
    let (_, seed) = payloadSeeds[random(payloadSeeds.count)]
    let bytes = mutate(bytes: seed)
    var parsed: JSONValue?
    tally.time {
        parsed = try? JSONValue(parsing: bytes)
        return parsed != nil
    }
    if let parsed, (try? JSONValue(parsing: Array(JSONStyle.text(parsed).utf8))) != parsed {
        print("the JSON reader does not read its own text back: \(String(decoding: bytes, as: UTF8.self))")
        disagreements += 1
    }
}
results.append(("JSON value reader", tally))

tally = Tally()
let inflater = try RawInflater()
let deflated = try RawDeflater().compress(payloadSeeds[0].1)
for _ in 0..<(count / 10) {
    var bytes = deflated
    for _ in 0..<(1 + random(3)) { bytes[random(bytes.count)] = UInt8(truncatingIfNeeded: generator.next()) }
    if random(3) == 0 { bytes = (0..<random(64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) } }
    tally.time { (try? inflater.decompress(bytes, limit: 1 << 20)) != nil }
}
results.append(("Raw inflater", tally))

// The shared store's deflater writes deflate streams itself: whatever it is given (hostile
// payloads, runs past its window, bytes of the dictionary repeated), zlib's inflater must
// read back exactly the same bytes.
tally = Tally()
let fixedDictionary = payloadSeeds.flatMap { $0.1 }.suffix(40_000)
let fixedDeflater = FixedCodeDeflater(dictionary: Array(fixedDictionary))
let fixedInflater = try RawInflater(dictionary: Array(fixedDictionary))
for _ in 0..<(count / 10) {
    var bytes = mutate(bytes: payloadSeeds[random(payloadSeeds.count)].1, pieces: [Array(fixedDictionary.prefix(300)), [0], [0xFF]])
    switch random(8) {
    case 0: bytes = (0..<random(2_000)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    case 1: bytes = Array(repeating: bytes, count: 1 + random(200)).flatMap { $0 }
    default: break
    }
    let input = bytes
    tally.time {
        let packed = fixedDeflater.compress(input)
        guard (try? fixedInflater.decompress(packed, expectedSize: input.count)) == input else {
            print("the fixed-code deflater's stream of \(input.count) bytes does not inflate to them")
            disagreements += 1
            return false
        }
        return true
    }
}
results.append(("Fixed-code deflater", tally))

// Event blocks (docs/FORMAT.md): hostile bodies read or refused with a typed error, never a
// crash or a read out of bounds; what the decoder accepts, written again and read again,
// is the same block.
@MainActor func blockSeed() -> [UInt8] {
    let events = (0..<(1 + random(6))).map { index -> EventBlock.Event in
        let (_, payload) = payloadSeeds[random(payloadSeeds.count)]
        return EventBlock.Event(id: generator.uuid(), hash: (0..<32).map { _ in UInt8(truncatingIfNeeded: generator.next()) },
                                streamRowID: Int64(1 + random(5)), streamVersion: Int64(1 + index), typeRowID: Int64(1 + random(9)),
                                typeVersion: Int64(1 + random(2)), recordedAt: 1_700_000_000_000_000 + Int64(random(1_000_000)),
                                leaf: random(3) == 0 ? nil : Int64(random(1000)), payload: payload)
    }
    return EventBlock(events: events).body()
}
let blockPieces: [[UInt8]] = [[0x80], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], [0x00], [0x7F], [0x01, 0x40]]
tally = Tally()
for _ in 0..<count {
    let bytes = mutate(bytes: blockSeed(), pieces: blockPieces)
    var decoded: EventBlock?
    tally.time {
        decoded = try? EventBlock(body: bytes)
        return decoded != nil
    }
    if let decoded, (try? EventBlock(body: decoded.body())) != decoded {
        print("the block decoder does not read its own body back: \(bytes.prefix(64))")
        disagreements += 1
    }
}
results.append(("Event block decoder", tally))

// The same through a log file: a block row whose compressed body is changed, read by the
// store with damage skipped. Every position is an event or named damage, never a crash.
tally = Tally()
let blockFolder = FileManager.default.temporaryDirectory.appending(path: "gamelog-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager.default.createDirectory(at: blockFolder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: blockFolder) }
let blockLog = blockFolder.appending(path: "blocks.sqlite").path
do {
    let store = try EventStore(path: blockLog)
    try store.append((0..<40).map { n in
        NewEvent(id: generator.uuid(), stream: context.conversation.uuid, type: payloadSeeds[n % payloadSeeds.count].0,
                 recordedAt: Timestamp(microsecondsSince1970: 1_700_000_000_000_000 + Int64(n)), payload: payloadSeeds[n % payloadSeeds.count].1)
    })
}
let pristine = try Data(contentsOf: URL(fileURLWithPath: blockLog))
let (storedBody, plainBody) = try DatabaseQueue(path: blockLog).read { db -> ([UInt8], [UInt8]) in
    let row = try Row.fetchOne(db, sql: "SELECT b.body, d.bytes, b.raw_size FROM event_blocks b JOIN dictionaries d ON d.id = b.dictionary_id")!
    let stored = Array(row[0] as Data)
    return (stored, try RawInflater(dictionary: Array(row[1] as Data)).decompress(stored, expectedSize: row[2]))
}
var unaccounted = 0
for round in 0..<max(1, count / 2_000) {
    try pristine.write(to: URL(fileURLWithPath: blockLog))
    try DatabaseQueue(path: blockLog).write { db in
        // Half the rounds change the deflated body, half store a changed plain one (codec 0).
        if round.isMultiple(of: 2) {
            try db.execute(sql: "UPDATE event_blocks SET body = ?", arguments: [Data(mutate(bytes: storedBody))])
        } else {
            let body = mutate(bytes: plainBody, pieces: blockPieces)
            try db.execute(sql: "UPDATE event_blocks SET codec = 0, dictionary_id = NULL, raw_size = ?, body = ?",
                           arguments: [max(1, body.count), Data(body)])
        }
    }
    tally.time {
        guard let reader = try? EventStore(path: blockLog, access: .readOnly) else { return false }
        var seen = 0, damaged = 0
        try? reader.scan(skippingDamaged: { _ in damaged += 1 }) { _ in seen += 1 }
        if seen + damaged < 40 { unaccounted += 1 }
        return damaged == 0
    }
}
results.append(("Event blocks in a log", tally))
if unaccounted > 0 { print("\(unaccounted) damaged logs read with positions neither read nor named") }

// Signed tree heads (export lines, --heads files): hostile notes read and checked, never a crash;
// a changed note never verifies.
tally = Tally()
let noteKey = try DeviceKey.random(device: "A")
let noteSeed = try TreeHead.signing(size: 42, root: MerkleTree.emptyRoot, key: noteKey, at: Timestamp(microsecondsSince1970: 1)).note
var forgedNotes = 0
for _ in 0..<(count / 10) {
    let note = mutate(noteSeed)
    tally.time {
        guard let head = try? TreeHead(note: note, publicKey: noteKey.publicKey) else { return false }
        if head.isValid && head.note != noteSeed { forgedNotes += 1 }
        return head.isValid
    }
}
results.append(("Signed tree heads", tally))
if forgedNotes > 0 { print("\(forgedNotes) changed notes verified") }

// Device trees as a hostile file gives them (issue 36): heads claiming sizes up to 2^62 and
// beyond, leaves at any index, stored subtree ranges of any shape. A root is computed or
// refused in time linear in what is held, never by the size a head claims.
tally = Tally()
@MainActor func hostileIndex() -> Int64 {
    switch random(4) {
    case 0: return Int64(random(300))
    case 1: return Int64(generator.next() >> 1)                         // anywhere up to 2^63-1
    case 2: return MerkleTree.maximumSize - Int64(random(3))            // the top of the range
    default: return Int64(1) << Int64(random(63))
    }
}
for _ in 0..<(count / 100) {
    var roots = TreeRoots(targets: [])
    let leaves = random(40)
    var next: Int64 = 0
    for _ in 0..<leaves {
        let leaf = random(3) == 0 ? hostileIndex() : next
        next = leaf < Int64.max ? leaf + 1 : leaf
        roots.add(leaf: leaf, hash: Array(repeating: UInt8(truncatingIfNeeded: leaf), count: 32), position: Int64(random(1_000)))
    }
    var nodes: [Range<Int64>: [UInt8]] = [:]
    for _ in 0..<random(20) {
        let lo = hostileIndex(), width = hostileIndex()
        guard lo < Int64.max - width else { continue }
        nodes[lo..<(lo + max(1, width))] = Array(repeating: 7, count: 32)
    }
    let size = hostileIndex()
    tally.time {
        let index = MerkleTree.RangeIndex(nodes.keys)
        let (root, _) = roots.root(at: min(size, MerkleTree.maximumSize), nodes: nodes, within: index)
        _ = roots.absent(below: min(size, MerkleTree.maximumSize)).count
        return root != nil
    }
}
results.append(("Tree roots, hostile sizes", tally))

// Block rows at the top of the position range and with counts past the schema's bound,
// written past its CHECKs: opening and reading say what is wrong, never crash.
tally = Tally()
for round in 0..<max(1, count / 20_000) {
    try pristine.write(to: URL(fileURLWithPath: blockLog))
    let first = round.isMultiple(of: 2) ? Int64.max - Int64(random(128)) : MerkleTree.maximumSize - Int64(random(64))
    let rowCount = round.isMultiple(of: 3) ? hostileIndex() : Int64(1 + random(64))
    try DatabaseQueue(path: blockLog).writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA ignore_check_constraints = 1")
        try db.execute(sql: "UPDATE event_blocks SET first_position = ?, count = ?", arguments: [first, rowCount])
    }
    tally.time {
        guard let reader = try? EventStore(path: blockLog, access: .readOnly) else { return false }
        _ = try? reader.lastPosition()
        var seen = 0
        try? reader.scan(skippingDamaged: { _ in }) { _ in seen += 1 }
        _ = try? reader.verifyIntegrity()
        return seen > 0
    }
}
results.append(("Blocks at the top", tally))

// A witness's add-checkpoint (C2SP tlog-witness): hostile request bodies around a valid
// one answered with a status, never a crash; a 200 only for a checkpoint the log signed.
tally = Tally()
let witnessFolder = blockFolder.appending(path: "witness").path
let witness = try Witness(folder: witnessFolder, name: "fuzz.test/witness")
let logKey = try DeviceKey.random(device: "A")
try (TreeHead.verifierKey(device: "A", publicKey: logKey.publicKey) + "\n").write(toFile: witnessFolder + "/logs", atomically: true, encoding: .utf8)
var witnessLeaves: [[UInt8]] = (0..<20).map { MerkleTree.leafHash([UInt8($0)]) }
let firstHead = try TreeHead.signing(size: 10, root: MerkleTree.root(Array(witnessLeaves.prefix(10))), key: logKey, at: Timestamp(microsecondsSince1970: 1))
_ = witness.addCheckpoint(Array("old 0\n\n\(firstHead.note)".utf8))
let nextHead = try TreeHead.signing(size: 20, root: MerkleTree.root(witnessLeaves), key: logKey, at: Timestamp(microsecondsSince1970: 2))
let seedProof = MerkleTree.consistencyProof(from: 10, to: 20) { lo, hi in MerkleTree.root(Array(witnessLeaves[Int(lo)..<Int(hi)])) }
let seedRequest = "old 10\n" + seedProof.map { Data($0).base64EncodedString() + "\n" }.joined() + "\n" + nextHead.note
var wrongCosigned = 0
let logVerifier = try LogKey(verifierKey: TreeHead.verifierKey(device: "A", publicKey: logKey.publicKey))
for _ in 0..<(count / 100) {
    let request = mutate(seedRequest)
    tally.time {
        let answer = witness.addCheckpoint(Array(request.utf8))
        if answer.status == 200 {
            // Only a checkpoint the log signed, extending what the witness holds, is cosigned.
            let note = String(request[request.range(of: "\n\n")!.upperBound...])
            if !(SignedCheckpoint(note).map { $0.isSigned(by: logVerifier) } ?? false) { wrongCosigned += 1 }
        }
        return answer.status == 200
    }
}
witnessLeaves.removeAll()
results.append(("Witness add-checkpoint", tally))
if wrongCosigned > 0 { print("\(wrongCosigned) checkpoints cosigned that their log did not sign") }

var slow = false
for (name, t) in results {
    print("\(name.padding(toLength: 24, withPad: " ", startingAt: 0)) \(t.accepted + t.refused) inputs: \(t.accepted) accepted, \(t.refused) refused with typed errors, slowest \(String(format: "%.2f", t.slowest)) ms")
    if t.slowest > 1_000 { slow = true }
}
if disagreements > 0 { print("\(disagreements) inputs read differently by two readers that must agree (listed above)") }
exit(slow || disagreements > 0 || forgedNotes > 0 || unaccounted > 0 || wrongCosigned > 0 ? 1 : 0)
