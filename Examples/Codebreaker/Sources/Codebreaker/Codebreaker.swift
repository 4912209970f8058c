import GameKit
import MessagesModel

/// Codebreaker: a three-colour Mastermind played in Messages.
///
/// The code maker sets a secret code of four pegs (red, green or blue); the code breaker
/// then guesses, and each guess is answered with how many pegs are right in colour and
/// place (exact) and how many more are right in colour only (near). Breaking the code
/// within six guesses wins for the breaker; otherwise the maker wins.
///
/// Every message carries the whole position, code included (so the breaker's extension
/// can score a guess), which is the game's secret: the breaker's view hides the code
/// until the game is over, and gamelog hides it on every surface it shows the breaker.
public struct Codebreaker: GameRules {
    public static let colours = ["red", "green", "blue"]
    public static let pegs = 4
    public static let maximumGuesses = 6

    /// The gamelog plug-in: everything from these rules.
    public static let game = RulesGame(Codebreaker())

    /// When set, guesses are scored one exact peg too generously: a client that
    /// cheats, for the audit to catch.
    public var generousScoring: Bool

    public init(generousScoring: Bool = false) { self.generousScoring = generousScoring }

    /// A guess and its score.
    public struct Guess: Hashable, Codable, Sendable {
        public var pegs: [Int]
        public var exact: Int
        public var near: Int

        public init(pegs: [Int], exact: Int, near: Int) {
            self.pegs = pegs
            self.exact = exact
            self.near = near
        }
    }

    public struct State: Hashable, Codable, Sendable {
        /// The secret, once set; nil before, or in a view that hides it.
        public var code: [Int]?
        public var codeSet = false
        public var guesses: [Guess] = []
    }

    public enum Move: Hashable, Sendable {
        case setCode([Int])
        case guess([Int])
    }

    public var kind: String { "codebreaker" }
    public var title: String { "Codebreaker" }
    public var seats: [String] { ["code maker", "code breaker"] }
    public var boardColumns: Int { Self.pegs }

    public func setup() -> State { State() }

    public func seatToMove(in state: State) -> Int? {
        if !state.codeSet { return 0 }
        return outcome(of: state) == nil ? 1 : nil
    }

    public func lastMover(in state: State) -> Int? {
        state.codeSet ? (state.guesses.isEmpty ? 0 : 1) : nil
    }

    public func moveCount(in state: State) -> Int { (state.codeSet ? 1 : 0) + state.guesses.count }

    public func legalMoves(in state: State) -> [Move] {
        guard let seat = seatToMove(in: state) else { return [] }
        return Self.allCodes.map { seat == 0 ? .setCode($0) : .guess($0) }
    }

    public func play(_ move: Move, in state: State) throws(IllegalMove) -> State {
        var next = state
        switch (move, seatToMove(in: state)) {
        case (.setCode(let code), 0?):
            guard Self.isCode(code) else { throw IllegalMove("a code is \(Self.pegs) pegs of \(Self.colours.joined(separator: ", "))") }
            next.code = code
            next.codeSet = true
        case (.guess(let pegs), 1?):
            guard Self.isCode(pegs) else { throw IllegalMove("a guess is \(Self.pegs) pegs of \(Self.colours.joined(separator: ", "))") }
            guard let code = state.code else { throw IllegalMove("the code is hidden in this view") }
            var score = Self.score(pegs, against: code)
            if generousScoring, score.exact < Self.pegs { score.exact += 1 }
            next.guesses.append(Guess(pegs: pegs, exact: score.exact, near: score.near))
        default:
            throw IllegalMove("it is not that move's turn")
        }
        return next
    }

    public func outcome(of state: State) -> GameOutcome? {
        if state.guesses.last?.exact == Self.pegs { return .won(seat: 1) }
        if state.guesses.count >= Self.maximumGuesses { return .won(seat: 0) }
        return nil
    }

    /// The breaker (and anyone who plays no seat) sees the code only once the game is over.
    public func view(of state: State, forSeat seat: Int?) -> State {
        guard seat != 0, outcome(of: state) == nil, state.code != nil else { return state }
        var view = state
        view.code = nil
        return view
    }

    public func secrets(of state: State, hiddenFromSeat seat: Int?) -> [String] {
        guard seat != 0, outcome(of: state) == nil, let code = state.code else { return [] }
        return ["code=" + Self.letters(code)]
    }

    public func input(for move: Move, in state: State) -> [Touch] {
        switch move {
        case .setCode(let pegs), .guess(let pegs): return pegs.map { .button(Self.colours[$0]) }
        }
    }

