import GameKit
import MessagesModel

/// The API tour (``APITourExtension``) as a plug-in with no board: its recordings
/// replay and audit like any other, and it holds no game. Played by two to four.
public struct APITourPlugin: BoardlessPlugin {
    public init() {}

    public var kind: String { APITourExtension.kind }
    public var title: String { "API tour" }

    public func makeExtension() -> any MessagesAppExtension { APITourExtension() }

    public func makeStrategy(players: [DeviceID], conversation: ConversationID) -> any GameStrategy {
        TourStrategy(players: players, conversation: conversation)
    }

    /// The sticker GIFs and the photo the extension inserts, on every device, and the
    /// downloads beside them: a sticker too large, one too small in pixels, one
    /// unreadable, an unreadable photo; `missing.gif` and `gone.mov` are not there.
    public func files(on device: DeviceID) -> [String: Int] {
        var files = ["file:///var/mobile/Media/photo.jpg": 1_200_000, "file:///var/mobile/Media/private.heic": 2_000_000]
        for sticker in APITourExtension.bundledStickers { files[sticker.fileURL] = 40_000 }
        for (name, bytes) in [("party.png", 60_000), ("huge.gif", 900_000), ("tiny.png", 8_000), ("clip.webp", 30_000),
                              ("locked.png", 20_000)] {
            files["file:///var/mobile/Downloads/\(name)"] = bytes
        }
        return files
    }

    public func fileAttributes(on device: DeviceID) -> [String: FileAttributes] {
        ["file:///var/mobile/Downloads/party.png": FileAttributes(pixelWidth: 408, pixelHeight: 408),
         "file:///var/mobile/Downloads/tiny.png": FileAttributes(pixelWidth: 64, pixelHeight: 64),
         "file:///var/mobile/Downloads/locked.png": FileAttributes(isReadable: false),
         "file:///var/mobile/Media/private.heic": FileAttributes(isReadable: false)]
    }

    /// A group as well as two.
    public var players: ClosedRange<Int> { 2...4 }
}

/// Each player in turn opens the extension and touches what it offers (stickers, the
/// stepper, the messages, the send variants, auto-reply) until something is staged,
/// then sends it or deletes it, now and then replacing it first, a few times.
struct TourStrategy: GameStrategy {
    let players: [DeviceID]
    let conversation: ConversationID
    private var turns = 0
    private var touchesThisTurn = 0
    /// Steps left of looking at the others' messages (select one, another, then back).
    private var looking = 0
    private let rounds = 4

    init(players: [DeviceID], conversation: ConversationID) {
        self.players = players
        self.conversation = conversation
    }

    /// Now and then a player looks at the messages in the transcript while the tour
    /// shows compact: a tap selects one (the tour expands), collapsing shows the
    /// transcript again, a tap on another switches the selection.
    private mutating func lookAround(_ host: any MessagesWorld, _ device: DeviceID,
                                     _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        guard let shown = host.shownExtension(on: device) else { return nil }
        let messages = host.transcript(on: device, in: conversation).compactMap(\.message)
        if looking == 0 {
            guard messages.count >= 2, rng.next() % 8 == 0 else { return nil }
            looking = 4
        }
        looking -= 1
        if shown.style == .expanded { return (device, .act(.collapse)) }
        let unselected = messages.filter { $0.id != shown.selectedMessage?.id }
        guard let pick = unselected.randomElement(using: &rng) else {
            looking = 0
            return nil
        }
        return (device, .act(.tapMessage(pick.id)))
    }

    mutating func next(_ host: any MessagesWorld, _ rng: inout SeededGenerator) -> (DeviceID, PlayerStep)? {
        let device: DeviceID
        switch roundTurn(host, players: players, conversation: conversation, turns: turns, rounds: rounds) {
        case .step(let step): return step
        case .turn(let player): device = player
        }
        if let step = lookAround(host, device, &rng) { return step }
        if host.staged(on: device, in: conversation) != nil {
            // A change of mind: something else in place of what is staged.
            if host.shownExtension(on: device) != nil, rng.next() % 5 == 0 {
                let replacements: [Touch] = [.button("Text"), .button("Link"), .sticker(0)]
                return (device, .act(.touch(replacements.randomElement(using: &rng)!)))
            }
            turns += 1
            touchesThisTurn = 0
            // Most things are sent; some are deleted while the extension still shows.
            return (device, .act(rng.next() % 4 == 0 ? .deleteStaged : .tapSend))
        }
        guard host.shownExtension(on: device) != nil else { return (device, .act(.openExtension)) }
        // Something that sends at once, or fails, ends the turn too, once in a while.
        touchesThisTurn += 1
        if touchesThisTurn > 4 {
            touchesThisTurn = 0
            turns += 1
        }
        let stickerCount = APITourExtension.bundledStickers.count + APITourExtension.downloadedStickers.count
        let touches: [Touch] = [.sticker(Int(rng.next() % UInt64(stickerCount)))]
            + APITourExtension.buttonTitles.map { .button($0) }
        return (device, .act(.touch(touches.randomElement(using: &rng)!)))
    }
}
