#!/usr/bin/env bash
# Drives headless Chromium over `gamelog serve` on a demo database, as a person would
# look at it: the games page, both games step by step from each device's view and the
# auditor's. Checks what the pages show (the DOM after scripts ran), keeps a screenshot
# of each in out/screenshots/, and checks the database is byte-identical afterwards
# with nothing created beside it. Usage: tools/browser-test.sh [GAMELOG-BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
binary=${1:-}
if [ -z "$binary" ]; then
  swift build --product gamelog >/dev/null
  binary="$root/.build/debug/gamelog"
fi
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "error: no chromium; install Debian's chromium package" >&2; exit 1; }

work=$(mktemp -d)
shots="$root/out/screenshots"
mkdir -p "$shots"
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cd "$work"
export GAMELOG_KEYS="$work/keys"
"$binary" demo --fixed-clock >/dev/null
before=$(sha256sum gamelog.sqlite)
"$binary" serve --port 0 > serve.out 2>&1 &
server=$!
for _ in $(seq 1 100); do grep -q "http://" serve.out 2>/dev/null && break; sleep 0.1; done
base=$(grep -o 'http://[^/]*' serve.out | head -n 1)
[ -n "$base" ] || { echo "error: gamelog serve did not start: $(cat serve.out)" >&2; exit 1; }

games=$(curl -s "$base/api/games")
battleship=$(python3 -c 'import json,sys; print(next(g["id"] for g in json.loads(sys.argv[1]) if g["kind"]=="battleship"))' "$games")
tictactoe=$(python3 -c 'import json,sys; print(next(g["id"] for g in json.loads(sys.argv[1]) if g["kind"]=="tictactoe"))' "$games")

# The audit runs in the background from startup: wait until the list shows its verdicts.
for _ in $(seq 1 100); do curl -s "$base/games" | grep -q 'checking…' || break; sleep 0.1; done

passed=0 failed=0
# page NAME URL: the DOM after scripts, and a screenshot.
page() {
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --virtual-time-budget=2000 \
    --dump-dom "$2" 2>/dev/null > "$work/$1.html"
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1100 \
    --screenshot="$shots/$1.png" "$2" >/dev/null 2>&1
}
check() { # check NAME DESCRIPTION (grep -q PATTERN | ! grep -q PATTERN)...
  local name=$1 what=$2; shift 2
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $name: $what"; fi
}
has() { grep -q -- "$2" "$work/$1.html"; }
lacks() { ! grep -q -- "$2" "$work/$1.html"; }

page games "$base/games"
check games "both games are listed" has games "${battleship:0:8}"
check games "tic-tac-toe is listed" has games "${tictactoe:0:8}"
check games "the audit ran" has games 'class="ok">ok<\|class=ok>ok<'

# A game's page is the game (issue 39, item 4): it opens at the game's first step and
# lists the game's own steps; the whole conversation is one link away.
page battleship-opened "$base/games/$battleship"
opened_at=$(grep -o 'data-step="[0-9]*"' "$work/battleship-opened.html" | head -1 | grep -o '[0-9]*')
last_step=$(grep -o 'data-steps="[0-9]*"' "$work/battleship-opened.html" | head -1 | grep -o '[0-9]*')
own_rows=$(grep -o '<li class="step' "$work/battleship-opened.html" | wc -l)
check battleship-opened "it opens at the game's first step, not its last" test "${opened_at:-0}" -ge 1 -a "${opened_at:-0}" -lt "${last_step:-0}"
check battleship-opened "it says whose steps it lists, with the way to the rest" has battleship-opened 'show the whole conversation'
# Without scripts every control still moves: the arrows are links, the slider a form.
check battleship-opened "without scripts, ▶▶ is a link to the next step" has battleship-opened "id=\"next\" href=\"/games/$battleship?step=$((opened_at + 1))"
check battleship-opened "and the slider is a form" has battleship-opened 'name="step"'
page battleship-whole "$base/games/$battleship?whole=1"
whole_rows=$(grep -o '<li class="step' "$work/battleship-whole.html" | wc -l)
check battleship-whole "the whole conversation lists more steps than the game's own" test "$own_rows" -gt 0 -a "$whole_rows" -gt "$own_rows"
check battleship-whole "and links back to the game's own" has battleship-whole "show this game's steps"

