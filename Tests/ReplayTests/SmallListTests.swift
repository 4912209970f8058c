@testable import Projections
import Testing

/// The fold's small lists: the first two elements inline, then an array, in the order
/// appended, each once where asked.
@Suite struct SmallListTests {
    @Test func holdsEveryElementInOrderPastItsInlineTwo() {
        for count in 0...6 {
            var list = SmallList<Int>()
            for n in 0..<count { list.append(n * 10) }
            var seen: [Int] = []
            list.forEach { seen.append($0) }
            #expect(seen == (0..<count).map { $0 * 10 }, "\(count) elements")
            #expect(list.isEmpty == (count == 0))
            #expect((0..<count).allSatisfy { list.contains($0 * 10) } && !list.contains(5))
        }
    }

    @Test func appendsOnlyWhatItDoesNotHold() {
        var list = SmallList<String>()
        for name in ["a", "b", "a", "c", "b", "d", "c"] { list.appendIfAbsent(name) }
        var seen: [String] = []
        list.forEach { seen.append($0) }
        #expect(seen == ["a", "b", "c", "d"])
    }
}
