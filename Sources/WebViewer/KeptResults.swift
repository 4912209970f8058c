import Audit
import Crypto
import EventStore
import Foundation
import MessagesModel
import Replay

/// Audit results kept between starts of the viewer, for one log's exact content and one
/// build of the auditor: the background audit of a log of a million events takes minutes,
/// and a viewer started again on the same file should not make its user wait for them.
///
/// Results are named by a SHA-256 of the whole database file (and its write-ahead log,
/// if any) and of `build`, so a changed byte anywhere, or another version of gamelog,
/// finds nothing kept. The file is read whole for it (about a second a few hundred MB),
/// which is nothing beside the audit it saves. Nothing is ever written beside the log.
struct KeptResults: Sendable {
    /// The folder the results live in (made on first save, readable by its owner alone).
    let folder: URL
    /// What identifies the auditor's build: results of another are never reused.
    let build: String

    /// What one finished background audit found, and the game list the background pass read.
    struct Results: Codable {
        /// Each conversation's findings, by the conversation's lower-case id.
        var conversations: [String: [Finding]]
        /// The whole log's own checks.
        var logWide: [Finding]
        /// The whole game list, once read (nil: not kept; the next start reads the log).
        var list: List?
    }

    /// The game list as the background pass left it: a later start shows it at once
    /// instead of folding the whole log again (half a minute of two cores at 1.8M events).
    struct List: Codable {
        var games: [GameSummary]
        var gameless: [Gameless]
        var damaged: Int

        struct Gameless: Codable {
            /// The conversation's lower-case id.
            var conversation: String
            var kind: String
            var events: Int
        }
    }

    /// A kept results file larger than this is not read (it could only come from elsewhere).
    static let largestFile = 256 << 20

    /// The name of the results for the log at `path` as it is now, nil if it cannot be read.
    func key(of path: String) -> String? {
        var hash = SHA256()
        hash.update(data: Data(build.utf8))
        var sawDatabase = false
        for (index, file) in [path, path + "-wal"].enumerated() {
            guard let handle = FileHandle(forReadingAtPath: file) else {
                if index == 0 { return nil }
                continue
            }
            defer { try? handle.close() }
            hash.update(data: Data("\u{0}file \(index)\u{0}".utf8))
            while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                hash.update(data: chunk)
                if index == 0 { sawDatabase = true }
            }
        }
        guard sawDatabase else { return nil }
        return Hex.string(Array(hash.finalize()))
    }

    private func file(_ key: String) -> URL { folder.appending(path: "audit-\(key).json") }

    /// The results kept under `key`, if any and readable; anything odd reads as none.
    func load(_ key: String) -> Results? {
        let url = file(key)
        guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int,
              size <= Self.largestFile, let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(Results.self, from: data)
    }

    /// Keeps `results` under `key`; a failure to write only means the next start audits again.
    func save(_ results: Results, as key: String) {
        guard (try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])) != nil,
              let data = try? JSONEncoder().encode(results) else { return }
        // Written whole under another name, then renamed: a reader never sees half a file.
        let partial = folder.appending(path: "audit-\(key).\(UUID().uuidString).partial")
        guard FileManager.default.createFile(atPath: partial.path, contents: data, attributes: [.posixPermissions: 0o600]) else { return }
        if rename(partial.path, file(key).path) != 0 { try? FileManager.default.removeItem(at: partial) }
    }
}
