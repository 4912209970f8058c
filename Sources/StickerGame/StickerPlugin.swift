import GameKit
import MessagesModel

/// Seed 004's sticker and custom-message extension as a plug-in with no board: its
/// recordings replay and audit like any other, and it holds no game.
public struct StickerPlugin: BoardlessPlugin {
    public init() {}

    public var kind: String { StickerExtension.kind }
    public var title: String { "Stickers" }

    public func makeExtension() -> any MessagesAppExtension { StickerExtension() }

    /// Stickers go to a group as well as to one friend.
    public var players: ClosedRange<Int> { 2...4 }

    public func makeStrategy(players: [DeviceID], conversation: ConversationID) -> any GameStrategy {
        StickerStrategy(players: players, conversation: conversation)
    }

    /// The sticker GIFs and the photo the extension inserts, on every device.
    public func files(on device: DeviceID) -> [String: Int] {
        let ext = StickerExtension()
        var files = [ext.attachmentURL: 1_200_000]
        for sticker in ext.stickers { files[sticker.fileURL] = 40_000 }
        return files
    }
}

/// Each player in turn opens the extension and inserts something (a sticker, the
/// custom message, text or a photo), then sends it or deletes it, a few times.
struct StickerStrategy: GameStrategy {
    let players: [DeviceID]
    let conversation: ConversationID
    private var turns = 0
    private let rounds = 4

    init(players: [DeviceID], conversation: ConversationID) {
        self.players = players
        self.conversation = conversation
    }

    mutating func next(_ host: any MessagesWorld, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        let device: DeviceID
        switch roundTurn(host, players: players, conversation: conversation, turns: turns, rounds: rounds) {
        case .step(let step): return step
        case .turn(let player): device = player
        }
        if host.staged(on: device, in: conversation) != nil {
            turns += 1
            // Most things are sent; some are deleted while the extension still shows.
            return (device, .act(rng.next() % 4 == 0 ? .deleteStaged : .tapSend))
        }
        guard host.shownExtension(on: device) != nil else { return (device, .act(.openExtension)) }
        let touches: [Touch] = [.sticker(Int(rng.next() % 3)), .button("Send"), .button("Text"), .button("Attachment")]
        return (device, .act(.touch(touches.randomElement(using: &rng)!)))
    }
}
