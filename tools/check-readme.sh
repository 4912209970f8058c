#!/usr/bin/env bash
# Keeps README.md's code in step with the code that is built and run: every block that
# follows a `<!-- snippet: PATH -->` line must equal the file at PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import re, sys
text = open("README.md").read()
blocks = re.findall(r"<!-- snippet: (\S+) -->\n```\w*\n(.*?)```\n", text, re.S)
if not blocks:
    sys.exit("error: README.md marks no snippet; expected at least the library tour")
bad = 0
for path, code in blocks:
    if open(path).read() != code:
        print(f"error: README.md's block for {path} differs from the file; copy the file into the README")
        bad += 1
print(f"README snippets: {len(blocks)} checked, {bad} differ")
sys.exit(1 if bad else 0)
PY