page battleship-auditor "$base/games/$battleship?step=$last_step&as=auditor"
check battleship-auditor "the board shows a hit" has battleship-auditor 'cell hit'
check battleship-auditor "the board shows a miss" has battleship-auditor 'cell miss'
check battleship-auditor "both phones" has battleship-auditor 'data-device="B"'
check battleship-auditor "the timeline" has battleship-auditor 'id="slider"'
# Accessible names (issue 39, item 7): the slider and the arrow buttons say what they are.
check battleship-auditor "the slider has a name" has battleship-auditor 'aria-label="step"'
check battleship-auditor "the arrow buttons have names" has battleship-auditor 'aria-label="previous step"'
check battleship-auditor "the replaced bubble is a summary line" has battleship-auditor 'bubble summary'

page battleship-B-step2 "$base/games/$battleship?step=2&as=B"
check battleship-B-step2 "Bob sees no ship before the placement arrives" lacks battleship-B-step2 'cell ship'
check battleship-B-step2 "Alice's events are not there, not even as 'acted'" lacks battleship-B-step2 'acted'
check battleship-B-step2 "no phone of Alice's" lacks battleship-B-step2 'data-device="A"'

b_last=$(curl -s "$base/games/$battleship?as=B" | grep -o 'data-steps="[0-9]*"' | grep -o '[0-9]*')
page battleship-B-end "$base/games/$battleship?step=$b_last&as=B"
check battleship-B-end "Bob's board has his hits" has battleship-B-end 'cell hit'
check battleship-B-end "Bob never sees the ships he did not hit" lacks battleship-B-end 'title="ship"'

# Every step as Bob, in the DOM after scripts: no placement URL (the ships he has not hit)
# anywhere on the page (board, phones, payload panel, diff, findings) before the result.
# Bob's steps are his own events: the page's slider says how many.
steps=$(curl -s "$base/games/$battleship?as=B" | grep -o 'data-steps="[0-9]*"' | grep -o '[0-9]*')
leaks=0 looked=0
for step in $(seq 1 "$steps"); do
  "$browser" --headless --no-sandbox --disable-gpu --virtual-time-budget=1000 \
    --dump-dom "$base/games/$battleship?step=$step&as=B" 2>/dev/null > "$work/b-step.html"
  grep -q 'data-device="B"\|no game yet' "$work/b-step.html" && looked=$((looked + 1))
  grep -q 'Is_Complete=0' "$work/b-step.html" && { leaks=$((leaks + 1)); echo "  step $step as B shows the placement URL"; }
done
check battleship-B-every-step "Bob's page shows no placement URL at any of the $steps steps" test "$leaks" = 0
check battleship-B-every-step "every step's page was read" test "$looked" = "$steps" -a "$steps" -gt 10

# Keys and clicks as a person uses them (tools/browser-keys.py speaks the DevTools
# protocol): steps, moves and findings by key, the step list's filters, the help, the
# view switch; each line is a check.
while read -r verdict rest; do
  case "$verdict" in
    ok) passed=$((passed + 1)) ;;
    *) failed=$((failed + 1)); echo "FAIL keys: $rest" ;;
  esac
done < <(python3 "$root/tools/browser-keys.py" "$browser" "$base" "$battleship" "$work" || true)

page battleship-A-step20 "$base/games/$battleship?step=20&as=A"
check battleship-A-step20 "Alice sees the ships she placed" has battleship-A-step20 'title="ship"'

page tictactoe-step40 "$base/games/$tictactoe?step=40&as=auditor"
check tictactoe-step40 "marks on the board" has tictactoe-step40 'cell x'
check tictactoe-step40 "the event at the step" has tictactoe-step40 'id="payload"'

t_last=$(curl -s "$base/games/$tictactoe?as=B" | grep -o 'data-steps="[0-9]*"' | grep -o '[0-9]*')
page tictactoe-B-end "$base/games/$tictactoe?step=$t_last&as=B"
check tictactoe-B-end "X won, as Bob saw" has tictactoe-B-end 'X (Alice) won'

page not-found "$base/games/ffffffff"
check not-found "an unknown game is a page that says so" has not-found 'no game or conversation id starts with'

