// The compact payload layout against the full one, on the same events: bytes (raw and
// deflated with the shipped dictionary), and what reading costs each way (decoding a
// full payload, expanding a compact one, expanding and decoding it).
import ArgumentParser
import EventStore
import Foundation
import GRDB
import Measure
import RecordedEvents
import Recorder
import StoredEvents
import ZlibCodec

struct Payloads: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compact (type version 2) payloads against full (version 1) ones: bytes and read cost, same events.")

    @Argument(help: "A log written by this gamelog (compact payloads).") var database: String

    func run() throws {
        let store = try EventStore(path: database, access: .readOnly)
        let dictionary: [UInt8] = try DatabaseQueue(path: database, configuration: { var c = Configuration(); c.readonly = true; return c }()).read {
            Array(try Data.fetchOne($0, sql: "SELECT bytes FROM dictionaries ORDER BY id DESC LIMIT 1") ?? Data())
        }
        status("reading every event")
        var full: [(type: String, payload: [UInt8])] = [], compact: [(stream: UUID, type: String, version: Int, payload: [UInt8])] = []
        var decoder = StreamDecoder(store: store)
        try store.scan { stored in
            let v1 = try decoder.v1Payload(stream: stored.stream, type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload)
            full.append((stored.type, v1))
            compact.append((stored.stream, stored.type, stored.typeVersion, stored.payload))
        }
        let count = full.count
        let compactCount = compact.filter { $0.version == 2 }.count
        let deflater = try RawDeflater(dictionary: dictionary)
        var rawFull = 0, rawCompact = 0, deflatedFull = 0, deflatedCompact = 0
        for index in 0..<count {
            rawFull += full[index].payload.count
            rawCompact += compact[index].payload.count
            deflatedFull += try deflater.compress(full[index].payload).count
            deflatedCompact += try deflater.compress(compact[index].payload).count
        }
        status("timing one payload's deflate at a time")
        // How a shared store compresses: each payload alone, primed with the dictionary.
        let fixed = FixedCodeDeflater(dictionary: dictionary)
        var fixedCompact = 0
        for event in compact { fixedCompact += fixed.compress(event.payload).count }
        let zlibEach = try median { try seconds { for event in compact { _ = try deflater.compress(event.payload) } } }
        let fixedEach = median { seconds { for event in compact { _ = fixed.compress(event.payload) } } }
        status("timing reads")
        let decodeFull = median { seconds { for event in full { _ = try? RecordedEvent.decode(type: event.type, typeVersion: 1, payload: event.payload) } } }
        let constants = decoder.constants
        let expandOnly = median {
            seconds { for event in compact where event.version == 2 { _ = try? CompactPayload.expand(event.payload, with: constants[event.stream]!) } }
        }
        let decodeCompact = median {
            seconds {
                for event in compact {
                    _ = try? RecordedEvent.decode(type: event.type, typeVersion: event.version, payload: event.payload,
                                                  stream: event.version == 2 ? constants[event.stream] : nil)
                }
            }
        }
        func perEvent(_ bytes: Int) -> String { String(format: "%7.1f", Double(bytes) / Double(count)) }
        func rate(_ time: Double, _ n: Int) -> String { number(Double(n) / time).leftPadded(11) + " events/s" }
        print("""
            \(number(Double(count))) events, \(number(Double(compactCount))) of them compact (version 2)
            BYTES PER EVENT                          full (v1)   compact (v2)   compact / full
              payload, raw JSON                       \(perEvent(rawFull))       \(perEvent(rawCompact))          \(String(format: "%.2f", Double(rawCompact) / Double(rawFull)))x
              payload, deflated (shipped dictionary)  \(perEvent(deflatedFull))       \(perEvent(deflatedCompact))          \(String(format: "%.2f", Double(deflatedCompact) / Double(deflatedFull)))x
            DEFLATE ONE PAYLOAD AT A TIME (compact, shipped dictionary)   us each   bytes each
              zlib level 6 (RawDeflater)                            \(String(format: "%7.2f", zlibEach * 1e6 / Double(count)))   \(perEvent(deflatedCompact))
              fixed codes (FixedCodeDeflater)                       \(String(format: "%7.2f", fixedEach * 1e6 / Double(count)))   \(perEvent(fixedCompact))   (\(String(format: "%.2f", zlibEach / fixedEach))x as fast, \(String(format: "%.2f", Double(fixedCompact) / Double(deflatedCompact)))x the bytes)
            READ
              decode full payloads                 \(rate(decodeFull, count))
              expand compact payloads alone        \(rate(expandOnly, compactCount))
              decode as stored (expand + decode)   \(rate(decodeCompact, count))   (\(String(format: "%.2f", decodeFull / decodeCompact))x the full layout's rate)
            """)
    }
}