    public func picture(of state: State) -> BoardPicture {
        let code = state.code.map { $0.map { Self.colours[$0] } } ?? Array(repeating: "empty", count: Self.pegs)
        var cells = code
        var lines = [state.code == nil && state.codeSet ? "the code is hidden" : state.codeSet ? "the code" : "no code yet"]
        for (number, guess) in state.guesses.enumerated() {
            cells += guess.pegs.map { Self.colours[$0] }
            lines.append("guess \(number + 1): \(guess.exact) exact, \(guess.near) near")
        }
        return BoardPicture(cells: cells, columns: Self.pegs, lines: lines)
    }

    /// The URL holds the code (or `hidden`) and each guess as `<pegs>-<exact><near>`:
    /// `?code=RGBR&guess=RGGB-21`. The caption says where the game stands.
    public func face(of state: State) -> MessageFace {
        var items = [("code", state.code.map(Self.letters) ?? (state.codeSet ? "hidden" : "none"))]
        items += state.guesses.map { ("guess", "\(Self.letters($0.pegs))-\($0.exact)\($0.near)") }
        let caption: String
        switch outcome(of: state) {
        case .won(seat: 1)?: caption = "Broken in \(state.guesses.count)!"
        case .won?: caption = "Unbroken after \(Self.maximumGuesses) guesses"
        case .draw?, nil:
            caption = state.guesses.last.map { "Guess \(state.guesses.count): \($0.exact) exact, \($0.near) near" }
                ?? "A code is set: break it in \(Self.maximumGuesses)"
        }
        return MessageFace(url: QueryURL.encode(base: "", items: items), caption: caption,
                           image: MessageImage(kind: "codebreaker-guesses", cells: state.guesses.flatMap { $0.pegs.map { Self.colours[$0] } }))
    }

    public func state(from message: Message) throws(UnreadableMessage) -> State {
        guard let url = message.url else { throw UnreadableMessage("the message has no URL") }
        let parsed: QueryURL
        switch QueryURL.parse(url) {
        case .success(let value): parsed = value
        case .failure(let failure): throw UnreadableMessage(failure.description)
        }
        guard let first = parsed.items.first, first.name == "code", let code = first.value else {
            throw UnreadableMessage("the URL does not start with code=")
        }
        var state = State()
        switch code {
        case "none": break
        case "hidden": state.codeSet = true
        default:
            guard let pegs = Self.pegs(code) else { throw UnreadableMessage("the code '\(code)' is not \(Self.pegs) of R, G, B") }
            state.code = pegs
            state.codeSet = true
        }
        for item in parsed.items.dropFirst() {
            let parts = (item.value ?? "").split(separator: "-")
            guard item.name == "guess", state.codeSet, parts.count == 2, let pegs = Self.pegs(String(parts[0])),
                  parts[1].count == 2, let exact = Int(String(parts[1].prefix(1))), let near = Int(String(parts[1].suffix(1))) else {
                throw UnreadableMessage("'\(item.name)=\(item.value ?? "")' is not a scored guess")
            }
            state.guesses.append(Guess(pegs: pegs, exact: exact, near: near))
        }
        guard state.guesses.count <= Self.maximumGuesses else { throw UnreadableMessage("more than \(Self.maximumGuesses) guesses") }
        return state
    }

    // MARK: Scoring and spelling

    /// Exact: right colour in the right place. Near: right colour elsewhere, each code peg counted once.
    public static func score(_ guess: [Int], against code: [Int]) -> (exact: Int, near: Int) {
        let exact = zip(guess, code).filter { $0 == $1 }.count
        let common = colours.indices.reduce(0) { sum, colour in
            sum + min(guess.filter { $0 == colour }.count, code.filter { $0 == colour }.count)
        }
        return (exact, common - exact)
    }

    static let allCodes: [[Int]] = (0..<81).map { n in [n / 27 % 3, n / 9 % 3, n / 3 % 3, n % 3] }

    static func isCode(_ pegs: [Int]) -> Bool { pegs.count == Self.pegs && pegs.allSatisfy(colours.indices.contains) }

    static func letters(_ pegs: [Int]) -> String { String(pegs.map { Array("RGB")[$0] }) }

    static func pegs(_ letters: String) -> [Int]? {
        let pegs = letters.compactMap { "RGB".firstIndex(of: $0).map { "RGB".distance(from: "RGB".startIndex, to: $0) } }
        return pegs.count == Self.pegs && letters.count == Self.pegs ? pegs : nil
    }
}
