#!/usr/bin/env bash
# Rebuilds Migrations/0002_default_dictionary.sql from simulated games.
# Only for a NEW schema: once released, a dictionary migration must never change
# (databases record each migration's checksum). Add a new dictionary in a new
# migration instead; old events keep naming the old one.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-Migrations/0002_default_dictionary.sql}
swift build -c release --static-swift-stdlib --product gamelog
.build/release/gamelog dictionary train --games 400 --seed 7 --size 16384 --sql-out "$out"
echo "wrote $out"
