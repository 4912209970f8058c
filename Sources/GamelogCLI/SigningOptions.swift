import ArgumentParser
import EventStore
import Foundation
import MessagesModel

/// Where the devices' signing keys come from, for the commands that record.
struct SigningOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The folder of device keys (<device>.key, made on first use, mode 0600); default $GAMELOG_KEYS, else ~/.config/gamelog/keys. Never the log's own folder.",
        valueName: "DIR"))
    var keys: String?

    @Flag(help: "Sign with keys computed from the device names, so a seeded run is byte for byte the same. For tests only: anyone can compute these keys, and `verify --trust` rejects what they sign.")
    var insecureTestKeys = false

    func validate() throws {
        if insecureTestKeys && keys != nil {
            throw ValidationError("--keys and --insecure-test-keys exclude each other: choose the folder of real keys, or test keys.")
        }
    }

    /// The signer for a log at `logPath`: each device's key, made or read on first use.
    /// A key that cannot be made or read is kept in `failure` (the recording is then
    /// unsigned, and the command reports it once it has finished).
    func signer(logPath: String) throws -> Signer {
        if insecureTestKeys { return Signer(folder: nil) }
        return Signer(folder: try KeyFolder(path: keys ?? KeyFile.defaultFolder, logPath: logPath))
    }

    final class Signer: @unchecked Sendable {
        let folder: KeyFolder?
        private(set) var failure: Error?

        init(folder: KeyFolder?) {
            self.folder = folder
        }

        func key(for device: DeviceID) -> DeviceKey? {
            do {
                guard let folder else { return try DeviceKey.insecureTestKey(device: device.name) }
                return try folder.key(for: device.name)
            } catch {
                if failure == nil { failure = error }
                return nil
            }
        }

        /// Throws the first key that could not be made or read.
        func check() throws {
            if let failure { throw failure }
        }

        /// Where the keys are, for the closing line of a command.
        var summary: String {
            folder.map { "signed with the device keys in \($0.path)" }
                ?? "signed with insecure test keys (anyone can compute them; `verify --trust` rejects them)"
        }
    }
}
