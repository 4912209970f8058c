import Audit
import EventStore
import Foundation
import GameKit
import HTTPServing
import Hummingbird
import MessagesModel
import Presentation
import Projections
import Replay

/// The web viewer's routes: pages for people, the same JSON as the command line's
/// `--json` under `/api`. Read-only: every write method gets 405.
public enum WebViewer {
    /// - Parameters:
    ///   - hosts: the names the viewer is addressed by (`Host`); requests naming others
    ///     are refused. Nil accepts any, for tests of the routes alone.
    ///   - port: the port they must name; nil for any.
    ///   - reader: whether a token may read (`Authorization: Bearer` or Basic with the token
    ///     as password); nil asks for none.
    public static func router(_ model: ViewerModel, hosts: Set<String>? = nil, port: Int? = nil,
                              reader: (@Sendable (String) async throws -> Bool)? = nil) -> HeadAsGet<Router<BasicRequestContext>> {
        HeadAsGet(inner: routes(model, hosts: hosts, port: port, reader: reader))
    }

    static func routes(_ model: ViewerModel, hosts: Set<String>?, port: Int?,
                       reader: (@Sendable (String) async throws -> Bool)?) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: ViewerGuard(hosts: hosts, port: port, reader: reader))
        // Nothing here writes: any other method is refused before a route is looked up.
        router.add(middleware: ReadOnlyMiddleware())
        router.get("/") { _, _ in
            Response(status: .seeOther, headers: [.location: "/games"])
        }
        PagesController(model: model).addRoutes(to: router)
        AssetsController().addRoutes(to: router)
        APIController(model: model).addRoutes(to: router)
        router.get("/**") { _, _ -> Response in
            throw ViewerFailure(.notFound, "no such page: the pages are /games (every game) and /games/ID (one game, step by step)", html: true)
        }
        router.get("/api/**") { _, _ -> Response in
            throw ViewerFailure(.notFound, "no such API route; the routes are /api/games, /api/games/ID, /api/games/ID/steps/N?as=D and /api/verify/ID",
                                html: false)
        }
        return router
    }

    /// An application serving the viewer on `host:port`.
    public static func application(_ model: ViewerModel, host: String, port: Int,
                                   reader: (@Sendable (String) async throws -> Bool)? = nil,
                                   onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        // Listening on every address with a reader token: any name of the machine reaches it
        // (the token, not the name, keeps a page elsewhere out); otherwise only its own names.
        let everywhere = ["0.0.0.0", "::", "[::]"].contains(host)
        let hosts: Set<String>? = everywhere && reader != nil ? nil : HTTPServing.names(listeningOn: host)
        return HTTPServing.application(router: router(model, hosts: hosts, port: port == 0 ? nil : port, reader: reader),
                                host: host, port: port, serverName: "gamelog", label: "gamelog.serve", onServerRunning: onServerRunning)
    }

    /// Whether a request's `Host` (name, name:port or [v6]:port) addresses a viewer reached by `names` on `port`.
    public static func accepts(host: String?, names: Set<String>, port: Int?) -> Bool {
        ViewerGuard<BasicRequestContext>.accepts(host, hosts: names, port: port)
    }

    /// The names a viewer listening on `host` answers to.
    public static func hostNames(listeningOn host: String) -> Set<String> {
        HTTPServing.names(listeningOn: host)
    }

    struct VerifyDocument: Encodable {
        var ok: Bool
        var notCheckable: Int
        var findings: [Finding]
    }

    static func nonEmpty(_ value: Substring?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return String(value)
    }

    /// A whole-number query parameter within `range`, or its default when absent.
    static func count(_ value: String?, name: String, default fallback: Int, range: ClosedRange<Int>) throws -> Int {
        guard let value, !value.isEmpty else { return fallback }
        guard let n = Int(value), range.contains(n) else {
            throw ViewerError.badParameter("\(name) '\(value)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }

    static func step(_ value: (some StringProtocol)?) throws -> Int? {
        guard let value, !value.isEmpty else { return nil }
        guard let n = Int(value), n >= 0 else { throw ViewerError.badParameter("step '\(value)' is not a step number") }
        return n
    }

    /// `/api/games/ID`: a conversation's steps, devices and games.
    struct GameDocument: Encodable {
        var conversation: String
        var steps: Int
        var devices: [String]
        var games: [GameSummary]
    }

    /// An API error: what went wrong and the HTTP status, as text.
    struct ErrorDocument: Encodable {
        var error: String
        var status: String
    }

    static func json(_ value: some Encodable) throws -> String {
        try JSONStyle.text(encoding: value)
    }

    /// Runs a page or API body on the viewer's own threads (see ``WorkQueue``), answering
    /// errors with their status: unknown ids 404, bad parameters 400, anything else 500;
    /// JSON errors under /api.
    static func respond(_ model: ViewerModel, html: Bool, _ body: @escaping @Sendable () throws -> String) async throws(ViewerFailure) -> Response {
        do {
            let text = try await model.work(body)
            return Response(status: .ok, headers: [.contentType: html ? "text/html; charset=utf-8" : "application/json"],
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        } catch {
            throw ViewerFailure(error, html: html)
        }
    }
}

extension WebViewer {
    /// Server-sent events: `state()` as a `data:` line now and whenever the log grows and
    /// it changed; a comment line on a growth that did not change it and on each beat (so
    /// a closed connection is found). Ends when the client goes.
    static func eventStream(_ model: ViewerModel, _ state: @escaping @Sendable () async throws -> String?) -> Response {
        Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"], body: ResponseBody { writer in
            var last: String?
            for await _ in model.changes() {
                let now = try? await state()
                let line = now.map { $0 == last ? ": unchanged\n\n" : "data: \($0)\n\n" } ?? ": unreadable now\n\n"
                if let now { last = now }
                try await writer.write(ByteBuffer(string: line))
            }
            try await writer.finish(nil)
        })
    }
}

/// The `:id` path parameter, percent-decoded: a link may encode any character of an id.
func gameID(_ context: BasicRequestContext) throws -> String {
    let raw = try context.parameters.require("id")
    return raw.removingPercentEncoding ?? raw
}

/// HEAD answered as GET would be, without the body: every page and API route takes both,
/// as the Allow header says.
public struct HeadAsGet<Inner: HTTPResponderBuilder>: HTTPResponderBuilder where Inner.Responder.Context == BasicRequestContext {
    let inner: Inner

    public func buildResponder() -> Responder { Responder(inner: inner.buildResponder()) }

    public struct Responder: HTTPResponder {
        let inner: Inner.Responder

        public func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
            guard request.method == .head else { return try await inner.respond(to: request, context: context) }
            var head = request.head
            head.method = .get
            var response = try await inner.respond(to: Request(head: head, body: request.body), context: context)
            // The length GET would send, and no body (HTTP/1.1 section 9.3.2): a bare empty
            // body answered every HEAD with Content-Length: 0.
            let length = response.body.contentLength
            response.body = ResponseBody(contentLength: length) { writer in try await writer.finish(nil) }
            if let length { response.headers[.contentLength] = String(length) }
            return response
        }
    }
}

