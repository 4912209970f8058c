import EventStore
import Hummingbird
import Replay

/// A request the viewer cannot answer, as Hummingbird answers errors (`HTTPResponseError`):
/// a status, a message that names the problem, and the form of the route that failed (a
/// page for people, JSON under `/api`). Routes and middleware throw it; the library's own
/// errors are given their status in one place, ``init(_:html:)``.
struct ViewerFailure: HTTPResponseError {
    let status: HTTPResponse.Status
    let message: String
    /// A page (true) or a JSON error document.
    let html: Bool
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ message: String, html: Bool, headers: HTTPFields = [:]) {
        self.status = status
        self.message = message
        self.html = html
        self.headers = headers
    }

    /// The failure a page or API body's error stands for: an unknown id 404, a bad
    /// parameter 400, a damaged event 422 (the other answers still work), anything else 500.
    init(_ error: any Error, html: Bool) {
        switch error {
        case let failure as ViewerFailure:
            self = failure
        case let error as ReplayError:
            let status: HTTPResponse.Status
            switch error {
            case .noSuchGame: status = .notFound
            case .ambiguousGame, .stepOutOfRange: status = .badRequest
            case .undecodableEvent: status = .unprocessableContent
            case .catalogContradictsEvents: status = .conflict
            case .incompleteCatalog: status = .serviceUnavailable
            }
            self.init(status, error.description, html: html)
        case let error as ViewerError:
            self.init(.badRequest, error.description, html: html)
        case let error as EventStoreError where error.position != nil:
            self.init(.unprocessableContent, "\(error.description) `gamelog verify` names every damaged event; `gamelog export --skip-damaged` salvages the rest.",
                      html: html)
        case let error as HTTPError:
            self.init(error.status, error.body ?? "\(error.status)", html: html)
        default:
            self.init(.internalServerError, String(describing: error), html: html)
        }
    }

    func response(from request: Request, context: some RequestContext) throws -> Response { response }

    /// The answer: an error page or a JSON error document, with the failure's headers.
    var response: Response {
        var headers = self.headers
        let body: String
        if html {
            headers[.contentType] = "text/html; charset=utf-8"
            body = Pages.page(title: "\(status.code)", body: "<main><h1>\(status.code) \(status.reasonPhrase)</h1><p id=error>\(message)</p><p><a href=\"/games\">← games</a></p></main>")
        } else {
            headers[.contentType] = "application/json"
            body = (try? WebViewer.json(WebViewer.ErrorDocument(error: message, status: "\(status.code)"))) ?? "{}"
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
