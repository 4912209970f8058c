#!/usr/bin/env bash
# Issue 14's "linear everything": the commands that read or write a whole log, timed
# against their plain counterparts and at two sizes, with peak anonymous memory.
#   log --json      within 1.5x of log
#   export --redact within 3x of export
#   import, index   time per event at the big size within 2x of the small size (linear),
#                   peak anonymous memory within 1.5x (flat)
# Usage: tools/linear.sh [SMALL-GAMES] [BIG-GAMES]   (defaults 20 and 2,000: about 2,500 and
#        250,000 events). Exit 1 when a target is missed.
set -euo pipefail
cd "$(dirname "$0")/.."
small=${1:-20}
big=${2:-2000}
folder=.build/linear
source tools/simulated-logs.sh
build_gamelog
simulated_log "$folder" "$small"
simulated_log "$folder" "$big"
python3 - "$gamelog" "$folder" "$small" "$big" <<'PY'
import json, os, subprocess, sys, time
gamelog, folder, small, big = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

def run(arguments, output=None):
    """Wall seconds and peak anonymous memory (MB, /proc RssAnon polled every 10 ms)."""
    sink = open(output, "wb") if output else subprocess.DEVNULL
    start = time.perf_counter()
    process = subprocess.Popen([gamelog, *arguments], stdout=sink, stderr=subprocess.DEVNULL)
    peak = 0
    while process.poll() is None:
        try:
            with open(f"/proc/{process.pid}/status") as status:
                for line in status:
                    if line.startswith("RssAnon:"):
                        peak = max(peak, int(line.split()[1]))
        except FileNotFoundError:
            pass
        time.sleep(0.01)
    seconds = time.perf_counter() - start
    if output:
        sink.close()
    if process.returncode != 0:
        sys.exit(f"gamelog {' '.join(arguments)} exited {process.returncode}")
    return seconds, peak / 1024

def events(db):
    return json.loads(subprocess.run([gamelog, "info", "--json", "--db", db], capture_output=True, text=True,
                                     check=True).stdout)["events"]

missed = []
def verdict(ok, what):
    if not ok:
        missed.append(what)
    return "met" if ok else "MISSED"

big_db = f"{folder}/log-{big}.sqlite"
n = events(big_db)
print(f"on {n:,} events ({big} games)")
log, _ = run(["log", "--db", big_db])
log_json, _ = run(["log", "--json", "--db", big_db])
print(f"  log {log:.2f} s, log --json {log_json:.2f} s: {log_json / log:.2f}x  target <= 1.5x: {verdict(log_json <= 1.5 * log, 'log --json')}")
export, _ = run(["export", "--db", big_db], f"{folder}/big.jsonl")
redact, _ = run(["export", "--redact", "--db", big_db], f"{folder}/big-redacted.jsonl")
print(f"  export {export:.2f} s, export --redact {redact:.2f} s: {redact / export:.2f}x  target <= 3x: {verdict(redact <= 3 * export, 'export --redact')}")

rows = {}
for games in (small, big):
    db = f"{folder}/log-{games}.sqlite"
    count = events(db)
    exported = f"{folder}/export-{games}.jsonl"
    run(["export", "--db", db], exported)
    target = f"{folder}/imported-{games}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(target + suffix):
            os.remove(target + suffix)
    imported = run(["import", "--db", target, exported])
    indexed = run(["index", "--db", target])
    rows[games] = (count, imported, indexed)
(ns, (i_s, im_s), (x_s, xm_s)), (nb, (i_b, im_b), (x_b, xm_b)) = rows[small], rows[big]
print(f"{'':28}{ns:>12,} events{nb:>12,} events   per-event time ratio   memory ratio")
for name, (ts, ms), (tb, mb) in (("import", (i_s, im_s), (i_b, im_b)), ("index", (x_s, xm_s), (x_b, xm_b))):
    per = (tb / nb) / (ts / ns)
    print(f"  {name:26}{ts:8.2f} s {ms:5.0f} MB{tb:8.2f} s {mb:5.0f} MB   {per:5.2f}x ({verdict(per <= 2, name + ' time')})"
          f"           {mb / ms:5.2f}x ({verdict(mb <= 1.5 * ms, name + ' memory')})")
print("missed: " + ", ".join(missed) if missed else "every target met")
sys.exit(1 if missed else 0)
PY
