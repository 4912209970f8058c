#!/usr/bin/env bash
# Builds the tamper corpus (a clean log and one copy per injected fault, with
# manifest.json saying where each must be found), then runs `gamelog verify` on each
# and checks the fault is reported at its position, and the clean log has no error.
# Usage: tools/build-tamper-corpus.sh [FOLDER] [GAMES]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.build/tamper-corpus}
games=${2:-20}
swift build --product TamperCorpus >/dev/null
swift build --product gamelog >/dev/null
rm -rf "$out"
.build/debug/TamperCorpus "$out" "$games"
.build/debug/gamelog verify --db "$out/clean.sqlite" | tail -n 1
python3 - "$out" <<'PY'
import json, subprocess, sys
folder = sys.argv[1]
failed = 0
for case in json.load(open(f"{folder}/manifest.json")):
    run = subprocess.run([".build/debug/gamelog", "verify", "--json", "--db", f"{folder}/{case['file']}"],
                         capture_output=True, text=True)
    report = json.loads(run.stdout)
    hit = [f for f in report["findings"] if f.get("position") == case["position"] and f["check"] == case["check"]]
    status = "found" if hit and run.returncode == 1 else "MISSED"
    failed += status != "found"
    print(f"{case['fault']:32} position {case['position']:6}  {status}")
sys.exit(1 if failed else 0)
PY
