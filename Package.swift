// swift-tools-version:6.1
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "gamelog",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "gamelog", targets: ["gamelog"]),
        .library(name: "EventStore", targets: ["EventStore"]),
        .library(name: "MessagesModel", targets: ["MessagesModel"]),
        .library(name: "MessagesHost", targets: ["MessagesHost"]),
        .library(name: "GameRules", targets: ["GameRules"]),
        .library(name: "SeedExtensions", targets: ["SeedExtensions"]),
        .library(name: "RecordedEvents", targets: ["RecordedEvents"]),
        .library(name: "Recorder", targets: ["Recorder"]),
        .library(name: "Simulation", targets: ["Simulation"]),
        .library(name: "Projections", targets: ["Projections"]),
        .library(name: "Replay", targets: ["Replay"]),
        .library(name: "Interchange", targets: ["Interchange"]),
        .library(name: "Audit", targets: ["Audit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
    ],
    targets: [
        // MARK: Edges: zlib, SQLite
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        .target(name: "ZlibCodec", dependencies: ["CZlib"], swiftSettings: strict),
        .executableTarget(name: "MigrationEmbedder", swiftSettings: strict),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["MigrationEmbedder"]),
        .target(
            name: "EventStore",
            dependencies: [
                "ZlibCodec",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict,
            plugins: ["EmbedMigrations"]),

        // MARK: Functional core
        .target(name: "MessagesModel", swiftSettings: strict),
        .target(name: "MessagesHost", dependencies: ["MessagesModel"], swiftSettings: strict),
        .target(name: "GameRules", swiftSettings: strict),
        .target(name: "SeedExtensions", dependencies: ["MessagesModel", "GameRules"], swiftSettings: strict),
        .target(name: "RecordedEvents", dependencies: ["MessagesModel"], swiftSettings: strict),
        .target(name: "Projections", dependencies: ["MessagesModel", "GameRules", "RecordedEvents"], swiftSettings: strict),

        // MARK: Shell
        .target(name: "Recorder", dependencies: ["RecordedEvents", "MessagesHost", "EventStore"], swiftSettings: strict),
        .target(name: "Interchange", dependencies: ["EventStore", "RecordedEvents", "MessagesModel"], swiftSettings: strict),
        .target(name: "Replay", dependencies: ["EventStore", "Projections", "RecordedEvents", "GameRules"], swiftSettings: strict),
        .target(
            name: "Audit",
            dependencies: ["EventStore", "Projections", "RecordedEvents", "Replay", "GameRules", "MessagesModel"],
            swiftSettings: strict),
        .target(
            name: "TamperKit",
            dependencies: ["EventStore", "Interchange", "RecordedEvents", "MessagesModel", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        .executableTarget(
            name: "TamperCorpus",
            dependencies: ["TamperKit", "EventStore", "Recorder", "Simulation"],
            swiftSettings: strict),
        .target(name: "Simulation", dependencies: ["MessagesHost", "SeedExtensions", "Recorder"], swiftSettings: strict),
        .executableTarget(
            name: "gamelog",
            dependencies: [
                "EventStore", "Recorder", "Simulation", "RecordedEvents", "GameRules", "ZlibCodec", "Projections", "Replay", "Interchange", "Audit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),

        .executableTarget(
            name: "StoreBenchmark",
            dependencies: ["EventStore", "Recorder", "Simulation", "ZlibCodec", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),

        .executableTarget(
            name: "Benchmark",
            dependencies: [
                "EventStore", "Replay", "MessagesModel",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict),

        .executableTarget(
            name: "ReplayBenchmark",
            dependencies: ["EventStore", "Replay", "Projections", "MessagesModel"],
            swiftSettings: strict),

        .executableTarget(
            name: "StressAppender",
            dependencies: ["EventStore", "MessagesModel", "RecordedEvents"],
            swiftSettings: strict),

        .executableTarget(
            name: "Fuzz",
            dependencies: ["GameRules", "MessagesModel", "RecordedEvents", "ZlibCodec"],
            swiftSettings: strict),

        // MARK: Tests
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "ZlibCodecTests", dependencies: ["ZlibCodec"], swiftSettings: strict),
        .testTarget(
            name: "EventStoreTests",
            dependencies: ["EventStore", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        .testTarget(name: "MessagesHostTests", dependencies: ["MessagesHost", "SeedExtensions"], swiftSettings: strict),
        .testTarget(name: "GameRulesTests", dependencies: ["GameRules"], swiftSettings: strict),
        .testTarget(name: "SeedExtensionsTests", dependencies: ["SeedExtensions", "MessagesHost"], swiftSettings: strict),
        .testTarget(
            name: "RecordedEventsTests",
            dependencies: ["RecordedEvents", "MessagesModel", "Recorder", "Simulation", "EventStore"],
            swiftSettings: strict),
        .testTarget(name: "RecorderTests", dependencies: ["Recorder", "Simulation", "EventStore"], swiftSettings: strict),
        .testTarget(
            name: "ReplayTests",
            dependencies: ["Replay", "Projections", "Simulation", "Recorder", "EventStore", "Interchange", "Audit", "RecordedEvents", "MessagesModel", "TamperKit", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        .testTarget(
            name: "CLITests",
            dependencies: ["gamelog", "StressAppender", "Fuzz", "TestSupport", "EventStore", "MessagesModel", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
    ]
)
