import EventStore
import Foundation
import HTTPServing
import HTTPTypes
import Hummingbird
import Logging
import Presentation
import SharedStore

/// The collector's HTTP API (all JSON):
///
/// - `POST /v1/devices` `{"device","publicKey"}` with `Authorization: Bearer <admin token>`:
///   enrolls a device key (201; 200 if it was; 409 if the key is another device's).
/// - `GET /v1/devices/<public key, hex>`: the newest head accepted from that key
///   (`{"device","publicKey","size","note"}`, size 0 before the first upload; 404 if not enrolled).
/// - `POST /v1/upload`: a device's new events (``DeviceUpload``), authenticated by the
///   device's own signatures, its key named in the `Gamelog-Device-Key` header (checked
///   against the enrolled keys before the body is read); 200 with the cosigned head, 400
///   (no or a malformed header, lines that do not parse, events past every head), 403 (not
///   enrolled) or 409 (the upload contradicts its signatures or what was accepted) with `{"error"}`.
/// - `GET /v1/heads`: every device's newest accepted head with its cosignatures, in the
///   form `gamelog heads --json` prints, which `gamelog verify --heads URL` reads.
///
/// Reads need a reader (or admin) token when the collector listens beyond loopback.
public enum CollectorServer {
    public static func router(_ collector: Collector, requireReaderToken: Bool) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: RequestLog())
        router.add(middleware: StoreFailureMiddleware())
        // Healthy means able to take uploads: the store answers (a load balancer then sends elsewhere).
        router.get("/healthz") { _, _ -> Response in
            if let problem = await collector.store.problem() {
                return Response(status: .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
                                body: .init(byteBuffer: ByteBuffer(string: "the shared store does not answer: \(problem)\n")))
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        router.get("/metrics") { request, _ -> Response in
            if requireReaderToken, try await role(request, collector) == nil { return problem(.unauthorized, "reading needs a reader token") }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: collector.metrics.text)))
        }
        router.post("/v1/upload") { request, _ -> Response in
            let started = ContinuousClock.now
            let response = try await upload(request, collector, started: started)
            let seconds = ContinuousClock.now.duration(since: started)
            switch response.status.code {
            case 200: break
            case 400: collector.metrics.refusedUpload(.malformed, seconds: seconds)
            case 401, 403: collector.metrics.refusedUpload(.notEnrolled, seconds: seconds)
            case 409: collector.metrics.refusedUpload(.conflict, seconds: seconds)
            case 413: collector.metrics.refusedUpload(.tooLarge, seconds: seconds)
            default: collector.metrics.refusedUpload(.storeFailed, seconds: seconds)
            }
            return response
        }
        router.post("/v1/devices") { request, _ -> Response in
            guard try await role(request, collector) == .admin else {
                return problem(.unauthorized, "enrolling a device needs the administrator's token (Authorization: Bearer ...)")
            }
            let body = try await request.body.collect(upTo: 4096)
            guard let enrollment = try? JSONDecoder().decode(CommandDocuments.Enrollment.self, from: Data(body.readableBytesView)) else {
                return problem(.badRequest, "the body must be {\"device\": NAME, \"publicKey\": 64 hex digits}")
            }
            do { try DeviceName.check(enrollment.device) } catch { return problem(.badRequest, "\(error)") }
            guard let key = Hex.bytes(enrollment.publicKey, count: 32), PublicKeyCheck.isAcceptable(key) else {
                return problem(.badRequest, "publicKey is not a usable Ed25519 public key (64 hex digits)")
            }
            switch try await collector.store.enroll(device: enrollment.device, publicKey: key) {
            case .enrolled:
                collector.metrics.enrolled()
                return try json(.created, CommandDocuments.Enrollment(device: enrollment.device, publicKey: key))
            case .alreadyEnrolled: return try json(.ok, CommandDocuments.Enrollment(device: enrollment.device, publicKey: key))
            case .enrolledAs(let other):
                return problem(.conflict, "the key is enrolled as device \(SafeText.line(other)); a key signs as one device only")
            case .nameTaken:
                return problem(.conflict, "device \(SafeText.line(enrollment.device)) is enrolled with another key; a device signs with one key only")
            }
        }
        router.get("/v1/devices/:key") { request, context -> Response in
            if requireReaderToken, try await role(request, collector) == nil { return problem(.unauthorized, "reading needs a reader token") }
            guard let text = context.parameters.get("key"), let key = Hex.bytes(text, count: 32) else {
                return problem(.badRequest, "the device is named by its public key, 64 hex digits")
            }
            guard let device = try await collector.store.enrolledDevice(publicKey: key) else {
                return problem(.notFound, "the key is not enrolled here: `gamelog keys enroll` enrolls it")
            }
            let head = try await collector.store.latestHeads(publicKey: key).first
            return try json(.ok, AcceptedHead(device: device, publicKey: Hex.string(key), size: head?.head.size ?? 0,
                                              note: head?.note, witnessKey: Hex.string(collector.witnessKey.publicKey)))
        }
        router.get("/v1/heads") { request, _ -> Response in
            if requireReaderToken, try await role(request, collector) == nil { return problem(.unauthorized, "reading needs a reader token") }
            let heads = try await collector.store.latestHeads()
            return try json(.ok, heads.map(CommandDocuments.Head.init))
        }
        return router
    }

    /// One upload, checked and stored; every answer is counted in ``Collector/metrics``.
    static func upload(_ request: Request, _ collector: Collector, started: ContinuousClock.Instant) async throws -> Response {
        // Who sends it is known before a byte of the body is read: an unenrolled key
        // costs the collector one index lookup, whatever the body's size.
        guard let named = request.headers[HTTPField.Name(Collector.deviceKeyHeader)!], let key = Hex.bytes(named, count: 32) else {
            return problem(.badRequest, "an upload names its device's public key in the \(Collector.deviceKeyHeader) header (64 hex digits), as `gamelog push` does")
        }
        let device: String
        do {
            switch try await collector.enrollment(of: key) {
            case .success(let enrolled): device = enrolled
            case .failure(let refusal): return problem(HTTPResponse.Status(code: refusal.status), refusal.description)
            }
        } catch {
            return problem(.serviceUnavailable, "the shared store failed: \(error); nothing was stored, push again")
        }
        let body: ByteBuffer
        do {
            // Read as it arrives, up to the cap, never more.
            body = try await request.body.collect(upTo: Collector.maximumUpload)
        } catch {
            return problem(.contentTooLarge, "the upload is larger than \(Collector.maximumUpload) bytes; push sends smaller ones")
        }
        do {
            let accepted = try await collector.accept(Data(body.readableBytesView), declaredKey: key, enrolledAs: device)
            collector.metrics.acceptedUpload(events: accepted.stored, seconds: ContinuousClock.now.duration(since: started))
            return try json(.ok, accepted)
        } catch let refusal as Collector.Refusal {
            return problem(HTTPResponse.Status(code: refusal.status), refusal.description)
        } catch {
            return problem(.serviceUnavailable, "the shared store failed: \(error); nothing was stored, push again")
        }
    }

    /// A route that throws met a store it could not use (PostgreSQL down or restarting):
    /// the client is told so, with the reason, as a 503 it can retry, never a bare 500.
    struct StoreFailureMiddleware<Context: RequestContext>: RouterMiddleware {
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            do {
                return try await next(request, context)
            } catch let error as HTTPResponseError {
                throw error
            } catch {
                return problem(.serviceUnavailable, "the shared store failed: \(error); try again")
            }
        }
    }

    struct AcceptedHead: Encodable {
        var device: String
        var publicKey: String
        var size: Int64
        /// The accepted head with its cosignatures: a phone whose upload was stored but
        /// whose answer never reached it takes its cosignature from here.
        var note: String?
        /// This collector's cosigning key, hex.
        var witnessKey: String
    }

    static func role(_ request: Request, _ collector: Collector) async throws -> SharedStore.TokenRole? {
        guard let token = HTTPServing.token(request.headers[.authorization]) else { return nil }
        return try await collector.store.role(ofToken: token)
    }

    static func json(_ status: HTTPResponse.Status, _ value: some Encodable) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json"],
                 body: .init(byteBuffer: ByteBuffer(string: try CommandDocuments.text(value) + "\n")))
    }

    static func problem(_ status: HTTPResponse.Status, _ message: String) -> Response {
        // One line per refusal, with its reason (the request's own line follows it).
        requestLogger.notice("refused", metadata: ["status": "\(status.code)", "reason": "\(SafeText.line(String(message.prefix(300))))"])
        return (try? json(status, ["error": message])) ?? Response(status: status)
    }

    /// Where the request and refusal lines go: standard error, one line each, key=value metadata.
    static let requestLogger: Logger = {
        var logger = Logger(label: "gamelog.collect") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .info
        return logger
    }()

    /// One line per request: method, path, status and time taken.
    struct RequestLog<Context: RequestContext>: RouterMiddleware {
        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            let started = ContinuousClock.now
            var status = 500
            defer {
                CollectorServer.requestLogger.info("request", metadata: [
                    "method": "\(request.method.rawValue)", "path": "\(SafeText.line(String(request.uri.path.prefix(200))))",
                    "status": "\(status)", "ms": "\(Int(ContinuousClock.now.duration(since: started) * 1000))",
                ])
            }
            let response = try await next(request, context)
            status = response.status.code
            return response
        }
    }

    /// The collector as a server on `host`:`port`.
    public static func application(_ collector: Collector, host: String, port: Int,
                                   onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        HTTPServing.application(router: router(collector, requireReaderToken: !HTTPServing.isLoopback(host)), host: host, port: port,
                                serverName: "gamelog-collector", label: "gamelog.collect", onServerRunning: onServerRunning)
    }
}
