import MessagesHost
import MessagesModel
import GameKit

/// Two devices (A, Alice; B, Bob) playing one game's extension; `override` replaces
/// an instance's extension (to forge messages).
public final class Table {
    public let host: MessagesHost
    public let game: ConversationID

    public init(_ plugin: any GamePlugin, override: ((InstanceInfo) -> (any MessagesAppExtension)?)? = nil) throws {
        host = MessagesHost(seed: 7) { info in override?(info) ?? plugin.makeExtension() }
        host.addDevice("A", owner: "Alice")
        host.addDevice("B", owner: "Bob")
        for device in host.deviceIDs { host.files[device, default: [:]].merge(plugin.files(on: device)) { $1 } }
        for device in host.deviceIDs { host.fileAttributes[device, default: [:]].merge(plugin.fileAttributes(on: device)) { $1 } }
        game = try host.startConversation(kind: plugin.kind, between: ["A", "B"])
    }

    public func `do`(_ device: DeviceID, _ actions: UserAction...) throws {
        for action in actions { try host.perform(action, on: device) }
    }

    public func screen(_ device: DeviceID) -> Screen? { host.activeInstance(on: device)?.extension.screen }

    public func latest(_ device: DeviceID) -> Message? {
        host.transcript(on: device, in: game).last { $0.message != nil }?.message
    }

    public func staged(_ device: DeviceID) -> Message? { host.staged(on: device, in: game)?.message }

    public func display(_ device: DeviceID, _ message: Message?) -> String? {
        message?.caption.map { host.display($0, on: device) }
    }
}

/// Inserts a message with a given URL and session when touched.
public final class Forger: MessagesAppViewController {
    public override var kind: String { "forger" }
    let url: String
    let withSession: Bool
    public init(url: String, withSession: Bool) {
        self.url = url
        self.withSession = withSession
    }
    public override var screen: Screen { Screen(name: "forger") }
    public override func handle(_ touch: Touch) {
        guard let host else { return }
        var message = host.makeMessage(session: withSession ? host.makeSession() : nil)
        message.url = url
        message.layout = .template(TemplateLayout(caption: "forged"))
        host.insert(message, completion: nil)
    }
}
