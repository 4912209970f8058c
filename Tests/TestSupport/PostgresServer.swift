import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL server for the tests, started in a temporary folder with the installed
/// PostgreSQL's `initdb` and `pg_ctl` (as the `postgres` user when the tests run as root,
/// which PostgreSQL refuses to be), listening on loopback only, trusting local logins, and
/// stopped when the test process exits. One per test process; each test makes its own database.
public final class PostgresServer: @unchecked Sendable {
    public let port: Int
    public let folder: String
    let bin: String
    let runAs: String?
    private static let lock = NSLock()
    nonisolated(unsafe) private static var started: PostgresServer?

    /// The server, started on first use.
    public static func shared() throws -> PostgresServer {
        lock.lock()
        defer { lock.unlock() }
        if let started { return started }
        let server = try PostgresServer()
        started = server
        atexit { PostgresServer.stopShared() }
        return server
    }

    private static func stopShared() {
        started?.stop()
        started?.removeFolder()
    }

    /// Where the PostgreSQL programs are: `$GAMELOG_PG_BIN`, else Debian's folders, else PATH.
    static func binaries() throws -> String {
        if let bin = ProcessInfo.processInfo.environment["GAMELOG_PG_BIN"] { return bin }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = "/usr/lib/postgresql/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: bin + "/pg_ctl") { return bin }
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(folder)/pg_ctl") {
            return String(folder)
        }
        throw ServerError("PostgreSQL is not installed (no pg_ctl): install Debian's postgresql, or set GAMELOG_PG_BIN")
    }

    struct ServerError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The PEM certificate a server started with `tls` presents (self-signed for 127.0.0.1).
    public var certificate: String? { tls ? folder + "/server.crt" : nil }
    let tls: Bool

    /// A server of the caller's own (one a test may crash and restart), on a free loopback port.
    /// - Parameter tls: serve TLS too, with a self-signed certificate for 127.0.0.1 (``certificate``).
    public init(tls: Bool = false) throws {
        self.tls = tls
        bin = try Self.binaries()
        runAs = geteuid() == 0 ? "postgres" : nil
        folder = FileManager.default.temporaryDirectory.appending(path: "gamelog-pg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        port = Self.freePort()
        if let runAs { _ = try ChildProcess.run("chown", ["-R", runAs, folder]) }
        let initdb = try command(bin + "/initdb", ["-D", folder + "/data", "-U", "gamelog", "--auth=trust", "-E", "UTF8", "--no-sync"])
        guard initdb.status == 0 else { throw ServerError("initdb failed: \(initdb.stderr)") }
        if tls {
            let made = try ChildProcess.run("openssl", ["req", "-new", "-x509", "-days", "2", "-nodes", "-subj", "/CN=127.0.0.1",
                                                        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder + "/server.key",
                                                        "-out", folder + "/server.crt"])
            guard made.status == 0 else { throw ServerError("openssl could not make a certificate: \(made.stderr)") }
            _ = try ChildProcess.run("chmod", ["600", folder + "/server.key"])
            if let runAs { _ = try ChildProcess.run("chown", [runAs, folder + "/server.key", folder + "/server.crt"]) }
        }
        try start()
    }

    func command(_ program: String, _ arguments: [String]) throws -> ChildProcess.Result {
        if let runAs { return try ChildProcess.run("runuser", ["-u", runAs, "--", program] + arguments, atMost: 120) }
        return try ChildProcess.run(program, arguments, atMost: 120)
    }

    /// Starts the server (again, after ``stop(mode:)``) on the same port and data.
    public func start() throws {
        var options = "-c listen_addresses=127.0.0.1 -p \(port) -c unix_socket_directories='\(folder)' -c fsync=off -c max_connections=300"
        if tls { options += " -c ssl=on -c ssl_cert_file='\(folder)/server.crt' -c ssl_key_file='\(folder)/server.key'" }
        let result = try command(bin + "/pg_ctl", ["-D", folder + "/data", "-l", folder + "/server.log", "-o", options, "-w", "-t", "60", "start"])
        guard result.status == 0 else {
            let log = (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? ""
            throw ServerError("pg_ctl start failed: \(result.stderr) \(log.suffix(2000))")
        }
    }

    /// A server of a test's own goes with its folder when the test lets go of it (each
    /// held 600 MB of data and log: a few hundred test runs filled a disk).
    deinit {
        stop(mode: "immediate")
        removeFolder()
    }

    func removeFolder() { try? FileManager.default.removeItem(atPath: folder) }

    /// Stops the server; `immediate` is a crash as far as PostgreSQL's data is concerned.
    public func stop(mode: String = "fast") {
        _ = try? command(bin + "/pg_ctl", ["-D", folder + "/data", "-m", mode, "-w", "stop"])
    }

    /// A new, empty database and its URL.
    public func makeDatabase(_ prefix: String = "gamelog") throws -> String {
        let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
        let result = try ChildProcess.run(bin + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "gamelog", "-d", "postgres",
                                                          "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE \(name)"])
        guard result.status == 0 else { throw ServerError("CREATE DATABASE failed: \(result.stderr)") }
        return "postgres://gamelog@127.0.0.1:\(port)/\(name)"
    }

    /// Runs SQL with psql against the database of `url`; returns its unaligned output.
    public func psql(_ url: String, _ sql: String) throws -> String {
        let name = String(url.split(separator: "/").last ?? "")
        let result = try ChildProcess.run(bin + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "gamelog", "-d", name,
                                                          "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
        guard result.status == 0 else { throw ServerError("psql failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs the SQL file at `path` with psql against the database of `url`, in one
    /// transaction: for statements longer than one command-line argument may be.
    public func psql(_ url: String, file path: String) throws -> String {
        let name = String(url.split(separator: "/").last ?? "")
        let result = try ChildProcess.run(bin + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "gamelog", "-d", name,
                                                          "-v", "ON_ERROR_STOP=1", "-At", "--single-transaction", "-f", path])
        guard result.status == 0 else { throw ServerError("psql failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts psql running `sql` against the database of `url` and returns at once: a
    /// session that holds a lock while a test does something else.
    public func psqlInBackground(_ url: String, _ sql: String) throws -> ChildProcess {
        let name = String(url.split(separator: "/").last ?? "")
        return try ChildProcess(bin + "/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "gamelog", "-d", name,
                                                "-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
    }

    static func freePort() -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
