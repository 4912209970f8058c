import Foundation
import HTTPServing
import HTTPTypes
import Hummingbird

/// The witness's HTTP interface: C2SP tlog-witness's `POST /add-checkpoint`, and (a
/// gamelog addition, so a client can store what it is given) `GET /verifier-key`.
public enum WitnessServer {
    public static func router(_ witness: Witness) -> Router<BasicRequestContext> {
        let router = Router()
        router.post("/add-checkpoint") { request, _ -> Response in
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: Witness.maximumRequest)
            } catch {
                return text(.contentTooLarge, "the request is larger than \(Witness.maximumRequest) bytes\n", type: "text/plain; charset=utf-8")
            }
            let answer = witness.addCheckpoint(Array(body.readableBytesView))
            return text(HTTPResponse.Status(code: answer.status), answer.body, type: answer.contentType)
        }
        router.get("/verifier-key") { _, _ -> Response in
            text(.ok, witness.verifierKey + "\n", type: "text/plain; charset=utf-8")
        }
        return router
    }

    static func text(_ status: HTTPResponse.Status, _ body: String, type: String) -> Response {
        Response(status: status, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// The witness as a server on `host`:`port`.
    public static func application(_ witness: Witness, host: String, port: Int,
                                   onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        HTTPServing.application(router: router(witness), host: host, port: port, serverName: "gamelog-witness", label: "gamelog.witness",
                                onServerRunning: onServerRunning)
    }
}
