// Whether the viewer's pages should come from Mustache templates (swift-mustache, which the
// guide names for the viewer) or stay built by the viewer's `HTML` interpolation (which
// escapes everything interpolated unless it is HTML already): one game page's step list,
// 150 rows, rendered both ways, rows per second. The viewer serves about 700 pages a
// second on this machine, each with such a list: a renderer that costs more than the
// page's other work decides the question by itself.
//
//   swift run -c release --package-path tools/Benchmarks gamelog-templates [ROUNDS=2000]
import Foundation
import Mustache
import WebViewer

struct Row {
    let step: Int
    let device: String
    let label: String
    let classes: String
    let link: String
    let current: Bool
}

let rows = (1...150).map { n in
    Row(step: n, device: n % 2 == 0 ? "A" : "B", label: n % 5 == 0 ? "sent \u{201C}Alice's turn <3\u{201D}" : "callback.didSelect",
        classes: "step d\(n % 2)\(n % 7 == 0 ? " move" : "")", link: "/games/1f76f014?step=\(n)&as=auditor", current: n == 40)
}
let rounds = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 2_000 : 2_000

/// The list as the viewer writes it: its `HTML` type escapes everything interpolated.
func interpolated() -> String {
    var out: HTML = "<ol id=stepList>"
    for row in rows {
        let id: HTML = row.current ? " id=currentStep" : ""
        out += "<li class=\"\(row.classes + (row.current ? " current" : ""))\" data-step=\(row.step)\(id)><a href=\"\(row.link)\">\(row.step) · \(row.device) · \(row.label)</a></li>"
    }
    return (out + "</ol>").description
}

let template = try MustacheTemplate(string: """
    <ol id=stepList>{{#rows}}<li class="{{classes}}{{#current}} current{{/current}}" data-step={{step}}{{#current}} id=currentStep{{/current}}><a href="{{link}}">{{step}} · {{device}} · {{label}}</a></li>{{/rows}}</ol>
    """)

func mirrored() -> String { template.render(["rows": rows]) }

func dictionaries() -> String {
    template.render(["rows": rows.map { ["step": $0.step, "device": $0.device, "label": $0.label, "classes": $0.classes,
                                          "link": $0.link, "current": $0.current] as [String: Any] }])
}

// The same page all three ways (Mustache writes `'` as `&#39;` too).
let reference = interpolated()
guard mirrored() == reference, dictionaries() == reference else {
    print("the renderings differ:\n\(reference.prefix(400))\n\(mirrored().prefix(400))")
    exit(1)
}

func measure(_ name: String, _ body: () -> String) -> Double {
    var bytes = 0
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<rounds { bytes += body().utf8.count }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let perList = seconds / Double(rounds) * 1e6
    print("\(name.padding(toLength: 36, withPad: " ", startingAt: 0)) \(String(format: "%8.1f", perList)) us a list of 150 rows"
          + "  (\(String(format: "%.0f", Double(rounds * rows.count) / seconds)) rows/s, \(bytes / rounds) bytes)")
    return perList
}
let base = measure("HTML interpolation (the viewer's)", interpolated)
let viaMirror = measure("Mustache, rows as structs (Mirror)", mirrored)
let viaDictionary = measure("Mustache, rows as dictionaries", dictionaries)
print(String(format: "Mustache costs %.1fx (structs) and %.1fx (dictionaries) the viewer's interpolation", viaMirror / base, viaDictionary / base))
