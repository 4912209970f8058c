import Crypto
import EventStore
import Foundation
import Testing
import TestSupport

@Suite struct TreeHeadTests {
    let key = try! DeviceKey.random(device: "Alice's phone")

    func head(_ size: Int64 = 42) throws -> TreeHead {
        try TreeHead.signing(size: size, root: MerkleTree.root([MerkleTree.leafHash([1])]), key: key,
                             at: Timestamp(microsecondsSince1970: 1_767_225_600_000_000))
    }

    @Test func aHeadIsASignedNoteThatReadsBackAndVerifies() throws {
        let head = try head()
        let lines = head.note.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == head.origin && lines[0].hasPrefix("gamelog/Alice%27s%20phone/"))
        #expect(lines[1] == "42" && lines[3] == "time 1767225600000000" && lines[4] == "")
        #expect(lines[5].hasPrefix("\u{2014} \(head.origin) "))
        #expect(head.isValid)
        let read = try TreeHead(note: head.note, publicKey: key.publicKey)
        #expect(read == head && read.isValid)
    }

    @Test func changingAnyLineOfTheNoteBreaksTheSignature() throws {
        let note = try head().note
        var refused = 0
        for (from, to) in [("\n42\n", "\n43\n"), ("time 1767225600000000", "time 1767225600000001")] {
            let edited = note.replacingOccurrences(of: from, with: to)
            #expect(edited != note)
            let read = try TreeHead(note: edited, publicKey: key.publicKey)
            #expect(!read.isValid)
            refused += 1
        }
        // Another key's signature line is not this key's.
        let other = try DeviceKey.random(device: "Alice's phone")
        #expect(throws: HeadError.self) { try TreeHead(note: note, publicKey: other.publicKey) }
        // A test key's mark cannot be dropped without breaking the signature.
        let test = try TreeHead.signing(size: 1, root: MerkleTree.emptyRoot, key: try DeviceKey.insecureTestKey(device: "A"),
                                        at: Timestamp(microsecondsSince1970: 1))
        #expect(test.note.contains("\ninsecure-test-key\n") && test.isValid)
        var unmarked = test
        unmarked.isTestKey = false
        #expect(!unmarked.isValid)
        #expect(refused == 2)
    }

    /// C2SP signed-note's key hash, on the Go `note` package's example key.
    @Test func theKeyHashIsSignedNotes() throws {
        let verifier = Data(base64Encoded: "ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")!
        let hash = TreeHead.keyHash(name: "PeterNeumann", publicKey: Array(verifier.dropFirst()))
        #expect(hash.map { String(format: "%02x", $0) }.joined() == "c74f20a3")
    }

    /// An all-zero key with an all-zero signature verifies for some messages under plain
    /// Ed25519; gamelog refuses small-order keys before any signature is checked.
    @Test func smallOrderKeysAreRefusedWhateverTheSignature() {
        var accepted = 0
        for size in Int64(1)...64 {
            let forged = TreeHead(device: "A", publicKey: [UInt8](repeating: 0, count: 32), size: size, root: MerkleTree.emptyRoot,
                                  signedAt: Timestamp(microsecondsSince1970: size), isTestKey: false, signature: [UInt8](repeating: 0, count: 64))
            if forged.isValid { accepted += 1 }
        }
        #expect(accepted == 0)
        let identity = [1] + [UInt8](repeating: 0, count: 31)
        #expect(!PublicKeyCheck.isAcceptable(identity))
        #expect(!PublicKeyCheck.isAcceptable([UInt8](repeating: 0, count: 31) + [0x80]))
        #expect(PublicKeyCheck.isAcceptable(key.publicKey))
    }

    @Test func keysAreRandomAndTheTestKeysAreMarked() throws {
        let a = try DeviceKey.random(device: "A"), b = try DeviceKey.random(device: "A")
        #expect(a.publicKey != b.publicKey && !a.isTestKey)
        let test = try DeviceKey.insecureTestKey(device: "A")
        let again = try DeviceKey.insecureTestKey(device: "A")
        #expect(test.isTestKey && test.publicKey == again.publicKey)
        #expect(throws: KeyError.self) { try DeviceKey.random(device: "A\u{1B}]0;owned\u{07}") }
        #expect(throws: KeyError.self) { try DeviceKey.random(device: "") }
    }

    @Test func keyFilesAreTheOwnersAloneAndNeverOverwritten() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("A.key")
        let key = try DeviceKey.random(device: "A")
        try KeyFile.write(key, to: path)
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
        #expect(mode == 0o600)
        #expect(try KeyFile.read(path).publicKey == key.publicKey)
        // Every key reads back, whatever its base64 holds ('+' among it).
        var read = 0
        for index in 0..<40 {
            let other = try DeviceKey.random(device: "A")
            try KeyFile.write(other, to: folder.path("\(index).key"))
            #expect(try KeyFile.read(folder.path("\(index).key")).rawKey == other.rawKey)
            read += 1
        }
        #expect(read == 40)
        #expect(throws: KeyError.self) { try KeyFile.write(try DeviceKey.random(device: "A"), to: path) }
        #expect(try KeyFile.read(path).publicKey == key.publicKey)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(throws: KeyError.self) { try KeyFile.read(path) }
        // A folder of keys: made once, read after; never the log's own folder.
        let keys = try KeyFolder(path: folder.path("keys"), logPath: folder.path("log.sqlite"))
        let made = try keys.key(for: "B")
        #expect(try KeyFolder(path: folder.path("keys")).key(for: "B").publicKey == made.publicKey)
        #expect(throws: KeyError.self) { try KeyFolder(path: folder.path(""), logPath: folder.path("log.sqlite")) }
    }
}