/// The pages people read: the game list and one game step by step.
struct PagesController {
    let model: ViewerModel

    func addRoutes(to router: Router<BasicRequestContext>) {
        let model = self.model
        router.get("/games") { request, _ in
            let q = request.uri.queryParameters
            let (kind, status, result, audit, pageText) = (WebViewer.nonEmpty(q["kind"]), WebViewer.nonEmpty(q["status"]), WebViewer.nonEmpty(q["result"]),
                                                           WebViewer.nonEmpty(q["audit"]), WebViewer.nonEmpty(q["page"]))
            return try await WebViewer.respond(model, html: true) {
                let page = try pageText.map { text -> Int in
                    guard let n = Int(text), n >= 1 else { throw ViewerError.badParameter("page '\(text)' is not a page number") }
                    // Past the last page shows the last; a huge number must not overflow the offset.
                    return min(n, Int(Int32.max))
                } ?? 1
                if let audit, !Pages.GamesQuery.verdicts.contains(audit) {
                    throw ViewerError.badParameter("audit '\(audit)' is not one of \(Pages.GamesQuery.verdicts.joined(separator: ", "))")
                }
                return try Pages.games(model, Pages.GamesQuery(kind: kind, status: status, result: result, audit: audit,
                                                               search: WebViewer.nonEmpty(q["q"]).map { String($0.prefix(200)) }, page: page))
            }
        }
        // "When did this change?": the step that last changed a board's cell (`dir=next`: the
        // next step that does), as a redirect to that step's page.
        router.get("/games/:id/changed") { request, context in
            let id = try gameID(context)
            let q = request.uri.queryParameters
            let (cellText, gameText, stepText, view) = (q["cell"].map(String.init), q["game"].map(String.init), q["step"].map(String.init),
                                                        WebViewer.nonEmpty(q["as"]))
            let forward = q["dir"] == "next", whole = q["whole"] == "1"
            let location: String
            do {
                location = try await model.work {
                    guard let cellText, let cell = Int(cellText), (0...10_000).contains(cell) else {
                        throw ViewerError.badParameter("cell '\((cellText ?? "").prefix(40))' is not a cell of the board")
                    }
                    guard let gameText, let game = UUID(uuidString: gameText).map(SessionID.init) else {
                        throw ViewerError.badParameter("game '\((gameText ?? "").prefix(40))' is not a game id")
                    }
                    let step = try WebViewer.step(stepText) ?? 0
                    let (conversation, _) = try model.resolve(id)
                    let perspective: Perspective
                    do { perspective = try model.replayer(conversation).perspective(view ?? "auditor") } catch {
                        throw ViewerError.badParameter("as: \(error)")
                    }
                    guard let found = try model.stepChanging(cell: cell, ofGame: game, in: conversation, as: perspective, from: step, forward: forward) else {
                        throw ViewerError.badParameter(forward ? "cell \(cell) does not change after step \(step)" : "cell \(cell) did not change up to step \(step)")
                    }
                    return "/games/\(Pages.percentEncoded(id))?step=\(found)&as=\(Pages.percentEncoded(view ?? "auditor"))\(whole ? "&whole=1" : "")"
                }
            } catch {
                throw ViewerFailure(error, html: true)
            }
            return Response(status: .seeOther, headers: [.location: location])
        }
        // A log being written (`serve --follow`): server-sent events, one `data: {"steps":N}`
        // line each time the game's step count in this view changes (and a comment every
        // 15 s without one), for as long as the page listens.
        router.get("/games/:id/follow") { request, context -> Response in
            let id = try gameID(context), view = WebViewer.nonEmpty(request.uri.queryParameters["as"])
            guard model.isFollowing else {
                throw ViewerFailure(.notFound, "this viewer does not follow its log: start it with `gamelog serve --follow`", html: false)
            }
            let (conversation, perspective): (ConversationID, Perspective)
            do {
                (conversation, perspective) = try await model.work {
                    let (conversation, _) = try model.resolve(id)
                    do { return (conversation, try model.replayer(conversation).perspective(view ?? "auditor")) } catch {
                        throw ViewerError.badParameter("as: \(error)")
                    }
                }
            } catch {
                throw ViewerFailure(error, html: false)
            }
            return WebViewer.eventStream(model) {
                #"{"steps":\#(try await model.work { try model.view(conversation, as: perspective).stepCount })}"#
            }
        }
        router.get("/follow") { _, _ -> Response in
            guard model.isFollowing else {
                throw ViewerFailure(.notFound, "this viewer does not follow its log: start it with `gamelog serve --follow`", html: false)
            }
            return WebViewer.eventStream(model) {
                #"{"games":\#(try await model.work { try model.page(offset: 0, limit: 1).total })}"#
            }
        }
        router.get("/games/:id") { request, context in
            let id = try gameID(context)
            let (stepText, view) = (request.uri.queryParameters["step"].map(String.init), WebViewer.nonEmpty(request.uri.queryParameters["as"]))
            // A game's page shows its own steps; `whole=1`, its whole conversation's.
            let whole = request.uri.queryParameters["whole"].map { $0 == "1" } ?? false
            let fromText = request.uri.queryParameters["from"].map(String.init)
            return try await WebViewer.respond(model, html: true) {
                try Pages.game(model, id: id, step: try WebViewer.step(stepText), perspective: view, whole: whole,
                               from: try fromText.flatMap { $0.isEmpty ? nil : try WebViewer.step($0) })
            }
        }
    }
}

