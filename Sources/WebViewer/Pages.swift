import Audit
import EventStore
import Foundation
import GameKit
import MessagesModel
import Presentation
import Projections
import RecordedEvents
import Replay

/// Server-rendered pages: plain HTML with a little CSS and JavaScript, all in the
/// binary; nothing is fetched from elsewhere.
enum Pages {
    /// A whole page. The style sheet and the script are files of their own
    /// (`/assets/...`), so the Content-Security-Policy allows no inline script.
    static func page(title: String, body: HTML) -> String {
        let page: HTML = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(title) · gamelog</title><link rel=stylesheet href="/assets/viewer.css"></head>
        <body>\(body)<script src="/assets/timeline.js"></script></body></html>
        """
        return page.description
    }

    // MARK: Games

    struct GamesQuery {
        var kind: String?
        var status: String?
        var result: String?
        /// The audit's verdict: `ok`, `errors`, `warnings` (any) or `checking`.
        var audit: String?
        /// A game id's or conversation id's beginning, a device, a player, or a finding's rule.
        var search: String?
        var page = 1
        static let pageSize = 50
        static let verdicts = ["ok", "errors", "warnings", "checking"]

        var isFiltered: Bool { kind != nil || status != nil || result != nil || audit != nil || search != nil }

        /// Whether a game is one `search` finds: by the beginning of its id or its
        /// conversation's, a device's name, a player's name (in part), or a rule its checks found.
        static func finds(_ search: String, _ game: GameSummary, _ verdict: ViewerModel.Verdict?) -> Bool {
            let needle = search.trimmingCharacters(in: .whitespaces).lowercased()
            guard !needle.isEmpty else { return true }
            return game.id.hasPrefix(needle) || game.conversation.hasPrefix(needle)
                || game.devices.contains { $0.lowercased() == needle }
                || game.players.values.contains { $0.lowercased().contains(needle) }
                || verdict?.rules.contains { $0.lowercased() == needle } == true
        }

        func passes(_ verdict: ViewerModel.Verdict?) -> Bool {
            guard let audit else { return true }
            return audit == "warnings" ? (verdict?.warnings ?? 0) > 0 : audit == Pages.verdictWord(verdict)
        }
    }

    /// A game's verdict in the list's words.
    static func verdictWord(_ verdict: ViewerModel.Verdict?) -> String {
        guard let verdict else { return "checking" }
        return verdict.errors == 0 ? "ok" : "errors"
    }

    static func games(_ model: ViewerModel, _ query: GamesQuery) throws -> String {
        let shown: ArraySlice<GameSummary>, matchCount: Int, gameCount: Int, pages: Int, pageNumber: Int
        var partial: HTML = ""
        if !query.isFiltered {
            // No filter: one page, folded alone.
            let first = try model.page(offset: (max(1, query.page) - 1) * GamesQuery.pageSize, limit: GamesQuery.pageSize)
            pages = max(1, (first.total + GamesQuery.pageSize - 1) / GamesQuery.pageSize)
            pageNumber = min(max(1, query.page), pages)
            let listed = pageNumber == max(1, query.page) ? first
                : try model.page(offset: (pageNumber - 1) * GamesQuery.pageSize, limit: GamesQuery.pageSize)
            (shown, matchCount, gameCount) = (listed.games[...], listed.total, listed.total)
        } else {
            // A filter reads every game's status and result: the list the background pass
            // has read so far, never a wait for the whole log.
            let byVerdict = query.audit != nil || query.search != nil
            let (listing, verdicts) = byVerdict ? model.listWithVerdicts() : (model.list(), [])
            // Indices, not copies: copying every matching summary was most of a filter's time.
            let matching = listing.games.indices.filter { index in
                (query.kind.map { $0 == listing.games[index].kind } ?? true) && (query.status.map { $0 == listing.games[index].status } ?? true)
                    && (query.result.map { listing.games[index].result.localizedCaseInsensitiveContains($0) } ?? true)
                    && (!byVerdict || query.passes(verdicts[index])
                        && (query.search.map { GamesQuery.finds($0, listing.games[index], verdicts[index]) } ?? true))
            }
            pages = max(1, (matching.count + GamesQuery.pageSize - 1) / GamesQuery.pageSize)
            pageNumber = min(max(1, query.page), pages)
            shown = ArraySlice(matching.dropFirst((pageNumber - 1) * GamesQuery.pageSize).prefix(GamesQuery.pageSize).map { listing.games[$0] })
            (matchCount, gameCount) = (matching.count, listing.games.count)
            if let failure = listing.failure {
                partial = "<p class=bad id=partial>The game list could not be read whole (\(failure)); these filters cover the \(listing.games.count) games read before that.</p>"
            } else if !listing.isComplete {
                partial = "<p class=pending id=partial>Still reading the log: the filters cover the \(listing.games.count) games read so far. Reload for more.</p>"
            }
        }
        func option(_ value: String, _ selected: String?, label: String? = nil) -> HTML {
            let label = label ?? value
            return value == selected ? "<option value=\"\(value)\" selected>\(label)</option>" : "<option value=\"\(value)\">\(label)</option>"
        }
        let kinds = model.kinds.sorted(), statuses = GameStatus.allCases.map(\.rawValue).sorted()
        var rows: HTML = ""
        for game in shown {
            let players = game.players.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let status: HTML
            if let verdict = model.verdict(of: game) {
                let pending: HTML = verdict.isWhole ? "" : " <small class=pending title=\"the whole log's chain and signatures are still being checked\">(log-wide checks pending)</small>"
                let damage: HTML = verdict.damaged.isEmpty ? ""
                    : " · <span class=\"bad damaged\">damaged at position \(verdict.damaged.prefix(3).map(String.init).joined(separator: ", "))</span>"
                status = verdict.errors == 0 ? "<span class=ok>ok</span>\(pending)" : "<span class=bad>\(verdict.errors) error\(verdict.errors == 1 ? "" : "s")</span>\(damage)\(pending)"
            } else {
                status = "<span class=pending>checking…</span>"
            }
            let fork: HTML = game.forkedFrom.map { " <span class=fork>fork of \($0.sourceGame.prefix(8).lowercased()) at step \($0.sourceStep)</span>" } ?? ""
            rows += """
                <tr data-game="\(game.id)"><td><a href="/games/\(game.id)">\(game.id.prefix(8))</a></td><td>\(game.title)</td>
                <td>\(players)</td><td>\(GameStatus.words(game.status))</td><td>\(game.result)\(fork)</td>
                <td class=num>\(game.events)</td><td>\(game.startedAt) … \(game.endedAt)</td><td>\(status)</td></tr>
                """
        }
        var pager: HTML = ""
        if pages > 1 {
            func link(_ n: Int, _ label: String) -> HTML {
                var parts = ["page=\(n)"]
                if let kind = query.kind { parts.append("kind=\(percentEncoded(kind))") }
                if let status = query.status { parts.append("status=\(percentEncoded(status))") }
                if let result = query.result { parts.append("result=\(percentEncoded(result))") }
                if let audit = query.audit { parts.append("audit=\(percentEncoded(audit))") }
                if let search = query.search { parts.append("q=\(percentEncoded(search))") }
                return "<a href=\"/games?\(parts.joined(separator: "&"))\">\(label)</a>"
            }
            pager = "<p class=pager>\(pageNumber > 1 ? link(pageNumber - 1, "← previous") : "") page \(pageNumber) of \(pages) \(pageNumber < pages ? link(pageNumber + 1, "next →") : "")</p>"
        }
        let body: HTML = """
            <header><h1>gamelog</h1><p>\(model.location) · \(gameCount) game\(gameCount == 1 ? "" : "s")</p>\(model.isFollowing ? "<p class=live id=following data-follow-list=1>following the log: games appear as they are written (reload without scripts)</p>" as HTML : "")\(model.damagedEvents == 0 ? "" as HTML : "<p class=bad id=damaged>\(model.damagedEvents) damaged event\(model.damagedEvents == 1 ? " was" : "s were") left out of these games; `gamelog verify` names them, `gamelog export --skip-damaged` salvages the rest.</p>" as HTML)\(auditLine(model))</header>
            <form class=filters method=get action="/games">
            <label>kind <select name=kind><option value="">all</option>\(kinds.map { option($0, query.kind) })</select></label>
            <label>status <select name=status><option value="">all</option>\(statuses.map { option($0, query.status, label: GameStatus.words($0)) })</select></label>
            <label>result <input name=result value="\(query.result ?? "")" placeholder="e.g. Alice"></label>
            <label>audit <select name=audit><option value="">all</option>\(GamesQuery.verdicts.map { option($0, query.audit) })</select></label>
            <label>search <input name=q value="\(query.search ?? "")" placeholder="game id, device, player or rule"></label>
            <button>filter</button></form><main>\(partial)
            <table id=games><thead><tr><th>game</th><th>kind</th><th>players</th><th>status</th><th>result</th><th>events</th>
            <th>time</th><th>audit</th></tr></thead><tbody>\(rows)</tbody></table>
            \(matchCount == 0 ? "<p>No game matches.</p>" as HTML : "")\(pager)\(gamelessSection(model, query))</main>
            """
        return page(title: "games", body: body)
    }

    /// Under a kind's filter, that kind's conversations that hold no game (a sticker
    /// browser's, the API tour's): each opens on the conversation page, like a game's.
    static func gamelessSection(_ model: ViewerModel, _ query: GamesQuery) -> HTML {
        guard let kind = query.kind, query.status == nil, query.result == nil, query.audit == nil else { return "" }
        let found = model.conversationsWithoutGames(ofKind: kind)
        guard !found.isEmpty else { return "" }
        var rows: HTML = ""
        for conversation in found.prefix(GamesQuery.pageSize * 4) {
            let id = conversation.conversation.uuid.uuidString.lowercased()
            rows += "<tr data-conversation=\"\(id)\"><td><a href=\"/games/\(id)\">\(id.prefix(8))</a></td><td class=num>\(conversation.events)</td></tr>"
        }
        let more: HTML = found.count > GamesQuery.pageSize * 4 ? "<p>… and \(found.count - GamesQuery.pageSize * 4) more (`gamelog log --kind recording` lists them all).</p>" : ""
        return """
            <h2>Conversations with no game</h2><p>\(found.count) conversation\(found.count == 1 ? "" : "s") of this kind hold no game; each opens step by step.</p>
            <table id=conversations><thead><tr><th>conversation</th><th>events</th></tr></thead><tbody>\(rows)</tbody></table>\(more)
            """
    }

    /// How far the background audit has come, and what the whole log's own checks found.
    static func auditLine(_ model: ViewerModel) -> HTML {
        let progress = model.auditProgress
        var parts: [HTML] = []
        if let total = progress.of, progress.checked < total {
            parts.append("<span class=pending>checking games: \(progress.checked) of \(total) conversations</span>")
        }
        if let whole = model.logWideFindings {
            let errors = whole.filter { $0.severity == .error }
            parts.append(errors.isEmpty ? "<span class=ok>the whole log's chain, signatures and catalog: no errors</span>"
                         : "<span class=bad>the whole log's chain, signatures and catalog: \(errors.count) error\(errors.count == 1 ? "" : "s") (`gamelog verify` lists them)</span>")
        } else if progress.of != nil {
            parts.append("<span class=pending>the whole log's chain and signatures: checking…</span>")
        }
        return parts.isEmpty ? "" : "<p id=auditProgress>\(parts.map { $0 }.joined(separator: " · "))</p>"
    }

    /// `text` for a URL's path or query: everything but RFC 3986's unreserved characters
    /// (letters, digits, `-._~`) percent-encoded, so a hostile name cannot break out.
    /// By bytes: a character set built at each call (a link per listed step) was a tenth of
    /// a game page's time. Upper-case hex digits, as Foundation writes them.
    static func percentEncoded(_ text: String) -> String {
        func unreserved(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
            default: false
            }
        }
        if text.utf8.allSatisfy(unreserved) { return text }
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if unreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: One game at one step

    /// A game's page at a step. An id that names a game (not a conversation) shows that
    /// game: it opens at the game's first step, lists the game's own steps and findings,
    /// and links to the whole conversation (`whole`), which shows every step.
    /// - Parameter from: the step the changes are counted from (any step of the view; the
    ///   one before by default), to compare any two.
    static func game(_ model: ViewerModel, id: String, step requested: Int?, perspective text: String?,
                     whole wholeConversation: Bool = false, from: Int? = nil) throws -> String {
        let (conversation, session) = try model.resolve(id)
        let whole = try model.replayer(conversation)
        let perspective: Perspective
        do {
            perspective = try whole.perspective(text ?? "auditor")
        } catch {
            throw ViewerError.badParameter("as: \(error)")
        }
        // A device's view steps through its own events alone.
        let replayer = try model.view(conversation, as: perspective)
        // The game's own steps in this view, unless the whole conversation was asked for
        // (or the id named the conversation, or this view saw none of the game).
        let ownSteps = try session.flatMap { session in
            wholeConversation ? nil : try model.steps(ofGame: session, in: conversation, as: perspective)
        }.flatMap { $0.isEmpty ? nil : $0 }
        let step = requested ?? ownSteps?.first ?? replayer.stepCount
        guard (0...replayer.stepCount).contains(step) else { throw ViewerError.badParameter("step \(step) is outside 0...\(replayer.stepCount)") }
        let state = try model.state(conversation, at: step, as: perspective)
        // The step before, folded once: for what changed and for the board's changed cells.
        if let from, !(0...replayer.stepCount).contains(from) {
            throw ViewerError.badParameter("from: step \(from) is outside 0...\(replayer.stepCount)")
        }
        let since = from ?? max(step - 1, 0)
        let previous = since != step ? try model.state(conversation, at: since, as: perspective) : state
        // The state encoded once, for what changed and for the tree (a state that cannot
        // be encoded shows no change, as before, and the auditor's tree says why).
        let styled = try? state.styledJSON()
        // Both sides made alike when the whole state could not be encoded (the step before's
        // presentation encodes its presentable fields alone).
        let current = styled.map { ConversationState.presentation(of: $0) } ?? state.presentation()
        let changes = since != step ? ConversationState.diff(presentations: previous.presentation(), current) : []
        let findings = try model.findings(conversation, waitingForTheWholeLog: true)
        // The game's name even before the view's first event names it (step 0 of a device's view).
        let final = state.kind.isEmpty ? try model.state(conversation, at: whole.stepCount, as: .auditor) : state
        let heading = final.plugin?.title ?? (final.kind.isEmpty ? "conversation" : final.kind)
        let asParameter = perspective == .auditor ? "auditor" : { if case .device(let d) = perspective { return d.name } else { return "" } }()
        let base = "/games/\(percentEncoded(id))"
        let extra = wholeConversation && session != nil ? "&whole=1" : ""
        /// A link to a step as a perspective: every part of it percent-encoded, then escaped.
        func link(_ step: Int, _ view: String) -> String { "\(base)?step=\(step)&as=\(percentEncoded(view))\(extra)" }

        // The perspective switch: each view at the same moment, in its own steps.
        let choices = ["auditor"] + whole.devices.map(\.name)
        let switcher = try choices.map { choice -> HTML in
            let label = choice == "auditor" ? "auditor" : "device \(choice)"
            let other = try model.view(conversation, as: choice == "auditor" ? .auditor : .device(DeviceID(choice)))
            let there = replayer.step(step, in: other)
            return choice == asParameter
                ? "<a class=\"view current\" href=\"\(link(there, choice))\" data-view=\"\(choice)\">\(label)</a>"
                : "<a class=\"view\" href=\"\(link(there, choice))\" data-view=\"\(choice)\">\(label)</a>"
        }.joined(separator: " ")

        // Findings as marks on the timeline.
        var positionsToStep: [Int64: Int] = [:]
        for (index, event) in replayer.events.enumerated() { positionsToStep[event.position] = index + 1 }
        // A device's view shows the findings at the steps it saw (and those of no step), never
        // what happened where it was not.
        let ownSet = ownSteps.map(Set.init)
        let gameID = session?.uuid.uuidString.lowercased(), conversationID = conversation.uuid.uuidString.lowercased()
        let seen = findings.filter { finding in
            guard let position = finding.position else { return true }
            guard let at = positionsToStep[position] else { return perspective == .auditor }
            return replayer.event(at: at).map(perspective.sees) ?? true
        }
        // A game's page leaves out only what is about another game of the conversation: a
        // finding naming another game, or a move's finding (its legality, an invariant, what
        // its message reveals) at a step that is not this game's. What is about the
        // recordings themselves (their integrity, signatures, lifecycle, delivery) concerns
        // every game they hold. What is left out is counted, with the way to it.
        let shown = seen.filter { finding in
            guard let ownSet else { return true }
            if let named = finding.game?.lowercased(), named != gameID, named != conversationID { return false }
            guard [.legality, .invariant, .design].contains(finding.check),
                  let at = finding.position.flatMap({ positionsToStep[$0] }) else { return true }
            return ownSet.contains(at)
        }
        let elsewhere = seen.count - shown.count
        // A finding's full text quotes messages as the auditor sees them: a device's view shows its outline.
        let text = { (finding: Finding) -> String in perspective == .auditor ? finding.description : finding.outline }
        let marks = shown.compactMap { finding -> HTML? in
            guard let position = finding.position, let at = positionsToStep[position], finding.severity != .notCheckable else { return nil }
            let left = replayer.stepCount > 0 ? Double(at) / Double(replayer.stepCount) * 100 : 0
            // The list below links each finding by name; these marks only draw them, out of the tab order.
            return "<a class=\"mark \(finding.severity.rawValue)\" tabindex=\"-1\" aria-hidden=\"true\" style=\"left:\(String(format: "%.2f", left))%\" href=\"\(link(at, asParameter))\" title=\"\(text(finding))\"></a>"
        }
        // And as a list, each with its step; the current step's stand out.
        let listed = shown.filter { $0.severity != .notCheckable }.prefix(200).map { finding -> HTML in
            let at = finding.position.flatMap { positionsToStep[$0] }
            let place: HTML = at.map { "<a href=\"\(link($0, asParameter))\">step \($0)</a>" } ?? "the log"
            let current = at == step ? " current" : ""
            return "<li class=\"finding \(finding.severity.rawValue)\(current)\">\(place): \(text(finding))</li>"
        }
        // What could not be checked is named (a recording the log lacks, signatures whose
        // check waits for the audit's copy of a shared store): never an "ok" by omission.
        let unchecked = shown.filter { $0.severity == .notCheckable }
        let uncheckedHTML: HTML = unchecked.isEmpty ? ""
            : "<p class=pending id=unchecked>not checked: \(unchecked.prefix(5).map { text($0) }.joined(separator: "; "))\(unchecked.count > 5 ? " (and \(unchecked.count - 5) more)" : "")</p>"
        let findingsHTML: HTML = listed.isEmpty && unchecked.isEmpty ? ""
            : "<section class=findings id=findings><h2>findings</h2>\(listed.isEmpty ? "" : "<ol>\(listed)</ol>" as HTML)\(uncheckedHTML)</section>"

        // The event at this step.
        var eventHTML: HTML = "<p class=muted>before the first event</p>"
        if var event = replayer.event(at: step) {
            if perspective.sees(event) {
                // What the event carries, as this perspective may see it (a device's own messages through the game's view).
                if let seen = try model.viewedEvent(conversation, at: step, as: perspective) { event.event = seen }
                let payload = String(decoding: event.event.payload(), as: UTF8.self)
                // In the documented style `log --json` prints (lower-case ids, no `_0` wrappers), indented.
                let pretty = (try? JSONStyle.normalize(json: Data(payload.utf8))).map { JSONStyle.indentedText($0) } ?? payload
                eventHTML = """
                    <p><b>\(StateText.describe(event, state))</b> · position \(event.position) · \(Timestamp(microsecondsSince1970: event.recordedAt).description)</p>
                    <details><summary>payload</summary><pre id=payload>\(pretty)</pre></details>
                    """
            } else {
                eventHTML = "<p class=muted>device \(event.device?.name ?? "?") acted</p>"
            }
        }

        // The step list: one row per step of this view, with its device, what it did, and
        // marks for moves, findings and steps that change nothing (filtered in the page).
        let stepsHTML = try stepList(model, conversation, replayer, perspective, step: step, findingSteps: Dictionary(
            shown.compactMap { finding in finding.position.flatMap { positionsToStep[$0] }.map { ($0, finding.severity) } },
            uniquingKeysWith: { a, b in a == .error ? a : b }), only: ownSet, link: { link($0, asParameter) })
        // Which steps these are, and the way to the rest of the conversation.
        var scopeHTML: HTML = ""
        if let ownSteps {
            let others: HTML = elsewhere == 0 ? "" : " (\(elsewhere) finding\(elsewhere == 1 ? "" : "s") there)"
            let count: HTML = "this game's \(ownSteps.count) step\(ownSteps.count == 1 ? "" : "s") of the conversation's \(replayer.stepCount)"
            scopeHTML = "<p id=scope>\(count) · <a href=\"\(base)?step=\(step)&as=\(percentEncoded(asParameter))&whole=1\">show the whole conversation</a>\(others)</p>"
        } else if wholeConversation, session != nil {
            scopeHTML = "<p id=scope>the whole conversation's \(replayer.stepCount) steps · <a href=\"\(base)?as=\(percentEncoded(asParameter))\">show this game's steps</a></p>"
        }

        // The game's board, as this perspective knows it: the cells the last step changed
        // marked, and a legend of the cells it shows.
        var boardHTML: HTML = ""
        for game in state.orderedGames where session == nil || game.session == session {
            guard let plugin = state.plugin else { continue }
            let picture = plugin.picture(of: game.board)
            let before = previous.games[game.session].map { plugin.picture(of: $0.board).cells } ?? []
            let changed = Set(picture.cells.indices.filter { before.indices.contains($0) && before[$0] != picture.cells[$0] })
            boardHTML += """
                <section class=game><h2>\(plugin.title) · \(game.status.words)</h2>
                \(grid(picture.cells, columns: picture.columns, id: "board", changed: changed, when: { cell in
                    "\(base)/changed?cell=\(cell)&game=\(game.session.uuid.uuidString.lowercased())&step=\(step)&as=\(percentEncoded(asParameter))\(extra)" }))\(legend(picture.cells))
                <p class=muted>a cell's link: the step that last changed it</p>
                \(picture.lines.map { "<p>\($0)</p>" as HTML })<p class=result>\(GameCatalog.result(game, in: state))</p></section>
                """
        }
        if boardHTML.description.isEmpty { boardHTML = "<section class=game><p class=muted>no game yet, as \(perspective.description) knows</p></section>" }

        // One phone per device this perspective sees.
        let columns = state.plugin?.boardColumns ?? 0
        let phones = state.orderedDevices.map { view -> HTML in
            let owner = view.ownerName ?? view.device.name
            var bubbles: HTML = ""
            for line in view.transcript {
                switch line.bubble.content {
                case .summary: bubbles += "<div class=\"bubble summary\">\(line.shown)</div>"
                default:
                    let side = line.bubble.isOutgoing ? "out" : "in"
                    let who: HTML = line.bubble.isOutgoing ? "" : "<span class=who>\(view.resolve("$\(line.bubble.sender.uuid.uuidString)"))</span>"
                    var image: HTML = ""
                    if let cells = line.bubble.message?.layout?.template.image?.cells, cells.count > 1, columns > 0 {
                        image = grid(cells, columns: columns, id: nil)
                    }
                    bubbles += "<div class=\"bubble \(side)\">\(who)\(image)<span class=text>\(line.shown)</span></div>"
                }
            }
            if let staged = view.staged {
                bubbles += "<div class=\"input\">\(view.resolve(staged.plainText)) <small>(in the input field)</small></div>"
            }
            var screen: HTML = "<div class=\"screen off\">extension not showing</div>"
            if view.isActive {
                let labels = view.screen.labels.map { "<p>\($0)</p>" as HTML }
                let buttons = view.screen.buttons.map { "<button disabled>\($0.title)</button>" as HTML }
                let alert: HTML = view.screen.alert.map { "<p class=alert>\($0.title) \($0.message)</p>" } ?? ""
                screen = """
                    <div class="screen \(view.style.description)"><p class=style>\(view.screen.name) · \(view.style.description)</p>\(labels)
                    \(grid(view.screen.cells, columns: columns, id: nil))\(buttons)\(alert)</div>
                    """
            }
            return """
                <section class=phone data-device="\(view.device.name)"><h3>device \(view.device.name) · \(owner)</h3>
                <div class=transcript>\(bubbles.description.isEmpty ? "<p class=muted>no messages</p>" : bubbles)</div>\(screen)</section>
                """
        }

        // What changed, in words people read: ids short, times readable, long values folded,
        // the game's bookkeeping (where its events start and end) left out.
        let readable = changes.filter { !$0.isBookkeeping }
        let diffHTML: HTML = readable.isEmpty ? "<p class=muted>no change\(changes.isEmpty ? "" : " shown (only where the game's events end)")</p>"
            : "<ul class=diff>\(readable.prefix(200).map { "<li>\($0.readable)</li>" as HTML })</ul>"
        let origin: HTML = model.origin(conversation).map { origin in
            "<p class=fork>fork of \(origin.sourceGame) at its step \(origin.sourceStep); the branch begins at step \(origin.branchStep + 1)</p>"
        } ?? ""
        // Damage left out of this game: where, and whether this step's state is past it.
        var damageHTML: HTML = ""
        if !replayer.damaged.isEmpty {
            let positions = replayer.damaged.compactMap(\.position)
            let past = replayer.damage(through: step).count
            damageHTML = """
                <p class=bad id=damaged>\(positions.count) damaged event\(positions.count == 1 ? "" : "s") (position \(positions.prefix(5).map(String.init).joined(separator: ", "))) could not be read and \(positions.count == 1 ? "is" : "are") left out\(past > 0 ? ": this step comes after it, so it may differ from what the devices showed" : "; this step comes before it"). `gamelog verify` names every damaged event.</p>
                """
        }
        // A game's page counts the game's errors; a conversation's, all of them.
        let errors = (ownSteps == nil ? findings : shown).filter { $0.severity == .error }.count
        // Only findings at a step of this view are marked on its timeline (not the whole log's,
        // nor those at steps this view does not have): the count says how many are.
        let markedErrors = shown.filter { $0.severity == .error && $0.position.flatMap { positionsToStep[$0] } != nil }.count
        let marking = markedErrors == errors ? "marked on the timeline" : "\(markedErrors) of them at a step, marked on the timeline"
        var verdict: HTML = errors == 0 ? "<span class=ok>verify: no errors</span>" : "<span class=bad>verify: \(errors) error\(errors == 1 ? "" : "s") (\(marking))</span>"
        if let kept = model.storedAudit(conversation) {
            verdict += " <small class=stored>(as `verify --workers` stored it at the store's revision \(kept.revision); signatures checked now)</small>"
        }
        let body: HTML = """
            <header><p><a href="/games">← games</a></p><h1>\(heading) <small>\(id)</small></h1>
            \(origin)\(damageHTML)<nav class=views>seen as: \(switcher)</nav>
            <p class=audit>\(verdict)</p>\(scopeHTML)</header>
            <section class=timeline data-step="\(step)" data-steps="\(replayer.stepCount)" data-as="\(asParameter)" data-base="\(base)" data-extra="\(extra)"\(model.isFollowing ? " data-follow=1" as HTML : "")>
            <a class=button id=first href="\(link(0, asParameter))" title="first step">first</a><a class=button id=prev href="\(link(max(0, step - 1), asParameter))" title="previous step (←)" aria-label="previous step">◀</a>
            <button id=play title="play or pause (space)" aria-label="play or pause">▶</button><a class=button id=next href="\(link(min(replayer.stepCount, step + 1), asParameter))" title="next step (→)" aria-label="next step">▶▶</a><a class=button id=last href="\(link(replayer.stepCount, asParameter))" title="last step (End)">last</a>
            <button id=helpButton title="keys (?)" aria-label="keys">?</button>
            <label>speed <select id=speed><option value=1000>1×</option><option value=400 selected>2.5×</option><option value=150>6×</option></select></label>
            <span id=stepLabel>step \(step) of \(replayer.stepCount)</span>
            <form class=track method=get action="\(base)"><input type=range id=slider name=step aria-label="step" min=0 max=\(replayer.stepCount) value=\(step)><input type=hidden name=as value="\(asParameter)">\(extra.isEmpty ? "" : "<input type=hidden name=whole value=1>" as HTML)<noscript><button type=submit>go to this step</button></noscript><div class=marks>\(marks)</div></form>
            </section>
            <div id=help hidden><h2>keys</h2><ul><li>← → previous, next step</li><li>Home, End: first, last step</li>
            <li>[ ] previous, next move</li><li>{ } previous, next finding</li><li>space: play or pause</li><li>?: this help</li></ul></div>
            <main>\(stepsHTML)<section class=event><h2>this step</h2>\(eventHTML)\(try stateTree(state, styled: styled, as: perspective))<h2>changes from step \(since)</h2>
            <form class=compare method=get action="\(base)"><input type=hidden name=step value=\(step)><input type=hidden name=as value="\(asParameter)">\(extra.isEmpty ? "" : "<input type=hidden name=whole value=1>" as HTML)<label>compare with step <input type=number name=from min=0 max=\(replayer.stepCount) value=\(since)></label> <button>compare</button></form>\(diffHTML)\(findingsHTML)</section>
            \(boardHTML)<div class=phones>\(phones)</div></main>
            """
        return page(title: "game \(id.prefix(8))", body: body)
    }

    /// The state at the step as a tree that folds open (Redux DevTools' state view): every
    /// field of the conversation's projection, participants named. The auditor's alone: a
    /// device's state holds what its messages carried, which its player's view hides.
    /// - Parameter styled: the state's ``ConversationState/styledJSON()``, if made already.
    static func stateTree(_ state: ConversationState, styled: JSONValue?, as perspective: Perspective) throws -> HTML {
        guard perspective == .auditor else { return "" }
        // Names from every device: the auditor reads them all.
        var names: [ParticipantID: String] = [:]
        for view in state.orderedDevices {
            for (key, name) in view.names { if let uuid = UUID(hyphenated: key) { names[ParticipantID(uuid)] = name } }
        }
        let value = try styled ?? state.styledJSON()
        var budget = 3_000
        // Written into one buffer: a node returned as its own text was copied once more
        // at every level above it.
        var out: HTML = "<details class=tree id=stateTree><summary>the state, as a tree</summary><ul>"
        func node(_ key: String, _ value: JSONValue, open: Bool = false) {
            budget -= 1
            guard budget > 0 else {
                if budget == 0 { out += "<li class=muted>… (the rest left out)</li>" }
                return
            }
            switch value {
            case .object(let fields):
                out += "<li><details\(open ? " open" : "" as HTML)><summary>\(key) <small>{\(fields.count)}</small></summary><ul>"
                for name in fields.keys.sorted() { node(name, fields[name]!) }
                out += "</ul></details></li>"
            case .array(let items):
                out += "<li><details\(open ? " open" : "" as HTML)><summary>\(key) <small>[\(items.count)]</small></summary><ul>"
                for (index, item) in items.enumerated() { node(String(index), item) }
                out += "</ul></details></li>"
            case .string(let text):
                out += "<li>\(key): <span class=v>\(ParticipantNames.resolve(String(text.prefix(500)), names: names))</span></li>"
            case .null: out += "<li>\(key): <span class=v>null</span></li>"
            case .bool(let flag): out += "<li>\(key): <span class=v>\(flag ? "true" : "false")</span></li>"
            case .integer(let number): out += "<li>\(key): <span class=v>\(number)</span></li>"
            case .double(let number): out += "<li>\(key): <span class=v>\(number)</span></li>"
            }
        }
        node("state", value, open: true)
        out += "</ul></details>"
        return out
    }

    /// Steps listed in full up to this many; past it, this many around the current one.
    static let stepListLimit = 1_500

    /// The step list of a view: each step's device (a colour), a short label, and classes
    /// for the page's filters: `move` (a game message sent), `finding`, `same` (nothing
    /// this view shows changed).
    /// - Parameter only: the steps to list (a game's own), else every step.
    static func stepList(_ model: ViewerModel, _ conversation: ConversationID, _ replayer: Replayer, _ perspective: Perspective,
                         step current: Int, findingSteps: [Int: Finding.Severity], only: Set<Int>? = nil,
                         link: (Int) -> String) throws -> HTML {
        let count = replayer.stepCount
        guard count > 0 else { return "" }
        // A game's own steps come from the whole view's rows (kept once computed), cut
        // around the current step if there are more than the limit.
        var listed: [ViewerModel.StepRow]
        if let only {
            let own = try model.stepRows(conversation, in: 1...count, as: perspective).filter { only.contains($0.step) }
            let at = own.firstIndex { $0.step >= current } ?? own.count
            let start = max(0, min(at - stepListLimit / 2, own.count - stepListLimit))
            listed = Array(own[start..<min(own.count, start + stepListLimit)])
        } else {
            let window = count <= stepListLimit ? 1...count
                : max(1, current - stepListLimit / 2)...min(count, max(1, current - stepListLimit / 2) + stepListLimit - 1)
            listed = try model.stepRows(conversation, in: window, as: perspective)
        }
        let total = only?.count ?? count
        let devices = Dictionary(uniqueKeysWithValues: model.devicesOf(conversation).enumerated().map { ($1, $0) })
        var rows: HTML = ""
        for row in listed {
            let n = row.step
            var classes = "step d\((row.device.flatMap { devices[$0] } ?? 0) % 4)"
            if row.isMove { classes += " move" }
            if let severity = findingSteps[n] { classes += " finding \(severity.rawValue)" }
            if row.changesNothing { classes += " same" }
            if n == current { classes += " current" }
            let id: HTML = n == current ? " id=currentStep" : ""
            rows += "<li class=\"\(classes)\" data-step=\(n)\(id)><a href=\"\(link(n))\">\(n) · \(row.device?.name ?? "-") · \(row.label)</a></li>"
        }
        let more: HTML = listed.count == total ? "" : "<p class=muted>steps \(listed.first?.step ?? 0)-\(listed.last?.step ?? 0), \(listed.count) of \(total)</p>"
        return """
            <section class=steps id=steps><h2>steps</h2>
            <p class=stepfilters><label><input type=checkbox id=onlyMoves> moves only</label> <label><input type=checkbox id=onlyFindings> findings only</label>
            <label><input type=checkbox id=hideSame> hide steps that change nothing</label></p>\(more)<ol id=stepList>\(rows)</ol></section>
            """
    }

    /// A step in a few words, and whether it is a move (a game message sent).
    static func shortLabel(_ event: RecordedEvent, state: ConversationState) -> (text: String, isMove: Bool) {
        switch event {
        case .recordingStarted: return ("recording started", false)
        case .recordingEnded: return ("recording ended", false)
        case .input(let action, _): return (action.description, false)
        case .callback(let record, _): return (record.callback.rawValue, false)
        case .action(let record, _):
            let outcome = record.error.map { " → error \($0.code.rawValue)" } ?? ""
            return ("\(record.action.name)\(outcome)", false)
        case .transcript(.sent(let item), let context):
            guard let message = item.message else { return ("sent \(item.plainText)", false) }
            let view = state.devices[context.device]
            let words = message.summaryText ?? message.caption ?? "a message"
            return ("sent \u{201C}\(view?.resolve(words) ?? words)\u{201D}", state.plugin?.isGameMessage(message) == true)
        case .transcript(.arrived(let item, _), let context):
            let words = item.message.map { $0.summaryText ?? $0.caption ?? "a message" } ?? item.plainText
            return ("received \u{201C}\(state.devices[context.device]?.resolve(words) ?? words)\u{201D}", false)
        case .screen(let screen, _): return ("screen \(screen.name)", false)
        }
    }

    /// The cells a board shows, each with its symbol: the board's legend.
    static func legend(_ cells: [String]) -> HTML {
        var seen: [String] = []
        for cell in cells where !seen.contains(cell) { seen.append(cell) }
        guard !seen.isEmpty else { return "" }
        let items = seen.map { "<span><span class=\"cell \($0)\">\(BoardPicture.symbol($0))</span> \($0)</span>" as HTML }
        return "<p class=legend>\(items.joined(separator: " "))<span><span class=\"cell changed\"> </span> changed by this step</span></p>"
    }

    /// - Parameter when: for a board, the link that asks which step last changed a cell.
    static func grid(_ cells: [String], columns: Int, id: String?, changed: Set<Int> = [], when: ((Int) -> String)? = nil) -> HTML {
        guard columns > 0, !cells.isEmpty, cells.count % columns == 0 else { return "" }
        var rows: HTML = ""
        for row in 0..<(cells.count / columns) {
            let line = (0..<columns).map { column -> HTML in
                let index = row * columns + column
                let cell = cells[index]
                let mark = changed.contains(index) ? " changed" : ""
                guard let when else { return "<td class=\"cell \(cell)\(mark)\" title=\"\(cell)\">\(BoardPicture.symbol(cell))</td>" }
                return "<td class=\"cell \(cell)\(mark)\" title=\"\(cell)\"><a class=when href=\"\(when(index))\" aria-label=\"\(cell): when did this change?\">\(BoardPicture.symbol(cell))</a></td>"
            }
            rows += "<tr>\(line)</tr>"
        }
        return id.map { "<table class=grid id=\($0)>\(rows)</table>" } ?? "<table class=grid>\(rows)</table>"
    }

    static let css = """
        body{font:14px/1.4 -apple-system,system-ui,sans-serif;margin:0 1.5em 2em;color:#222;background:#fafafa}
        header h1{margin:.4em 0 .1em}h1 small{font-size:.5em;color:#666}a{color:#0a58ca}.muted{color:#666}
        table#games{border-collapse:collapse;width:100%}#games td,#games th{padding:.3em .5em;border-bottom:1px solid #ddd;text-align:left}
        .num{text-align:right}.ok{color:#197a2e}.bad{color:#b00020;font-weight:bold}.pending{color:#666}.fork{color:#6a3cbc}
        .filters{margin:.8em 0}.filters label{margin-right:1em}.views a{margin-right:.6em;padding:.1em .5em;border-radius:4px}
        .views a.current{background:#0a58ca;color:#fff;text-decoration:none}
        .timeline{position:sticky;top:0;background:#fafafa;padding:.5em 0;border-bottom:1px solid #ddd;z-index:2}
        .track{position:relative;margin-top:.4em}#slider{width:100%}
        .cell a.when{color:inherit;text-decoration:none;display:block}.tree{font:12px/1.35 ui-monospace,monospace;margin:.4em 0}.tree ul{list-style:none;padding-left:1.1em;margin:0}.tree .v{color:#0a5a2a}.compare{font-size:12px;margin:.2em 0 .4em}.compare input{width:5em}
        a.button{display:inline-block;padding:1px 6px;margin-right:2px;border:1px solid #767676;border-radius:2px;background:#efefef;color:#000;text-decoration:none;font-size:13px}.marks{position:relative;height:10px}
        .mark{position:absolute;top:0;width:6px;height:10px;margin-left:-3px;background:#b00020;border-radius:2px}.mark.warning{background:#e0a800}.mark.design{background:#6a3cbc}
        main{display:flex;flex-wrap:wrap;gap:1.5em;margin-top:1em}.event{flex:1 1 320px;min-width:280px}
        pre{background:#fff;border:1px solid #ddd;padding:.5em;max-height:16em;overflow:auto;font-size:12px}
        .diff{font-family:ui-monospace,monospace;font-size:12px;padding-left:1.2em}
        .game{flex:0 0 auto}.phones{display:flex;gap:1.5em;flex-wrap:wrap}
        .phone{width:300px;border:10px solid #222;border-radius:28px;background:#fff;padding:.6em;min-height:420px;display:flex;flex-direction:column}
        .phone h3{margin:.2em 0 .5em;font-size:13px;text-align:center}.transcript{flex:1;display:flex;flex-direction:column;gap:.35em}
        .bubble{max-width:78%;padding:.35em .6em;border-radius:14px;font-size:13px}.bubble.out{align-self:flex-end;background:#0a64d0;color:#fff}
        .bubble.in{align-self:flex-start;background:#e5e5ea}.bubble.summary{align-self:center;background:none;color:#666;font-style:italic;font-size:12px}
        .who{display:block;font-size:11px;color:#555}.input{border:1px dashed #999;border-radius:12px;padding:.3em .6em;margin-top:.4em;font-size:12px}
        .screen{border-top:1px solid #ccc;margin-top:.6em;padding-top:.4em;font-size:12px}.screen.off{color:#666;text-align:center}
        .screen.expanded{background:#f2f7ff}.style{color:#555;margin:.2em 0}.alert{background:#fff3cd;padding:.3em}
        table.grid{border-collapse:collapse;margin:.3em 0}.grid td{width:26px;height:26px;border:1px solid #999;text-align:center;font-weight:bold}
        .cell.ship{background:#5b6f8a;color:#fff}.cell.hit{background:#23803a;color:#fff}.cell.miss{background:#c0392b;color:#fff}
        .cell.x{color:#0a58ca}.cell.o{color:#b00020}.cell.red{background:#e53935;color:#e53935}.cell.yellow{background:#fdd835;color:#fdd835}
        .findings ol{padding-left:1.2em;font-size:12px}.finding.error{color:#b00020}.finding.warning{color:#8a6d00}
        .finding.current{background:#fff3cd;font-weight:bold}
        .bubble table.grid{background:#fff}.bubble table.grid td{width:14px;height:14px;font-size:9px}.result{font-weight:bold}
        .steps{flex:0 0 260px;max-height:32em;overflow:auto;font-size:12px}.steps ol{list-style:none;padding:0;margin:0}
        .step a{display:block;padding:.1em .4em;border-left:4px solid #ccc;color:#222;text-decoration:none;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
        .step.d0 a{border-color:#0a84ff}.step.d1 a{border-color:#2e9e44}.step.d2 a{border-color:#6a3cbc}.step.d3 a{border-color:#e0a800}
        .step.move a{font-weight:bold}.step.same a{color:#707070}.step.finding.error a{background:#fde7ea}.step.finding.warning a{background:#fff3cd}
        .step.current a{background:#0a58ca;color:#fff}.legend{font-size:11px;color:#555}.legend>span{margin-right:.6em}
        .legend .cell{display:inline-block;width:14px;height:14px;border:1px solid #999;text-align:center;line-height:14px}
        .cell.changed{outline:3px solid #ff9800;outline-offset:-3px}#help{position:fixed;top:4em;right:2em;background:#fff;border:1px solid #999;padding:.5em 1em;z-index:3}
        """

    /// The timeline: slider, buttons, arrow keys and play. A step is fetched as the page the
    /// server renders for it and swapped in place (no page load; the window keeps its
    /// scroll), its address pushed to the history, so every step stays a link that can be
    /// shared and the back button steps back; the neighbours are fetched ahead. Without
    /// scripts every control is still a link or a form that loads the step's page.
    static let script = """
        (function(){if(!document.querySelector('[data-follow-list]'))return;
        // The list of a log being written: fetched again, in place, when it grows.
        var es=new EventSource('/follow');es.onmessage=function(){fetch(location.href,{credentials:'same-origin'}).then(function(r){return r.ok?r.text():null;})
        .then(function(t){if(!t)return;var doc=new DOMParser().parseFromString(t,'text/html');if(doc.querySelector('#games'))document.body.replaceWith(doc.body);});};})();
        (function(){if(!document.querySelector('.timeline'))return;
        var step=0,steps=0,as='',base='',extra='',rows=[],cache={},timer=null,playingNow=false,live=null,liveFor='';
        // A log being written (serve --follow): when the game grows, the steps already
        // fetched are forgotten; at the last step the page follows to the new last one,
        // elsewhere it stays where it is and its timeline grows.
        function follow(){var t=document.querySelector('.timeline');var want=t&&t.dataset.follow==='1'?base+'/follow?as='+encodeURIComponent(as):'';
        if(want===liveFor)return;if(live){live.close();live=null;}liveFor=want;if(!want)return;
        live=new EventSource(want);live.onmessage=function(e){var d;try{d=JSON.parse(e.data);}catch(x){return;}
        if(typeof d.steps!=='number'||d.steps===steps)return;cache={};var atEnd=step===steps&&!playingNow;
        show(url(atEnd?d.steps:step),atEnd);};}
        function url(n){return base+'?step='+n+'&as='+encodeURIComponent(as)+extra;}
        function load(u){if(!cache[u]){cache[u]=fetch(u,{credentials:'same-origin'}).then(function(r){if(!r.ok)throw new Error(r.status);
        return r.text().then(function(t){return {html:t,url:r.url};});});cache[u].catch(function(){delete cache[u];});}return cache[u];}
        function show(u,push){return load(u).then(function(got){var doc=new DOMParser().parseFromString(got.html,'text/html');
        if(!doc.querySelector('.timeline'))throw new Error('no timeline');
        var list=document.getElementById('stepList'),top=list?list.parentNode.scrollTop:0,focused=document.activeElement&&document.activeElement.id;
        document.title=doc.title;document.body.replaceWith(doc.body);
        if(push)history.pushState({},'',got.url);init(top);
        if(focused&&document.getElementById(focused))document.getElementById(focused).focus({preventScroll:true});
        }).catch(function(){location.href=u;});}
        function go(n){n=Math.max(0,Math.min(steps,n));if(n===step)return Promise.resolve();return show(url(n),true);}
        function ahead(){[step-1,step+1].forEach(function(n){if(n>=0&&n<=steps)load(url(n));});}
        function speed(){var s=document.getElementById('speed');return s?+s.value:400;}
        function stop(){playingNow=false;if(timer){clearTimeout(timer);timer=null;}var b=document.getElementById('play');if(b)b.textContent='▶';}
        function tick(){if(!playingNow)return;if(step>=steps){stop();return;}timer=setTimeout(function(){go(step+1).then(tick);},speed());}
        function find(cls,dir){var list=dir>0?rows:rows.slice().reverse();
        for(var i=0;i<list.length;i++){var n=+list[i].dataset.step;if(list[i].classList.contains(cls)&&(dir>0?n>step:n<step))return n;}return null;}
        function jump(cls,dir){var n=find(cls,dir);if(n!==null)go(n);}
        function filter(){var m=document.getElementById('onlyMoves'),f=document.getElementById('onlyFindings'),h=document.getElementById('hideSame');
        if(!m)return;rows.forEach(function(r){var c=r.classList;var hide=(m.checked&&!c.contains('move'))||(f.checked&&!c.contains('finding'))||(h.checked&&c.contains('same'));
        r.hidden=hide&&!c.contains('current');});
        try{sessionStorage.setItem('gamelog.filters',JSON.stringify({m:m.checked,f:f.checked,h:h.checked}));}catch(e){}}
        function init(listTop){var t=document.querySelector('.timeline');if(!t)return;
        step=+t.dataset.step;steps=+t.dataset.steps;as=t.dataset.as;base=t.dataset.base;extra=t.dataset.extra||'';
        document.getElementById('slider').addEventListener('change',function(e){stop();go(+e.target.value);});
        var play=document.getElementById('play');play.textContent=playingNow?'⏸':'▶';
        play.onclick=function(){if(playingNow){stop();}else{playingNow=true;play.textContent='⏸';tick();}};
        var help=document.getElementById('help');document.getElementById('helpButton').onclick=function(){help.hidden=!help.hidden;};
        rows=Array.prototype.slice.call(document.querySelectorAll('#stepList li'));
        ['onlyMoves','onlyFindings','hideSame'].forEach(function(id){var box=document.getElementById(id);
        if(box)box.addEventListener('change',function(){filter();box.blur();});});
        try{var kept=JSON.parse(sessionStorage.getItem('gamelog.filters')||'null');if(kept&&document.getElementById('onlyMoves')){
        document.getElementById('onlyMoves').checked=kept.m;document.getElementById('onlyFindings').checked=kept.f;document.getElementById('hideSame').checked=kept.h;filter();}}catch(e){}
        // The current step's row in view inside the list alone: the window does not move.
        var list=document.getElementById('stepList'),cur=document.getElementById('currentStep');
        if(list){var box=list.parentNode;if(listTop!==undefined)box.scrollTop=listTop;
        if(cur){var r=cur.getBoundingClientRect(),b=box.getBoundingClientRect();
        if(r.top<b.top||r.bottom>b.bottom)box.scrollTop+=r.top-b.top-box.clientHeight/2;}}
        ahead();follow();}
        document.addEventListener('click',function(e){var a=e.target.closest&&e.target.closest('a');
        if(!a||e.ctrlKey||e.metaKey||e.shiftKey||e.altKey||e.button!==0)return;
        var u=new URL(a.href,location.href);if(u.origin!==location.origin)return;
        // A step of this game, or "when did this cell change?" (answered with that step's address).
        if(!a.classList.contains('when')&&(u.pathname!==location.pathname||!u.searchParams.has('step')))return;
        e.preventDefault();stop();show(u.pathname+u.search,true);});
        document.addEventListener('submit',function(e){var f=e.target;if(!f.classList||!(f.classList.contains('compare')||f.classList.contains('track')))return;
        e.preventDefault();stop();show(f.getAttribute('action')+'?'+new URLSearchParams(new FormData(f)).toString(),true);});
        window.addEventListener('popstate',function(){stop();show(location.pathname+location.search,false);});
        document.addEventListener('keydown',function(e){var el=e.target;
        if(e.ctrlKey||e.metaKey||e.altKey)return;
        if(el.tagName==='SELECT'||el.tagName==='TEXTAREA'||(el.tagName==='INPUT'&&el.type!=='checkbox'))return;
        var help=document.getElementById('help');
        if(e.key==='ArrowLeft'){stop();go(step-1);}else if(e.key==='ArrowRight'){stop();go(step+1);}else if(e.key===' '){e.preventDefault();document.getElementById('play').click();}
        else if(e.key==='Home'){stop();go(0);}else if(e.key==='End'){stop();go(steps);}else if(e.key===']'){jump('move',1);}else if(e.key==='['){jump('move',-1);}
        else if(e.key==='}'){jump('finding',1);}else if(e.key==='{'){jump('finding',-1);}else if(e.key==='?'&&help){help.hidden=!help.hidden;}});
        init();})();
        """
}

/// Why a request was refused.
enum ViewerError: Error, CustomStringConvertible {
    case badParameter(String)
    var description: String {
        switch self { case .badParameter(let detail): return detail }
    }
}
