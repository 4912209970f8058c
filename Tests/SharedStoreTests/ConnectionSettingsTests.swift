import Foundation
import PostgresNIO
@testable import SharedStore
import TestSupport
import Testing

/// What every connection to a shared store is opened with.
@Suite(.serialized) struct ConnectionSettingsTests {
    /// JIT compilation only delays our statements (index lookups and plain scans): a page
    /// of games spent a sixth of its time compiling. The server's default is on.
    @Test func connectionsRunWithoutJIT() async throws {
        let folder = try TemporaryFolder()
        let (store, _) = try SharedStoreTests.makeStore(folder)
        let rows = try await store.withConnection {
            try await store.run($0, "SELECT current_setting('jit'), reset_val, boot_val FROM pg_settings WHERE name = 'jit'")
        }
        #expect(rows.count == 1)
        let (session, start, server) = try rows[0].decode((String, String, String).self)
        #expect(session == "off")
        // Set when the connection was opened (a reset goes back to it), against the server's own default.
        #expect(start == "off")
        #expect(server == "on")
    }
}
