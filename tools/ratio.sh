#!/usr/bin/env bash
# Commands about one game must cost the same in a log of any size (issue 14; `verify GAME`,
# which reads the log from the game on, is measured apart, below). Runs each
# such command on the same game in a small log and in a big one (the big log's first
# games are the small log's games: same seed, fixed clock), median wall time of RUNS
# runs each, and prints the ratio; exit 1 when one is over 2x.
# Usage: tools/ratio.sh [SMALL-GAMES] [BIG-GAMES] [RUNS]   (defaults: 16 and 1,600 games,
#        about 2,000 and 200,000 events; 10,000 big games make about 1.3M events)
set -euo pipefail
cd "$(dirname "$0")/.."
small=${1:-16}
big=${2:-1600}
runs=${3:-7}
folder=.build/ratio
source tools/simulated-logs.sh
build_gamelog
simulated_log "$folder" "$small"
simulated_log "$folder" "$big"
python3 - "$gamelog" "$folder/log-$small.sqlite" "$folder/log-$big.sqlite" "$runs" <<'PY'
import json, statistics, subprocess, sys, time
gamelog, small, big, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def events(db):
    return json.loads(subprocess.run([gamelog, "info", "--json", "--db", db], capture_output=True, text=True, check=True).stdout)["events"]
games = json.loads(subprocess.run([gamelog, "games", "--json", "--db", small], capture_output=True, text=True, check=True).stdout)
game = next(g for g in games if g["kind"] == "battleship" and g["status"] == "finished")["id"][:8]
commands = [
    ["state", game, "--at", "10"],
    ["state", game, "--as", "B"],
    ["diff", game, "3", "9"],
    ["log", "--game", game],
    ["bisect", game, "--invariant", "legality"],
    ["rerun", game],
    ["games", "--per-page", "10"],
]
def median_seconds(command, db):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run = subprocess.run([gamelog, *command, "--db", db], capture_output=True)
        times.append(time.perf_counter() - start)
        if run.returncode not in (0,):
            sys.exit(f"{' '.join(command)} on {db} exited {run.returncode}: {run.stderr.decode()[:300]}")
    return statistics.median(times)
sizes = [events(small), events(big)]
print(f"game {game}: logs of {sizes[0]:,} and {sizes[1]:,} events; median of {runs} runs, wall time of the whole process")
print(f"{'command':44} {'small ms':>9} {'big ms':>9} {'ratio':>6}")
worst = 0.0
for command in commands:
    a, b = median_seconds(command, small), median_seconds(command, big)
    ratio = b / a
    worst = max(worst, ratio)
    print(f"{' '.join(command):44} {a * 1000:9.1f} {b * 1000:9.1f} {ratio:5.2f}x  {'ok' if ratio <= 2 else 'OVER 2x'}  {'under 50 ms' if b < 0.05 else 'OVER 50 ms'}")
print(f"worst ratio {worst:.2f}x (target at most 2x)")
# `verify GAME` reads the log by position from the game's first event on (the index that
# finds a game's events is unsigned, so what it could hide is read too): it costs the log
# after the game, so it is measured on the big log's first game and its last, no target.
big_games = json.loads(subprocess.run([gamelog, "games", "--json", "--all", "--db", big], capture_output=True, text=True, check=True).stdout)
for label, chosen in (("first", game), ("last", big_games[-1]["id"][:8])):
    print(f"verify GAME, the big log's {label} game ({chosen}): {median_seconds(['verify', chosen, '--no-rerun'], big) * 1000:.1f} ms")
sys.exit(0 if worst <= 2 else 1)
PY
