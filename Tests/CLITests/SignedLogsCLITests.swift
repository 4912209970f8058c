import Foundation
import Testing
import TestSupport

/// Issue 11's flow as a user types it: phones write their own logs, an auditor
/// gets their keys out of band, merges the exports and verifies against the keys.
@Suite(.serialized) struct SignedLogsCLITests {
    @Test func devicesLogsMergeAndVerifyAgainstTheirKeysAndAnEditedLineIsRefused() throws {
        let folder = try Folder()
        let simulate = try gamelog(["simulate", "--per-device", "phones", "--games", "6", "--seed", "3", "--clock", "fixed"],
                                   in: folder.url)
        #expect(simulate.status == 0, "\(simulate.stderr)")
        for device in ["A", "B"] {
            #expect(FileManager.default.fileExists(atPath: folder.path("phones/\(device).sqlite")))
            let keys = try gamelog(["keys", "--json", "--db", "phones/\(device).sqlite"], in: folder.url)
            #expect(keys.status == 0 && keys.stdout.contains("\"device\":\"\(device)\""), "\(keys.stdout)")
            try keys.stdout.write(to: folder.url.appending(path: "\(device).keys.json"), atomically: true, encoding: .utf8)
            let export = try gamelog(["export", "--db", "phones/\(device).sqlite"], in: folder.url)
            #expect(export.status == 0)
            #expect(export.stdout.contains("\"streamHash\":") && export.stdout.contains("{\"checkpoint\":"))
            try export.stdout.write(to: folder.url.appending(path: "\(device).jsonl"), atomically: true, encoding: .utf8)
        }
        let imported = try gamelog(["import", "--db", "all.sqlite", "A.jsonl", "B.jsonl"], in: folder.url)
        #expect(imported.status == 0, "\(imported.stderr)")
        let verify = try gamelog(["verify", "--db", "all.sqlite", "--trust", "A.keys.json", "--trust", "B.keys.json"], in: folder.url)
        #expect(verify.status == 0, "\(verify.stdout)")
        #expect(verify.stdout.contains("checked against the trusted keys"))

        // One device's key given as the other's: the signatures no longer vouch.
        let swapped = try gamelog(["verify", "--db", "all.sqlite", "--trust", "A.keys.json"], in: folder.url)
        #expect(swapped.status == 1 && swapped.stdout.contains("untrustedKey"), "\(swapped.stdout)")

        // An export line edited by hand: refused with its line number; nothing stored.
        var lines = try String(contentsOf: folder.url.appending(path: "A.jsonl"), encoding: .utf8).split(separator: "\n").map(String.init)
        let index = try #require(lines.firstIndex { $0.contains("Ship_Location=") })
        lines[index] = lines[index].replacingOccurrences(of: "Ship_Location=", with: "Ship_Location=1")
        try lines.joined(separator: "\n").write(to: folder.url.appending(path: "edited.jsonl"), atomically: true, encoding: .utf8)
        let refused = try gamelog(["import", "--db", "edited.sqlite", "edited.jsonl"], in: folder.url)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("edited.jsonl:\(index + 1) ") && refused.stderr.contains("Nothing was imported"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("edited.sqlite")))
    }
}