/// The viewer's own style sheet and script: files, so no page needs inline script.
struct AssetsController {
    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/assets/viewer.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8", .cacheControl: "max-age=3600"],
                     body: .init(byteBuffer: ByteBuffer(string: Pages.css)))
        }
        router.get("/assets/timeline.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "max-age=3600"],
                     body: .init(byteBuffer: ByteBuffer(string: Pages.script)))
        }
    }
}

/// The same JSON as the command line's `--json`, under `/api`.
struct APIController {
    let model: ViewerModel

    func addRoutes(to router: Router<BasicRequestContext>) {
        let model = self.model
        // Paged as the list is: ?page=N (from 1) and ?per_page=M (at most 1,000, default
        // 100); a page shorter than per_page is the last.
        router.get("/api/games") { request, _ in
            let query = request.uri.queryParameters
            let (pageText, perPageText) = (query["page"].map(String.init), query["per_page"].map(String.init))
            return try await WebViewer.respond(model, html: false) {
                let page = try WebViewer.count(pageText, name: "page", default: 1, range: 1...Int(Int32.max))
                let perPage = try WebViewer.count(perPageText, name: "per_page", default: 100, range: 1...1_000)
                return try WebViewer.json(try model.page(offset: (page - 1) * perPage, limit: perPage).games)
            }
        }
        router.get("/api/games/:id") { _, context in
            let id = try gameID(context)
            return try await WebViewer.respond(model, html: false) {
                let (conversation, session) = try model.resolve(id)
                // Both from what a page or an earlier request folded, when one did: no events read.
                let outline = try model.outline(of: conversation)
                let summaries = try model.summaries(of: conversation).filter {
                    session == nil || $0.id == session!.uuid.uuidString.lowercased()
                }
                return try WebViewer.json(WebViewer.GameDocument(conversation: conversation.uuid.uuidString.lowercased(), steps: outline.steps,
                                             devices: outline.devices.map(\.name), games: summaries))
            }
        }
        router.get("/api/games/:id/steps/:step") { request, context in
            let (id, stepText, view) = (try gameID(context), context.parameters.get("step").map { String($0) },
                                        WebViewer.nonEmpty(request.uri.queryParameters["as"]))
            return try await WebViewer.respond(model, html: false) {
                let (conversation, _) = try model.resolve(id)
                let perspective: Perspective
                do {
                    perspective = try model.replayer(conversation).perspective(view ?? "auditor")
                } catch {
                    throw ViewerError.badParameter("as: \(error)")
                }
                // A device's steps are its own events'.
                let replayer = try model.view(conversation, as: perspective)
                guard let n = try WebViewer.step(stepText), (0...replayer.stepCount).contains(n) else {
                    throw ViewerError.badParameter("the step must be in 0...\(replayer.stepCount)")
                }
                let state = try model.state(conversation, at: n, as: perspective)
                return try StateText.json(state, step: n, replayer: replayer, perspective: perspective)
            }
        }
        router.get("/api/verify/:id") { _, context in
            let id = try gameID(context)
            return try await WebViewer.respond(model, html: false) {
                let (conversation, _) = try model.resolve(id)
                let findings = try model.findings(conversation)
                let document = WebViewer.VerifyDocument(ok: !findings.contains { $0.severity == .error },
                                              notCheckable: findings.filter { $0.severity == .notCheckable }.count, findings: findings)
                return try JSONStyle.text(encoding: document)
            }
        }
    }
}

/// Refuses every method but GET and HEAD with 405 and the `Allow` header: the viewer is
/// read-only whatever the path.
struct ReadOnlyMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .get || request.method == .head else {
            throw ViewerFailure(.methodNotAllowed, "gamelog serve is read-only: \(request.method) is not allowed", html: false,
                                headers: [.allow: "GET, HEAD"])
        }
        return try await next(request, context)
    }
}
