import MessagesHost
import MessagesModel
import SeedExtensions

/// Two devices playing one kind of seed extension; `override` replaces device A's
/// extension (to forge messages).
final class Table {
    let host: MessagesHost
    let game: ConversationID

    init(kind: String, override: ((InstanceInfo) -> (any MessagesAppExtension)?)? = nil) throws {
        host = MessagesHost(seed: 7) { info in override?(info) ?? SeedExtensions.make(kind: info.kind) }
        host.addDevice("A", owner: "Alice")
        host.addDevice("B", owner: "Bob")
        game = try host.startConversation(kind: kind, between: ["A", "B"])
    }

    func `do`(_ device: DeviceID, _ actions: UserAction...) throws {
        for action in actions { try host.perform(action, on: device) }
    }

    func screen(_ device: DeviceID) -> Screen? { host.activeInstance(on: device)?.extension.screen }

    func latest(_ device: DeviceID) -> Message? {
        host.transcript(on: device, in: game).last { $0.message != nil }?.message
    }

    func staged(_ device: DeviceID) -> Message? { host.staged(on: device, in: game)?.message }

    func display(_ device: DeviceID, _ message: Message?) -> String? {
        message?.caption.map { host.display($0, on: device) }
    }
}

/// Inserts a message with a given URL and session when touched.
final class Forger: MessagesAppExtension {
    var kind: String { "forger" }
    let url: String
    let withSession: Bool
    weak var host: (any ExtensionHost)?
    init(url: String, withSession: Bool) {
        self.url = url
        self.withSession = withSession
    }
    func attach(to host: any ExtensionHost) { self.host = host }
    var screen: Screen { Screen(name: "forger") }
    func handle(_ touch: Touch) {
        guard let host else { return }
        var message = host.makeMessage(session: withSession ? host.makeSession() : nil)
        message.url = url
        message.layout = .template(TemplateLayout(caption: "forged"))
        host.insert(message, completion: nil)
    }
}
