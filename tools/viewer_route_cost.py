#!/usr/bin/env python3
"""The server's CPU for each kind of request of `gamelog serve`, one request at a time.

Asks a running server (whose process id is given, to read its CPU from /proc) for each
kind of request tools/viewer_load.py mixes, N times each, on games picked at random, one
after another, and prints the server's CPU (user + system) and the wall time a request.
What a request costs the server is what bounds how many it answers a second under load;
wall time under load moves with everything else on the machine.

    tools/viewer_route_cost.py BASE-URL SERVER-PID [--count 200] [--seed 7]

"cold" is a game this run has not asked for (the server may have opened it for another
client); "warm" asks for steps of one game again and again. Standard library only; Linux.
"""
import argparse
import http.client
import json
import os
import random
import sys
import time
import urllib.parse


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("pid", type=int)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    url = urllib.parse.urlsplit(args.base)
    connection = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=120)
    ticks = os.sysconf("SC_CLK_TCK")

    def get(path):
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            sys.exit(f"error: {path} answered {response.status}: {body[:200]!r}")
        return body

    def cpu_ms():
        # /proc/PID/stat: fields 14 and 15 (utime, stime) after the command's parenthesis.
        fields = open(f"/proc/{args.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / ticks

    games = []
    for page in range(1, 6):
        batch = json.loads(get(f"/api/games?page={page}&per_page=1000"))
        games += batch
        if len(batch) < 1000:
            break
    if not games:
        sys.exit("error: the server lists no game")
    rng = random.Random(args.seed)
    outlines = {}

    def steps(game):
        if game not in outlines:
            outlines[game] = json.loads(get(f"/api/games/{game}"))["steps"]
        return outlines[game]

    one = games[0]["id"]
    pages = max(1, len(games) // 50)
    routes = [
        ("/api/games/ID (cold)", lambda g: f"/api/games/{g}", False),
        ("game page (cold)", lambda g: f"/games/{g}?step={rng.randint(0, steps(g))}&as=auditor", True),
        ("game page (warm)", lambda g: f"/games/{one}?step={rng.randint(0, steps(one))}&as=auditor", False),
        ("api step", lambda g: f"/api/games/{g}/steps/{rng.randint(0, steps(g))}", True),
        ("api verify", lambda g: f"/api/verify/{g}", False),
        ("list page", lambda g: f"/games?page={rng.randint(1, pages)}", False),
        ("filtered list", lambda g: f"/games?audit=ok&page={rng.randint(1, 5)}", False),
    ]
    print(f"{'request':<22} {'server CPU':>12} {'wall':>10}   ({args.count} requests each, ms a request)")
    measured = 0
    for name, path, learn in routes:
        picks = [rng.choice(games)["id"] for _ in range(args.count)]
        if learn:  # a step needs the game's step count: asked before, not counted
            for game in picks:
                steps(game)
        cpu = wall = 0.0
        for game in picks:
            target = path(game)
            before, started = cpu_ms(), time.perf_counter()
            get(target)
            wall += time.perf_counter() - started
            cpu += cpu_ms() - before
            measured += 1
        print(f"{name:<22} {cpu / args.count:>12.2f} {1000 * wall / args.count:>10.2f}")
    if measured == 0:
        sys.exit("error: nothing was measured")


if __name__ == "__main__":
    main()
