import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The few HTTP requests the command line makes to a collector, waited for.
enum HTTPClient {
    struct Reply: Sendable {
        var status: Int
        var body: Data

        /// The collector's `{"error": ...}` text, else the body as text.
        var message: String {
            if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let error = object["error"] as? String {
                return error
            }
            return String(decoding: body.prefix(500), as: UTF8.self)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A collector's base URL, checked: http or https, a host, no query.
    static func baseURL(_ text: String, option: String) throws -> URL {
        guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", url.host != nil, url.query == nil else {
            throw Failure(description: "\(option) \(text) is not a collector's URL (http://host:port)")
        }
        return url
    }

    static func request(_ method: String, _ url: URL, body: Data? = nil, token: String? = nil,
                        contentType: String = "application/json", timeout: TimeInterval = 120) throws -> Reply {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                box.result = .failure(Failure(description: "the collector at \(origin(of: url)) did not answer (\(error.localizedDescription)): is `gamelog collect` running there?"))
            } else {
                box.result = .success(Reply(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data ?? Data()))
            }
            done.signal()
        }.resume()
        done.wait()
        return try box.result!.get()
    }

    /// scheme://host:port of `url`: where it was sent, without the path.
    static func origin(of url: URL) -> String {
        "\(url.scheme ?? "http")://\(url.host ?? "")" + (url.port.map { ":\($0)" } ?? "")
    }

    private final class Box: @unchecked Sendable {
        var result: Result<Reply, Error>?
    }
}
