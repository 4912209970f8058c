// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6), .enableUpcomingFeature("MemberImportVisibility")]
/// What a game module may use: the plug-in protocol and the Messages model (no host).
let game: [Target.Dependency] = ["GameKit", "MessagesModel"]

let package = Package(
    name: "gamelog",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "gamelog", targets: ["gamelog"]),
        // The whole command and viewer as a library, for a gamelog that knows your games too.
        .library(name: "GamelogCLI", targets: ["GamelogCLI"]),
        .library(name: "EventLog", targets: ["EventLog"]),
        .library(name: "EventStore", targets: ["EventStore"]),
        .library(name: "MessagesModel", targets: ["MessagesModel"]),
        .library(name: "MessagesHost", targets: ["MessagesHost"]),
        .library(name: "GameKit", targets: ["GameKit"]),
        // The conformance kit every game's tests run (see GameConformance).
        .library(name: "GameKitTesting", targets: ["GameKitTesting"]),
        .library(name: "Games", targets: ["Games"]),
        .library(name: "BattleshipGame", targets: ["BattleshipGame"]),
        .library(name: "TicTacToeGame", targets: ["TicTacToeGame"]),
        .library(name: "StickerGame", targets: ["StickerGame"]),
        .library(name: "APITourGame", targets: ["APITourGame"]),
        .library(name: "ConnectFourGame", targets: ["ConnectFourGame"]),
        .library(name: "RecordedEvents", targets: ["RecordedEvents"]),
        .library(name: "Recorder", targets: ["Recorder"]),
        .library(name: "StoredEvents", targets: ["StoredEvents"]),
        .library(name: "Simulation", targets: ["Simulation"]),
        .library(name: "Projections", targets: ["Projections"]),
        .library(name: "Replay", targets: ["Replay"]),
        .library(name: "Interchange", targets: ["Interchange"]),
        .library(name: "Audit", targets: ["Audit"]),
        .library(name: "Rerun", targets: ["Rerun"]),
        .library(name: "Fork", targets: ["Fork"]),
        .library(name: "WebViewer", targets: ["WebViewer"]),
        // The text and JSON of a state at a step, as the CLI and the viewer show it.
        .library(name: "Presentation", targets: ["Presentation"]),
        // For the benchmarks and the fuzzer in tools/Benchmarks, which measure compression alone.
        .library(name: "ZlibCodec", targets: ["ZlibCodec"]),
        // The log in PostgreSQL, shared by collectors and every command given a postgres:// URL.
        .library(name: "SharedStore", targets: ["SharedStore"]),
        .library(name: "Collector", targets: ["Collector"]),
        // A C2SP tlog-witness server: cosigns checkpoints that extend what it cosigned before.
        .library(name: "Witness", targets: ["Witness"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        // Hummingbird's own logging API, named so the viewer can quiet its request log.
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        // The shared store's client (PostgreSQL 15), for the collector and every command given a postgres:// URL.
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        // TLS to PostgreSQL (`sslmode` in a shared store's URL): the TLS postgres-nio itself
        // uses, named for its configuration types.
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        // `push`, `keys enroll` and `verify --heads URL` talk to a collector. Foundation's
        // URLSession on Linux spins while it waits (0.7 of a core per waiting request, measured
        // with 200 phones pushing), so the Swift server ecosystem's client, already in the graph
        // through Hummingbird at this version, does it.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
    ],
    targets: [
        // MARK: Edges: zlib, SQLite
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        .target(name: "ZlibCodec", dependencies: ["CZlib"], swiftSettings: strict),
        // SHA-256 without swift-crypto's per-digest allocation, through the same BoringSSL
        // (CommonCrypto on Apple's systems): Sources/CSHA256/sha256.c says why.
        .target(name: "CSHA256"),
        .executableTarget(name: "MigrationEmbedder", swiftSettings: strict),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["MigrationEmbedder"]),
        // The log's rules, no database: chains, device trees, heads, proofs, blocks, the
        // reading and writing protocols both stores answer.
        .target(
            name: "EventLog",
            dependencies: ["ZlibCodec", "CSHA256", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        .target(
            name: "EventStore",
            dependencies: [
                "EventLog", "ZlibCodec",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict,
            plugins: ["EmbedMigrations"]),

        // The log in PostgreSQL: the same rows as a SQLite log, schema in Migrations/postgres.
        .target(
            name: "SharedStore",
            dependencies: [
                "EventStore", "Interchange",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict,
            plugins: ["EmbedMigrations"]),

        // MARK: Functional core
        .target(name: "MessagesModel", swiftSettings: strict),
        .target(name: "MessagesHost", dependencies: ["MessagesModel"], swiftSettings: strict),
        .target(name: "RecordedEvents", dependencies: ["MessagesModel"], swiftSettings: strict),
        .target(name: "Projections", dependencies: ["MessagesModel", "GameKit", "RecordedEvents"], swiftSettings: strict),

        // MARK: Games: the plug-in protocol, one module per game, the registry
        // Knows no host: games and their simulated players read Messages through MessagesWorld.
        .target(name: "GameKit", dependencies: ["MessagesModel"], swiftSettings: strict),
        .target(name: "BattleshipGame", dependencies: game, swiftSettings: strict),
        .target(name: "TicTacToeGame", dependencies: game, swiftSettings: strict),
        .target(name: "StickerGame", dependencies: game, swiftSettings: strict),
        .target(name: "APITourGame", dependencies: game, swiftSettings: strict),
        .target(name: "ConnectFourGame", dependencies: game, swiftSettings: strict),
        .target(
            name: "Games",
            dependencies: ["GameKit", "BattleshipGame", "TicTacToeGame", "StickerGame", "ConnectFourGame", "APITourGame"],
            swiftSettings: strict),

        // MARK: Shell
        // The read side's view of stored events: catalog tags and the store-backed stream
        // decoder, below both the recorder and the readers, so readers never link the writer.
        .target(name: "StoredEvents", dependencies: ["EventLog", "RecordedEvents", "MessagesModel"], swiftSettings: strict),
        // What a device runs: no simulated host (Simulation makes recorded hosts).
        .target(name: "Recorder", dependencies: ["RecordedEvents", "MessagesModel", "EventStore", "StoredEvents"], swiftSettings: strict),
        .target(name: "Interchange", dependencies: ["EventStore", "RecordedEvents", "MessagesModel", "StoredEvents"], swiftSettings: strict),
        .target(name: "Replay", dependencies: ["EventStore", "Projections", "RecordedEvents", "GameKit", "MessagesModel", "StoredEvents"], swiftSettings: strict),
        .target(
            name: "Audit",
            dependencies: ["EventStore", "Projections", "RecordedEvents", "StoredEvents", "Replay", "Rerun", "GameKit", "MessagesModel"],
            swiftSettings: strict),
        .target(name: "Rerun", dependencies: ["GameKit", "MessagesModel", "Projections", "RecordedEvents", "Replay", "EventLog"],
                swiftSettings: strict),
        .target(
            name: "Presentation",
            dependencies: ["EventStore", "GameKit", "MessagesModel", "Projections", "RecordedEvents", "Replay"],
            swiftSettings: strict),
        // What the viewer and the collector serve alike: start-up, tokens, loopback names.
        .target(
            name: "HTTPServing",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .target(
            name: "WebViewer",
            dependencies: [
                "Audit", "EventStore", "HTTPServing", "GameKit", "MessagesModel", "Presentation", "Projections", "RecordedEvents", "Replay", "Rerun",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: strict),
        .target(
            name: "Fork",
            dependencies: ["EventStore", "GameKit", "MessagesHost", "MessagesModel", "Projections", "RecordedEvents", "Recorder", "Replay", "Simulation"],
            swiftSettings: strict),
        // Accepts device logs over HTTP into the shared store and countersigns their heads.
        .target(
            name: "Collector",
            dependencies: [
                "EventStore", "HTTPServing", "Interchange", "Presentation", "SharedStore",
                // Its game summaries fold what it stored with the games it is given.
                "Replay", "GameKit", "MessagesModel", "StoredEvents",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // A witness that is not the operator: C2SP tlog-witness, holding one size and root per log.
        .target(
            name: "Witness",
            dependencies: [
                "EventLog", "HTTPServing",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // Reports fold what the recorder records with the projections, so they say what the log shows.
        .target(name: "Simulation", dependencies: ["MessagesHost", "MessagesModel", "GameKit", "Recorder", "EventStore", "Projections", "RecordedEvents"],
                swiftSettings: strict),
        .target(
            name: "GameKitTesting",
            dependencies: ["EventStore", "GameKit", "Interchange", "MessagesModel", "Projections", "RecordedEvents", "Recorder", "Replay", "Rerun",
                           "Simulation"],
            swiftSettings: strict),
        .target(
            name: "GamelogCLI",
            dependencies: [
                "EventStore", "Recorder", "StoredEvents", "Simulation", "RecordedEvents", "GameKit", "Games", "MessagesModel", "MessagesHost",
                // The demo plays the seeds' two games by name.
                "BattleshipGame", "TicTacToeGame",
                "ZlibCodec", "Projections", "Replay", "Interchange", "Audit", "Rerun", "Fork", "Presentation", "WebViewer",
                "SharedStore", "Collector", "Witness", "HTTPServing",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // The command: the library with the games gamelog ships.
        .executableTarget(name: "gamelog", dependencies: ["GamelogCLI", "Games"], swiftSettings: strict),

        // MARK: Tests
        .target(name: "TestSupport", dependencies: ["MessagesHost", "MessagesModel", "GameKit", "EventStore", "Interchange", "RecordedEvents",
                                                   "Games", "Recorder", "Simulation", "ZlibCodec", "SharedStore",
                                                   .product(name: "GRDB", package: "GRDB.swift")], path: "Tests/TestSupport",
                swiftSettings: strict),
        // A gamelog that knows Tic-tac-toe alone, as a developer's package with its own registry would build it.
        .executableTarget(name: "CustomGamelog", dependencies: ["GamelogCLI", "GameKit", "TicTacToeGame"],
                          path: "Tests/CustomGamelog", swiftSettings: strict),
        // A child process for the crash and contention tests: appends and says what it committed.
        .executableTarget(name: "StressAppender", dependencies: ["EventStore", "MessagesModel", "RecordedEvents"],
                          path: "Tests/StressAppender", swiftSettings: strict),
        .testTarget(name: "ZlibCodecTests", dependencies: ["ZlibCodec", "MessagesModel"], swiftSettings: strict),
        .testTarget(name: "GameConformanceTests",
                    dependencies: ["GameKitTesting", "GameKit", "BattleshipGame", "TicTacToeGame", "ConnectFourGame", "MessagesModel", "TestSupport"],
                    swiftSettings: strict),
        .testTarget(
            name: "EventStoreTests",
            dependencies: ["EventStore", "EventLog", "TestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
        .testTarget(name: "MessagesHostTests", dependencies: ["MessagesHost", "MessagesModel", "Games", "GameKit", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "BattleshipGameTests", dependencies: gameTest("BattleshipGame"), swiftSettings: strict),
        .testTarget(name: "TicTacToeGameTests", dependencies: gameTest("TicTacToeGame"), swiftSettings: strict),
        .testTarget(name: "StickerGameTests", dependencies: gameTest("StickerGame"), swiftSettings: strict),
        .testTarget(name: "APITourGameTests", dependencies: gameTest("APITourGame"), swiftSettings: strict),
        .testTarget(name: "ConnectFourGameTests", dependencies: gameTest("ConnectFourGame"), swiftSettings: strict),
        .testTarget(
            name: "RecordedEventsTests",
            dependencies: ["RecordedEvents", "MessagesModel", "Recorder", "Simulation", "EventStore", "Games", "GameKit", "StoredEvents",
                           "TestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "RecorderTests",
            dependencies: ["Recorder", "StoredEvents", "Simulation", "EventStore", "Games", "MessagesModel", "MessagesHost", "RecordedEvents", "TestSupport", "GameKit"],
            swiftSettings: strict),
        .testTarget(name: "ReplayTests", dependencies: shellTest, swiftSettings: strict),
        .testTarget(name: "AuditTests", dependencies: shellTest, swiftSettings: strict),
        .testTarget(name: "InterchangeTests", dependencies: shellTest, swiftSettings: strict),
        .testTarget(name: "ForkTests", dependencies: shellTest, swiftSettings: strict),
        .testTarget(
            name: "SharedStoreTests",
            dependencies: ["SharedStore", "Collector", "EventStore", "Interchange", "TestSupport", "Recorder", "Simulation", "Games", "Replay", "StoredEvents", "Projections", "WebViewer",
                           "MessagesModel", "Audit", .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
                           .product(name: "GRDB", package: "GRDB.swift"), .product(name: "PostgresNIO", package: "postgres-nio")],
            swiftSettings: strict),
        .testTarget(
            name: "WebViewerTests",
            dependencies: ["WebViewer", "HTTPServing", "Games", "GameKit", "EventStore", "MessagesModel", "Recorder", "Replay", "Simulation", "TestSupport", "Projections", "Audit",
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HummingbirdTesting", package: "hummingbird"),
                           .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        .testTarget(
            name: "CLITests",
            dependencies: ["gamelog", "CustomGamelog", "StressAppender", "TestSupport", "EventStore", "MessagesModel", "RecordedEvents", "Recorder", "StoredEvents",
                           "Replay", "Games", "GameKit", "Simulation", "Projections", "SharedStore",
                           .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strict),
    ]
)

/// A game's tests: its module, the host that plays it, and the shared test support.
func gameTest(_ module: String) -> [Target.Dependency] {
    [.target(name: module), "GameKit", "MessagesModel", "MessagesHost", "TestSupport", "Games", "Simulation", "Recorder", "EventStore",
     "Audit", "Replay", "Projections"]
}

/// What the shell's tests use: the modules over the store, a simulated world, and test support.
var shellTest: [Target.Dependency] {
    ["Replay", "Projections", "Presentation", "Simulation", "Recorder", "StoredEvents", "EventStore", "Interchange", "Audit", "RecordedEvents",
     "MessagesModel", "MessagesHost", "GameKit", "Games", "BattleshipGame", "TestSupport", "Rerun", "Fork", "ZlibCodec",
     .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Crypto", package: "swift-crypto")]
}
