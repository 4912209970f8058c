import Foundation
import PackagePlugin

/// Embeds the package's `Migrations/*.sql` files (`Migrations/postgres/*.sql` for SharedStore) into the target as Swift string
/// literals, so the binary carries its schema and the .sql files stay the single
/// source of truth.
@main
struct EmbedMigrations: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        // The shared store's schema is PostgreSQL's, in a folder of its own.
        let folder = context.package.directoryURL.appending(path: target.name == "SharedStore" ? "Migrations/postgres" : "Migrations")
        let files = try FileManager.default
            .contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) SQL migrations",
                executable: try context.tool(named: "MigrationEmbedder").url,
                arguments: [output.path, folder.path],
                // The folder itself too: adding a migration changes its modification
                // time, so the embedder runs again even when SwiftPM reuses this plan.
                inputFiles: files + [folder],
                outputFiles: [output])
        ]
    }
}