kill "$server"; wait "$server" 2>/dev/null || true; server=""
after=$(sha256sum gamelog.sqlite)
check database "the database is byte-identical after serving" test "$before" = "$after"
check database "serving created no file beside the database" test "$(ls | grep -c '^gamelog.sqlite')" = 1

# A log handed over by someone hostile: Alice's name is markup whose error handler
# retitles the page, device A's name is a script element. The viewer must show both as
# text: no element made from them, no script run.
"$binary" export > clean.jsonl 2>/dev/null
python3 - clean.jsonl hostile.jsonl <<'PY'
import json, sys
alice = "<img src=x onerror=\"document.title='pwned'\">"
device = "<script>document.title='pwned'</script>"
with open(sys.argv[1]) as source, open(sys.argv[2], "w") as out:
    for line in source:
        event = json.loads(line)
        if "id" not in event:
            continue  # tree and head lines: the rewritten log is unsigned
        payload = json.loads(event["payload"])
        if event["type"] == "recording.started":
            payload["names"] = {k: alice if name == "Alice" else name for k, name in payload["names"].items()}
            if payload["device"] == "A":
                payload["device"] = device
        event["payload"] = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        for key in ("leaf", "streamHash"):
            event.pop(key, None)
        out.write(json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n")
PY
"$binary" import --db hostile.sqlite hostile.jsonl >/dev/null
serve_log() { # serve_log FILE: starts the viewer on FILE, sets base, waits for the verdicts
  "$binary" serve --db "$1" --port 0 > "serve-$1.out" 2>&1 &
  server=$!
  for _ in $(seq 1 100); do grep -q "http://" "serve-$1.out" 2>/dev/null && break; sleep 0.1; done
  base=$(grep -o 'http://[^/]*' "serve-$1.out" | head -n 1)
  for _ in $(seq 1 300); do curl -s "$base/games" | grep -q 'checking…\|checking games:\|checking</span>' || break; sleep 0.1; done
}
serve_log hostile.sqlite
hostile=$(curl -s "$base/api/games" | python3 -c 'import json,sys; print(next(g["id"] for g in json.load(sys.stdin) if g["kind"]=="tictactoe"))')
page hostile-games "$base/games"
check hostile-games "the device's markup name is shown as text" has hostile-games "&lt;script&gt;document.title='pwned'&lt;/script&gt;="
check hostile-games "no script from the log ran" lacks hostile-games '<title>pwned'
page hostile-game "$base/games/$hostile?step=30&as=B"
check hostile-game "Alice's name is text in Bob's transcript" has hostile-game '&lt;img src=x onerror="document.title='
check hostile-game "no image element was made from it" lacks hostile-game '<img'
check hostile-game "no script from the log ran" lacks hostile-game '<title>pwned'
check hostile-game "the view switch names the device as text" has hostile-game 'device &lt;script&gt;'
headers=$(curl -s -D - -o /dev/null "$base/games")
check hostile-game "the pages forbid inline script" grep -qi "content-security-policy: default-src 'none'; script-src 'self'" <<< "$headers"
check hostile-game "another Host gets nothing" test "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: rebound.example' "$base/api/games")" = 421

kill "$server"; wait "$server" 2>/dev/null || true; server=""

# A damaged log and a tampered one, as a disputed game may arrive: every page still
# answers, the damaged game says where its damage is, and the tampered one is an error
# on the list, on its page and in the whole log's checks.
first_of() { python3 -c 'import json,sys; print(next(g["firstPosition"] for g in json.loads(sys.argv[1]) if g["kind"]==sys.argv[2]))' "$games" "$1"; }
last_of() { python3 -c 'import json,sys; print(next(g["lastPosition"] for g in json.loads(sys.argv[1]) if g["kind"]==sys.argv[2]))' "$games" "$1"; }

cp gamelog.sqlite damaged.sqlite
damaged_at=$(( $(first_of tictactoe) + 3 ))
"$root/tools/forge_block.py" garble damaged.sqlite "$damaged_at"
serve_log damaged.sqlite
page damaged-games "$base/games"
check damaged-games "both games are still listed" has damaged-games "${battleship:0:8}"
check damaged-games "the damaged game is listed" has damaged-games "${tictactoe:0:8}"
check damaged-games "its verdict says where the damage is" has damaged-games "damaged at position $damaged_at"
page damaged-game "$base/games/$tictactoe"
check damaged-game "the damaged game's page shows, the damage named" has damaged-game 'id="damaged"'
check damaged-game "with its position" has damaged-game "position $damaged_at"
check damaged-game "and its steps" has damaged-game 'id="stepList"'
page damaged-other "$base/games/$battleship?step=$last_step&as=auditor"
check damaged-other "the other game's page shows as before" has damaged-other 'cell hit'
check damaged-other "with no damage" lacks damaged-other 'id="damaged"'
check damaged-game "its verdict by the API is not ok" grep -q '"ok" *: *false' <<< "$(curl -s "$base/api/verify/$tictactoe")"
kill "$server"; wait "$server" 2>/dev/null || true; server=""

# Tampered: two events of one recording swap their contents (each still reads).
cp gamelog.sqlite tampered.sqlite
pair=$("$root/tools/forge_block.py" pair tampered.sqlite "$(first_of battleship)" "$(last_of battleship)")
read -r one two <<< "$pair"
"$root/tools/forge_block.py" swap tampered.sqlite "$one" "$two"
check tampered "the tampered copy differs from the clean log at two events" test \
  "$("$root/tools/forge_block.py" differ tampered.sqlite gamelog.sqlite)" = 2
serve_log tampered.sqlite
page tampered-games "$base/games"
check tampered-games "the tampered game is an error on the list" has tampered-games 'class="bad">[0-9]* error'
check tampered-games "the whole log's checks say the chain is broken" has tampered-games "the whole log's chain, signatures and catalog: [0-9]* error"
check tampered-games "the untouched game stays ok" has tampered-games 'class="ok">ok<'
page tampered-game "$base/games/$battleship?as=auditor"
check tampered-game "its timeline marks are out of the tab order (the findings list links them)" has tampered-game 'tabindex="-1" aria-hidden="true"'
check tampered-game "the tampered game's page says verify failed" has tampered-game 'verify: [0-9]* errors\?'
check tampered-game "its findings are listed" has tampered-game 'id="findings"'
kill "$server"; wait "$server" 2>/dev/null || true; server=""
check tampered "serving left the tampered copy as it was" test "$("$root/tools/forge_block.py" differ tampered.sqlite gamelog.sqlite)" = 2

# Following a log being written (issue 39, item 5): half of the demo's events (unsigned),
# `serve --follow`, then the rest appended by another process while a page of the game that
# is still in progress is open at its last step; the page follows to the new last step
# without a page load, and the games list's stream says the log grew.
"$binary" export --db gamelog.sqlite > all.jsonl 2>/dev/null
python3 - <<'PY'
import json
events = [e for e in (json.loads(l) for l in open("all.jsonl")) if "streamVersion" in e]
for e in events:
    e.pop("leaf", None)
open("unsigned.jsonl", "w").write("".join(json.dumps(e) + "\n" for e in events))
open("part.jsonl", "w").write("".join(json.dumps(e) + "\n" for e in events[:len(events) // 2]))
PY
"$binary" import --db growing.sqlite part.jsonl >/dev/null 2>&1
"$binary" serve --db growing.sqlite --follow --port 0 > serve-growing.out 2>&1 &
server=$!
for _ in $(seq 1 100); do grep -q "http://" serve-growing.out 2>/dev/null && break; sleep 0.1; done
base=$(grep -o 'http://[^/]*' serve-growing.out | head -n 1)
check follow "serve --follow says it follows" grep -q "following it as it grows" serve-growing.out
growing=$(curl -s "$base/api/games" | python3 -c 'import json,sys; print(next(g["id"] for g in json.load(sys.stdin) if g["status"]!="finished"))')
while read -r verdict rest; do
  case "$verdict" in
    ok) passed=$((passed + 1)) ;;
    *) failed=$((failed + 1)); echo "FAIL follow: $rest" ;;
  esac
done < <(python3 "$root/tools/browser-keys.py" --follow "$browser" "$base" "$growing" "$work" "$binary" growing.sqlite unsigned.jsonl || true)
kill "$server"; wait "$server" 2>/dev/null || true; server=""

echo "screenshots in out/screenshots/: $(ls "$shots" | tr '\n' ' ')"
echo "browser test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
