import EventStore
import Foundation
import Testing
import TestSupport

/// Issue 38: witnesses that are not the operator, as a studio and an auditor use them:
/// two `gamelog witness` processes, phones that push their heads to them, and `verify`.
@Suite(.serialized) struct WitnessCLITests {
    struct Failure: Error { var text: String }

    /// Starts a witness on `state` and waits for its start line: its URL and verifier key.
    func startWitness(_ state: String, name: String, in folder: Folder, port: Int = 0) throws -> (process: ChildProcess, url: String, key: String) {
        let process = try ChildProcess(try gamelogPath(), ["witness", "--state", state, "--name", name, "--port", "\(port)"], in: folder.url.path)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let output = process.outputSoFar
            if let url = output.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
               let key = output.range(of: #"(?<=verifier key )[^)\s]+"#, options: .regularExpression) {
                return (process, String(output[url]), String(output[key]))
            }
            if waitpid(process.pid, nil, WNOHANG) == process.pid { break }
            usleep(20_000)
        }
        throw Failure(text: "the witness did not start: \(process.wait(atMost: 1).stderr)")
    }

    /// POSTs an add-checkpoint body; the status, content type and body.
    func addCheckpoint(_ url: String, _ body: String, in folder: Folder) throws -> (status: String, type: String, body: String) {
        let file = folder.path("request-\(UUID().uuidString)")
        try body.write(toFile: file, atomically: true, encoding: .utf8)
        let run = try ChildProcess.run("curl", ["-s", "-D", "-", "--data-binary", "@" + file, url + "/add-checkpoint"])
        let parts = run.stdout.components(separatedBy: "\r\n\r\n")
        let headers = parts.first ?? "", answer = parts.dropFirst().joined(separator: "\r\n\r\n")
        let status = headers.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        let type = headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-type:") }.map { String($0.dropFirst(13)).trimmingCharacters(in: .whitespaces) } ?? ""
        return (status, type, answer)
    }

    /// Builds tools/interop with Debian's Go and x/mod (.ci/run installs them).
    func buildInterop(in folder: Folder) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let output = folder.path("interop")
        let built = try ChildProcess.run("/usr/bin/env", ["go", "build", "-o", output, "."], in: root.appending(path: "tools/interop").path,
                                         environment: ["GOPATH": "/usr/share/gocode", "GO111MODULE": "off", "GOCACHE": folder.path("gocache"),
                                                       "HOME": folder.path(".")])
        try #require(built.status == 0, "go build tools/interop (Debian: golang-go, golang-golang-x-mod-dev): \(built.stderr)")
        return output
    }

    @Test func twoWitnessesCosignPhonesAndRefuseARollbackAndAFork() throws {
        let folder = try Folder()
        // Two phones, each with its own log.
        #expect(try gamelog(["simulate", "--per-device", "phones", "--games", "3", "--seed", "4", "--clock", "fixed"], in: folder.url).status == 0)
        try FileManager.default.copyItem(atPath: folder.path("phones/A.sqlite"), toPath: folder.path("A-before.sqlite"))
        var witnesses: [(process: ChildProcess, url: String, key: String)] = []
        for name in ["w1.test/witness", "w2.test/witness"] {
            let state = folder.path(name.replacingOccurrences(of: "/", with: "_"))
            let witness = try startWitness(state, name: name, in: folder)
            // The logs it knows: the phones' keys, from the phones.
            var logs = ""
            for device in ["A", "B"] {
                let keys = try gamelog(["keys", "--json", "--db", "phones/\(device).sqlite"], in: folder.url)
                let key = try #require(keys.stdout.range(of: #"(?<="verifierKey":")[^"]+"#, options: .regularExpression))
                logs += keys.stdout[key] + "\n"
            }
            try logs.write(toFile: state + "/logs", atomically: true, encoding: .utf8)
            witnesses.append(witness)
        }
        defer { for witness in witnesses { witness.process.send(SIGKILL); _ = witness.process.wait(atMost: 10) } }
        let urls = witnesses.flatMap { ["--witness", $0.url] }, keys = witnesses.flatMap { ["--witness-key", $0.key] }
        for device in ["A", "B"] {
            let pushed = try gamelog(["push", "--db", "phones/\(device).sqlite"] + urls, in: folder.url)
            #expect(pushed.status == 0 && pushed.stdout.contains("witness w2.test/witness cosigned"), "\(pushed.stdout) \(pushed.stderr)")
        }
        // Both witnesses saw each phone's newest head.
        for device in ["A", "B"] {
            let verify = try gamelog(["verify", "--no-rerun", "--db", "phones/\(device).sqlite", "--witnesses", "2"] + keys, in: folder.url)
            #expect(verify.status == 0 && verify.stdout.contains("w1.test/witness cosigned \(device) at"), "\(verify.stdout)")
        }

        // More games; pushed again, the proof now goes from the size each witness holds.
        #expect(try gamelog(["simulate", "--per-device", "phones", "--games", "6", "--seed", "4", "--clock", "fixed"], in: folder.url).status == 0)
        #expect(try gamelog(["push", "--db", "phones/A.sqlite"] + urls, in: folder.url).status == 0)
        let heads = try gamelog(["heads", "--json", "--db", "phones/A.sqlite"], in: folder.url)
        try heads.stdout.write(toFile: folder.path("A.heads.json"), atomically: true, encoding: .utf8)

        let newest = try #require(try EventStore(path: folder.path("phones/A.sqlite"), access: .readOnly).deviceTrees().first { $0.owner.device == "A" }?.heads.last)
        // Go's signed-note and tlog packages, and its Ed25519, read what the witnesses and the
        // device signed, and gamelog's consistency proofs (tools/interop).
        let interop = try buildInterop(in: folder)
        let entry = try #require(heads.stdout.range(of: #"(?<="cosignedNote":")[^"]+"#, options: .regularExpression))
        let note = String(heads.stdout[entry]).replacingOccurrences(of: "\\n", with: "\n")
        try note.write(toFile: folder.path("A.note"), atomically: true, encoding: .utf8)
        let keysA = try gamelog(["keys", "--json", "--db", "phones/A.sqlite"], in: folder.url)
        let deviceKey = String(keysA.stdout[try #require(keysA.stdout.range(of: #"(?<="verifierKey":")[^"]+"#, options: .regularExpression))])
        let signed = try ChildProcess.run(interop, ["note", deviceKey, folder.path("A.note")])
        #expect(signed.status == 0 && signed.stdout.contains("1 verified, 2 other signatures"), "\(signed.stdout) \(signed.stderr)")
        for witness in witnesses {
            let cosigned = try ChildProcess.run(interop, ["cosignature", witness.key, folder.path("A.note")])
            #expect(cosigned.status == 0, "\(cosigned.stdout) \(cosigned.stderr)")
        }
        var checked = 0
        for from in [1, 2, 7, 64, Int(newest.size) - 1] where from >= 1 && Int64(from) < newest.size {
            let proof = try gamelog(["proof", "--consistency", "--device", "A", "--from", "\(from)", "--json", "--db", "phones/A.sqlite"], in: folder.url)
            #expect(proof.status == 0, "\(proof.stderr)")
            try proof.stdout.write(toFile: folder.path("proof.json"), atomically: true, encoding: .utf8)
            let go = try ChildProcess.run(interop, ["consistency", folder.path("proof.json")])
            #expect(go.status == 0, "from \(from): \(go.stdout) \(go.stderr)")
            // One hash changed: Go's tlog refuses it too.
            if let hash = proof.stdout.range(of: #"(?<="proof":\[")[A-Za-z0-9+/]"#, options: .regularExpression) {
                var changed = proof.stdout
                changed.replaceSubrange(hash, with: proof.stdout[hash] == "A" ? "B" : "A")
                try changed.write(toFile: folder.path("changed.json"), atomically: true, encoding: .utf8)
                #expect(try ChildProcess.run(interop, ["consistency", folder.path("changed.json")]).status == 1)
            }
            checked += 1
        }
        #expect(checked >= 4)

        // A witness killed and started again on its state keeps it: old 0 is a conflict naming its size.
        witnesses[0].process.send(SIGKILL)
        _ = witnesses[0].process.wait(atMost: 10)
        let port = try #require(Int(witnesses[0].url.split(separator: ":").last!))
        witnesses[0] = try startWitness(folder.path("w1.test_witness"), name: "w1.test/witness", in: folder, port: port)
        let again = try addCheckpoint(witnesses[0].url, "old 0\n\n" + newest.note, in: folder)
        #expect(again.status == "409" && again.type == "text/x.tlog.size" && again.body == "\(newest.size)\n", "\(again)")

        // The phone rolled back to its earlier copy: each witness refuses its head (409, the
        // size it holds), and verify with the heads kept from the phone catches it.
        let old = try #require(try EventStore(path: folder.path("A-before.sqlite"), access: .readOnly).deviceTrees().first { $0.owner.device == "A" }?.heads.last)
        #expect(old.size < newest.size)
        for witness in witnesses {
            let refused = try addCheckpoint(witness.url, "old \(old.size)\n\n" + old.note, in: folder)
            #expect(refused.status == "409" && refused.body == "\(newest.size)\n", "\(refused)")
        }
        let rolled = try gamelog(["verify", "--no-rerun", "--db", "A-before.sqlite", "--heads", "A.heads.json"] + keys, in: folder.url)
        #expect(rolled.status == 1 && rolled.stdout.contains("rolledBack"), "\(rolled.stdout)")

        // The rolled-back phone plays other games past the cosigned size: a fork. Each
        // witness refuses its proof (422), push says so, and verify finds no cosignatures.
        try FileManager.default.createDirectory(atPath: folder.path("fork"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder.path("A-before.sqlite"), toPath: folder.path("fork/A.sqlite"))
        #expect(try ChildProcess.run(try gamelogPath(), ["simulate", "--per-device", "fork", "--games", "12", "--seed", "77", "--clock", "fixed"],
                                     in: folder.url.path, environment: ["GAMELOG_KEYS": folder.path("keys")]).status == 0)
        let forked = try #require(try EventStore(path: folder.path("fork/A.sqlite"), access: .readOnly).deviceTrees().first { $0.owner.device == "A" }?.heads.last)
        #expect(forked.size > newest.size, "the fork must outgrow the cosigned size: \(forked.size) vs \(newest.size)")
        let pushFork = try gamelog(["push", "--db", "fork/A.sqlite"] + urls, in: folder.url)
        #expect(pushFork.status == 1 && pushFork.stderr.contains("HTTP 422"), "\(pushFork.stdout) \(pushFork.stderr)")
        let forkVerify = try gamelog(["verify", "--no-rerun", "--db", "fork/A.sqlite", "--witnesses", "1"] + keys, in: folder.url)
        #expect(forkVerify.status == 1 && forkVerify.stdout.contains("witnesses"), "\(forkVerify.stdout)")
    }

    /// The collector sends every accepted head to the witnesses; one that is down catches
    /// up when it comes back, and uploads never wait for it.
    @Test func aCollectorForwardsHeadsToWitnessesAndAWitnessThatWasDownCatchesUp() throws {
        let server = try PostgresServer()
        defer { server.stop(mode: "immediate") }
        let url = try server.makeDatabase()
        let folder = try Folder()
        let environment = ["GAMELOG_KEYS": folder.path("keys")]
        #expect(try gamelog(["simulate", "--per-device", "phones", "--games", "3", "--seed", "8", "--clock", "fixed"], in: folder.url).status == 0)
        var logs = ""
        for device in ["A", "B"] {
            let keys = try gamelog(["keys", "--json", "--db", "phones/\(device).sqlite"], in: folder.url)
            logs += keys.stdout[try #require(keys.stdout.range(of: #"(?<="verifierKey":")[^"]+"#, options: .regularExpression))] + "\n"
        }
        // The first witness runs from the start; the second is down until the pushes are done.
        let first = try startWitness(folder.path("w1"), name: "w1.test/witness", in: folder)
        try logs.write(toFile: folder.path("w1/logs"), atomically: true, encoding: .utf8)
        let secondPort = 20_000 + Int.random(in: 0..<20_000)
        let collector = try ChildProcess(try gamelogPath(), ["collect", "--db", url, "--port", "0", "--send-to-witness", first.url,
                                                             "--send-to-witness", "http://127.0.0.1:\(secondPort)"],
                                         in: folder.url.path, environment: environment)
        defer { collector.send(SIGKILL); _ = collector.wait(atMost: 10) }
        var base = ""
        let deadline = Date().addingTimeInterval(120)
        while base.isEmpty && Date() < deadline {
            if let found = collector.outputSoFar.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) { base = String(collector.outputSoFar[found]) }
            usleep(20_000)
        }
        try #require(!base.isEmpty, "the collector did not start: \(collector.outputSoFar)")
        for device in ["A", "B"] {
            #expect(try ChildProcess.run(try gamelogPath(), ["keys", "enroll", "--to", base, "--device", device, "--public-key", "keys/\(device).key"],
                                         in: folder.url.path, environment: environment).status == 0)
            let pushed = try ChildProcess.run(try gamelogPath(), ["push", "--db", "phones/\(device).sqlite", "--to", base], in: folder.url.path, environment: environment)
            #expect(pushed.status == 0, "\(pushed.stderr)")
        }
        let second = try startWitness(folder.path("w2"), name: "w2.test/witness", in: folder, port: secondPort)
        defer { first.process.send(SIGKILL); _ = first.process.wait(atMost: 10); second.process.send(SIGKILL); _ = second.process.wait(atMost: 10) }
        try logs.write(toFile: folder.path("w2/logs"), atomically: true, encoding: .utf8)
        // Within a few rounds both witnesses have cosigned both devices' newest heads.
        var cosigned = 0
        let until = Date().addingTimeInterval(90)
        while cosigned < 4 && Date() < until {
            let heads = try ChildProcess.run("curl", ["-s", base + "/v1/heads"]).stdout
            cosigned = heads.components(separatedBy: "\"witness\":\"w1.test/witness\"").count - 1 + heads.components(separatedBy: "\"witness\":\"w2.test/witness\"").count - 1
            if cosigned < 4 { usleep(200_000) }
        }
        #expect(cosigned == 4, "\(collector.outputSoFar)")
        let verify = try gamelog(["verify", "--no-rerun", "--db", "phones/A.sqlite", "--heads", base, "--witnesses", "2",
                                  "--witness-key", first.key, "--witness-key", second.key], in: folder.url)
        #expect(verify.status == 0 && verify.stdout.contains("w2.test/witness cosigned A at"), "\(verify.stdout) \(verify.stderr)")
    }
}
