import GRDB
import GRDBSQLite

/// A statement prepared and cached by GRDB, run through SQLite's C API.
///
/// Only for hot loops where a benchmark shows GRDB's per-call values (argument
/// arrays, boxed database values, row objects) cost more than SQLite's own work.
/// Blobs are bound without copying (`SQLITE_STATIC`), so they are valid only inside
/// ``run(binding:row:)``, which clears every binding before it returns; GRDB rebinds
/// all arguments whenever it runs the statement itself.
struct SQLiteCall {
    private let statement: OpaquePointer
    private let connection: OpaquePointer

    init(_ db: Database, _ prepared: Statement) throws {
        guard let connection = db.sqliteConnection else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "the connection is closed", sql: prepared.sql)
        }
        statement = prepared.sqliteStatement
        self.connection = connection
    }

    /// Sets a statement's parameters (1-based, as in SQL).
    struct Bindings {
        fileprivate let statement: OpaquePointer
        fileprivate var failure: Int32 = SQLITE_OK

        mutating func int64(_ index: Int32, _ value: Int64) {
            check(sqlite3_bind_int64(statement, index, value))
        }

        mutating func null(_ index: Int32) {
            check(sqlite3_bind_null(statement, index))
        }

        /// Binds bytes without copying them; a zero-length blob (never NULL) when empty.
        mutating func blob(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
            if let base = bytes.baseAddress, !bytes.isEmpty {
                check(sqlite3_bind_blob(statement, index, base, Int32(bytes.count), nil))
            } else {
                check(sqlite3_bind_zeroblob(statement, index, 0))
            }
        }

        private mutating func check(_ code: Int32) {
            if failure == SQLITE_OK && code != SQLITE_OK { failure = code }
        }
    }

    /// Reads the columns of the current row (0-based, as in SQLite's C API).
    struct Columns {
        fileprivate let statement: OpaquePointer
        func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }
        func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }
        /// The column's bytes, nil for NULL.
        func bytes(_ index: Int32) -> [UInt8]? {
            if isNull(index) { return nil }
            // The pointer first, then its length, as SQLite asks.
            guard let base = sqlite3_column_blob(statement, index) else { return [] }
            return Array(UnsafeRawBufferPointer(start: base, count: Int(sqlite3_column_bytes(statement, index))))
        }
    }

    /// The row id of the connection's last insert.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(connection) }

    /// Binds, steps once, and resets. Returns what `row` makes of the first row, or
    /// nil when the statement gives no row (as an INSERT does).
    func run<T>(binding: (inout Bindings) -> Void, row: (Columns) -> T) throws -> T? {
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        var bindings = Bindings(statement: statement)
        binding(&bindings)
        guard bindings.failure == SQLITE_OK else { throw error(bindings.failure) }
        let code = sqlite3_step(statement)
        switch code {
        case SQLITE_ROW: return row(Columns(statement: statement))
        case SQLITE_DONE: return nil
        default: throw error(code)
        }
    }

    /// The rows the last INSERT, UPDATE or DELETE on the connection changed (0 for an
    /// insert that `ON CONFLICT DO NOTHING` skipped).
    var changes: Int32 { sqlite3_changes(connection) }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)),
                      // Read only for an error: GRDB's `sql` makes a string of it each time,
                      // which was 1.5% of the appending thread when each batch took it.
                      sql: sqlite3_sql(statement).map { String(cString: $0) })
    }
}
