// swift-tools-version:6.1
// gamelog's development tools, apart from the product: one benchmark executable with
// subcommands (`gamelog-bench`), the seeded fuzzer (`gamelog-fuzz`), both over gamelog's own
// library products, and a measurement of templates for the viewer (`gamelog-templates`).
// Build from here or with `--package-path tools/Benchmarks`.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6), .enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "gamelog-tools",
    platforms: [.macOS(.v13)],
    dependencies: [
        // Named, because a path dependency is otherwise known by its folder's name, which differs between clones.
        .package(name: "gamelog", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        // Only for gamelog-templates: measures templates against the viewer's HTML builder.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", exact: "2.1.1"),
    ],
    targets: [
        .target(name: "Measure", swiftSettings: strict),
        // The appending thread's allocations an event (issue 40): glibc's malloc wrapped in
        // the benchmark's executable, counting only while asked to.
        .target(name: "AllocationCount"),
        .executableTarget(
            name: "gamelog-bench",
            dependencies: [
                "Measure", "AllocationCount",
                .product(name: "EventStore", package: "gamelog"),
                .product(name: "Recorder", package: "gamelog"),
                .product(name: "StoredEvents", package: "gamelog"),
                .product(name: "RecordedEvents", package: "gamelog"),
                .product(name: "Interchange", package: "gamelog"),
                .product(name: "Simulation", package: "gamelog"),
                .product(name: "Games", package: "gamelog"),
                .product(name: "Replay", package: "gamelog"),
                .product(name: "Projections", package: "gamelog"),
                .product(name: "MessagesModel", package: "gamelog"),
                .product(name: "ZlibCodec", package: "gamelog"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "gamelog-fuzz",
            dependencies: [
                .product(name: "BattleshipGame", package: "gamelog"),
                .product(name: "TicTacToeGame", package: "gamelog"),
                .product(name: "ConnectFourGame", package: "gamelog"),
                .product(name: "MessagesModel", package: "gamelog"),
                .product(name: "RecordedEvents", package: "gamelog"),
                .product(name: "EventStore", package: "gamelog"),
                .product(name: "ZlibCodec", package: "gamelog"),
                .product(name: "Projections", package: "gamelog"),
                .product(name: "Witness", package: "gamelog"),
                // Only to change a block row in place, as a damaged or hostile file would have it.
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "gamelog-templates",
            dependencies: [.product(name: "Mustache", package: "swift-mustache"), .product(name: "WebViewer", package: "gamelog")],
            swiftSettings: strict),
    ]
)
