/// Builds a preset dictionary for small, similar messages (zlib has no trainer).
///
/// zlib finds matches anywhere in the dictionary but codes nearer ones in fewer bits,
/// so the dictionary holds one typical sample of each kind, the most frequent kinds
/// last (nearest to the data). Bytes that never repeat between messages (ids) are
/// better left out: pass a `strip` that removes them.
public enum DictionaryTrainer {
    /// - Parameters:
    ///   - samples: (kind, bytes) pairs, e.g. (event type, payload).
    ///   - maximumSize: the dictionary's size limit; zlib uses at most 32 KiB.
    ///   - strip: removes what never repeats (e.g. UUIDs) from a chosen sample.
    public static func train(samples: [(kind: String, bytes: [UInt8])], maximumSize: Int = 16 * 1024,
                             strip: ([UInt8]) -> [UInt8] = { $0 }) -> [UInt8] {
        var byKind: [String: [[UInt8]]] = [:]
        for sample in samples { byKind[sample.kind, default: []].append(sample.bytes) }
        // Least frequent first, so the most frequent kinds sit at the end.
        let kinds = byKind.keys.sorted { (byKind[$0]!.count, $0) < (byKind[$1]!.count, $1) }
        var pieces: [[UInt8]] = []
        for kind in kinds {
            let group = byKind[kind]!.sorted { $0.count < $1.count }
            // The median-length sample stands for its kind.
            pieces.append(strip(group[group.count / 2]))
        }
        var dictionary = pieces.flatMap { $0 }
        if dictionary.count > maximumSize { dictionary.removeFirst(dictionary.count - maximumSize) }
        return dictionary
    }
}
