// swift-tools-version:6.1
import PackageDescription

// A game of your own, in a package of your own: Codebreaker (a three-colour Mastermind
// with a secret), written only against gamelog's public products, and a gamelog that
// knows it. Build it with `swift build`; `swift run codebreaker-gamelog --help`.
let package = Package(
    name: "Codebreaker",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "Codebreaker", targets: ["Codebreaker"]),
        .executable(name: "codebreaker-gamelog", targets: ["codebreaker-gamelog"]),
    ],
    dependencies: [
        // gamelog itself, by path; from elsewhere: .package(url: "<gamelog's repository>", exact: "<version>").
        .package(name: "gamelog", path: "../.."),
    ],
    targets: [
        // The game: its rules, stated once, against GameKit and the Messages model alone.
        .target(name: "Codebreaker", dependencies: [.product(name: "GameKit", package: "gamelog"), .product(name: "MessagesModel", package: "gamelog")],
                swiftSettings: [.swiftLanguageMode(.v6)]),
        // The whole gamelog command and viewer, knowing Codebreaker too: three lines.
        .executableTarget(
            name: "codebreaker-gamelog",
            dependencies: [
                "Codebreaker",
                .product(name: "GamelogCLI", package: "gamelog"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]),
        // The README's library tour, verbatim (tools/check-readme.sh keeps them equal).
        .executableTarget(
            name: "library-tour",
            dependencies: [
                .product(name: "EventStore", package: "gamelog"),
                .product(name: "Games", package: "gamelog"),
                .product(name: "Recorder", package: "gamelog"),
                .product(name: "Replay", package: "gamelog"),
                .product(name: "Simulation", package: "gamelog"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]),
        .testTarget(
            name: "CodebreakerTests",
            dependencies: [
                "Codebreaker", "codebreaker-gamelog", "library-tour",
                .product(name: "GameKit", package: "gamelog"),
                .product(name: "GameKitTesting", package: "gamelog"),
                .product(name: "MessagesModel", package: "gamelog"),
                // To record logs for the command to read: a simulated world and the SQLite store.
                .product(name: "Simulation", package: "gamelog"),
                .product(name: "Recorder", package: "gamelog"),
                .product(name: "EventStore", package: "gamelog"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]),
    ]
)
