import Foundation
import MessagesModel

// The input field and the transcript: staging, validating and sending items.
extension MessagesHost {
    /// Validates and stages an item in the input field, replacing what was there.
    func stage(_ item: Item, by instance: ExtensionInstance) -> MessagesError? {
        guard instance.isActive else {
            return MessagesError(.apiUnavailableInPresentationContext, "the extension is not active, so it cannot insert")
        }
        guard instance.style != .transcript else {
            return MessagesError(.apiUnavailableInPresentationContext, "a live bubble (transcript style) cannot insert into the input field")
        }
        if let error = validate(item, on: instance.info.device) { return error }
        devices[instance.info.device]!.staged[instance.info.conversation] = stamped(item, by: instance, pending: true)
        return nil
    }

    /// iOS 11's `send`: straight to the transcript, if visible with a recent touch.
    func sendDirectly(_ item: Item, by instance: ExtensionInstance) -> MessagesError? {
        let device = instance.info.device
        if instance.isActive && instance.style == .transcript {
            return MessagesError(.apiUnavailableInPresentationContext, "a live bubble (transcript style) cannot send")
        }
        guard instance.isActive, devices[device]!.current == instance.info.conversation else {
            return MessagesError(.sendWhileNotVisible, "send needs the extension visible in its conversation")
        }
        guard instance.lastTouch == actionCounter else {
            return MessagesError(.sendWithoutRecentInteraction, "send needs a touch on the extension in the same interaction")
        }
        if let error = validate(item, on: device) { return error }
        // The call returns first and the transcript follows (Messages sends after the
        // extension's call, on the main run loop): the action is recorded before its
        // `transcript.sent`, as on a phone.
        let sent = stamped(item, by: instance, pending: false), conversation = instance.info.conversation
        enqueue { [self] in send(sent, from: device, in: conversation, instance: instance) }
        return nil
    }

    func stamped(_ item: Item, by instance: ExtensionInstance, pending: Bool) -> Item {
        guard case .message(var message) = item else { return item }
        message.senderParticipantIdentifier = instance.info.localParticipant
        message.isPending = pending
        return .message(message)
    }

    func validate(_ item: Item, on device: DeviceID) -> MessagesError? {
        switch item {
        case .message(let message):
            if let url = message.url { return URLRules.validate(url, policy: urlPolicy) }
            return nil
        case .text:
            return nil
        case .sticker(let sticker):
            guard sticker.fileURL.hasPrefix("file://") else {
                return MessagesError(.improperFileURL, "a sticker needs a file URL, not '\(sticker.fileURL)'")
            }
            let lower = sticker.fileURL.lowercased()
            guard [".png", ".apng", ".gif", ".jpg", ".jpeg"].contains(where: lower.hasSuffix) else {
                return MessagesError(.stickerFileImproperFileFormat, "a sticker must be PNG, APNG, GIF or JPEG")
            }
            guard let size = files[device]?[sticker.fileURL] else {
                return MessagesError(.fileNotFound, "no file at \(sticker.fileURL)")
            }
            let attributes = fileAttributes[device]?[sticker.fileURL] ?? FileAttributes()
            guard attributes.isReadable else { return MessagesError(.fileUnreadable, "the file at \(sticker.fileURL) cannot be read") }
            guard size <= 500 * 1024 else {
                return MessagesError(.stickerFileImproperFileSize, "a sticker file must be at most 500 KB, not \(size) bytes")
            }
            if let width = attributes.pixelWidth, let height = attributes.pixelHeight,
               !FileAttributes.stickerPixels.contains(width) || !FileAttributes.stickerPixels.contains(height) {
                return MessagesError(.stickerFileImproperFileAttributes,
                                     "a sticker image must be 300 to 618 pixels on each side, not \(width)x\(height)")
            }
            return nil
        case .attachment(let url, _):
            guard url.hasPrefix("file://") else {
                return MessagesError(.improperFileURL, "an attachment needs a file URL, not '\(url)'")
            }
            guard !url.hasSuffix("/") else {
                return MessagesError(.improperFileType, "\(url) is a folder; an attachment must be a file")
            }
            guard files[device]?[url] != nil else { return MessagesError(.fileNotFound, "no file at \(url)") }
            guard fileAttributes[device]?[url]?.isReadable ?? true else {
                return MessagesError(.fileUnreadable, "the file at \(url) cannot be read")
            }
            return nil
        }
    }

    func send(_ item: Item, from device: DeviceID, in conversation: ConversationID, instance: ExtensionInstance) {
        var sent = item
        // A send the network refuses at once stays in the sender's transcript, marked
        // with its error, and goes nowhere.
        let failed = chance(network.failure)
        if case .message(var message) = item {
            message.isPending = false
            if failed { message.error = MessagesError(.unknown, "not delivered") }
            sent = .message(message)
        }
        let me = localParticipant(device)
        devices[device]!.transcripts[conversation] = applyingSessionRule(
            devices[device]!.transcripts[conversation] ?? [],
            adding: Bubble(content: .item(sent), sender: me, isOutgoing: true))
        observer?.transcriptChanged(.sent(sent), instance: instance.info)
        if failed {
            count(.failed)
            return
        }
        for other in conversations[conversation]!.devices where other != device {
            route(Delivery(to: other, conversation: conversation, item: sent, from: device, due: now))
        }
    }
}
