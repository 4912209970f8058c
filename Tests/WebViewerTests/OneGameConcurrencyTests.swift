import Foundation
import Games
import MessagesModel
import Projections
import Replay
import TestSupport
import Testing
import WebViewer

/// Issue 39, item 2: many requests for one game are served at once. The replayer's
/// caches are looked up under a lock and folds run outside it, so every answer given to
/// requests running together is the one a lone request gets.
@Suite struct OneGameConcurrencyTests {
    final class Answers: @unchecked Sendable {
        private let lock = NSLock()
        private var states: [Int: ConversationState] = [:]
        private var steps: [Int: [Int]] = [:]
        private var failed: [String] = []
        func add(_ key: Int, _ state: ConversationState) { lock.withLock { states[key] = state } }
        func add(_ key: Int, steps found: [Int]) { lock.withLock { steps[key] = found } }
        func fail(_ text: String) { lock.withLock { failed.append(text) } }
        var allStates: [Int: ConversationState] { lock.withLock { states } }
        var allSteps: [Int: [Int]] { lock.withLock { steps } }
        var failures: [String] { lock.withLock { failed } }
    }

    @Test func requestsForOneGameRunTogetherAndAgreeWithOneAtATime() throws {
        let folder = try TemporaryFolder()
        let path = try RouteTests.log(folder)
        let alone = try ViewerModel(path: path, games: .standard)
        let game = try #require(try alone.summaries().first { $0.kind == "battleship" })
        let (conversation, sessionFound) = try alone.resolve(game.id)
        let session = try #require(sessionFound)
        let views: [Perspective] = [.auditor, .device(DeviceID("A")), .device(DeviceID("B"))]
        // One at a time: the answers to hold the others to. A request is (view, step).
        var requests: [(view: Int, step: Int)] = []
        for (index, view) in views.enumerated() {
            for step in 0...(try alone.view(conversation, as: view).stepCount) { requests.append((index, step)) }
        }
        try #require(requests.count > 40)
        var expected: [Int: ConversationState] = [:]
        for (key, request) in requests.enumerated() { expected[key] = try alone.state(conversation, at: request.step, as: views[request.view]) }
        let expectedSteps = try views.map { try alone.steps(ofGame: session, in: conversation, as: $0) }

        // A fresh model, 16 workers at once over the same game, in different orders.
        let together = try ViewerModel(path: path, games: .standard)
        let answers = Answers(), asked = requests
        DispatchQueue.concurrentPerform(iterations: 16) { worker in
            let order = worker % 2 == 0 ? Array(asked.indices) : Array(asked.indices.reversed())
            for key in order where key % 4 == worker % 4 {
                do {
                    answers.add(key, try together.state(conversation, at: asked[key].step, as: views[asked[key].view]))
                    if key % 10 == 0 {
                        let view = asked[key].view
                        answers.add(view, steps: try together.steps(ofGame: session, in: conversation, as: views[view]))
                    }
                } catch {
                    answers.fail("\(asked[key]): \(error)")
                }
            }
        }
        #expect(answers.failures.isEmpty, "\(answers.failures.prefix(3))")
        let states = answers.allStates
        #expect(states.count == requests.count && states.allSatisfy { expected[$0.key] == $0.value })
        let steps = answers.allSteps
        #expect(!steps.isEmpty && steps.allSatisfy { expectedSteps[$0.key] == $0.value })
    }
}
