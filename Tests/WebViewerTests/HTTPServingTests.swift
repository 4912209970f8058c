import Foundation
import HTTPServing
import Testing

/// What the viewer and the collector read alike from a request.
@Suite struct HTTPServingTests {
    @Test func aTokenComesAsBearerOrAsABasicPassword() {
        #expect(HTTPServing.token("Bearer abc123") == "abc123")
        #expect(HTTPServing.token("Bearer  abc123 ") == "abc123")
        // A browser sends user:password; the user name is ignored, a colon in the password kept.
        let basic = "Basic " + Data("anyone:s3cr:et".utf8).base64EncodedString()
        #expect(HTTPServing.token(basic) == "s3cr:et")
    }

    @Test func anythingElseIsNoToken() {
        #expect(HTTPServing.token(nil) == nil)
        #expect(HTTPServing.token("abc123") == nil)
        #expect(HTTPServing.token("bearer abc123") == nil)
        #expect(HTTPServing.token("Basic not-base64!") == nil)
        #expect(HTTPServing.token("Basic " + Data("no colon".utf8).base64EncodedString()) == nil)
        // A header longer than any token is refused before it is decoded.
        #expect(HTTPServing.token("Bearer " + String(repeating: "a", count: 1_000)) == nil)
    }

    @Test func loopbackIsThisMachineOnly() {
        for host in ["127.0.0.1", "localhost", "LOCALHOST", "::1", "[::1]"] { #expect(HTTPServing.isLoopback(host), "\(host)") }
        for host in ["0.0.0.0", "::", "192.168.1.2", "example.org", "127.0.0.2"] { #expect(!HTTPServing.isLoopback(host), "\(host)") }
    }

    @Test func theNamesAServerIsReachedBy() {
        #expect(HTTPServing.names(listeningOn: "localhost") == ["127.0.0.1", "localhost", "[::1]"])
        #expect(HTTPServing.names(listeningOn: "0.0.0.0") == ["127.0.0.1", "localhost", "[::1]"])
        #expect(HTTPServing.names(listeningOn: "fe80::1") == ["[fe80::1]"])
        #expect(HTTPServing.names(listeningOn: "Viewer.Example") == ["viewer.example"])
    }
}
