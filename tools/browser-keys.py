#!/usr/bin/env python3
"""Drives the viewer's game page in headless Chromium with real key presses and clicks,
over the Chrome DevTools Protocol (a minimal WebSocket client: the standard library
only), and checks what the page shows after each: the steps keys reach, the step
list's filters, the help overlay, a jump to a finding, the switch of view.

Usage: tools/browser-keys.py CHROMIUM BASE_URL GAME_ID WORK_DIR
Prints one line per check, "ok NAME" or "FAIL NAME: why"; exits 1 if any failed.
"""
import base64, contextlib, json, os, shutil, socket, struct, subprocess, sys, time, urllib.parse, urllib.request


class Socket:
    """A WebSocket client, enough for the DevTools protocol: text frames, no extensions."""

    def __init__(self, url):
        parts = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=20)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {parts.path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
        self.sock.sendall(request.encode())
        response = b""
        while b"\r\n\r\n" not in response:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("the browser closed the connection during the handshake")
            response += chunk
        if b" 101 " not in response.split(b"\r\n")[0]:
            raise RuntimeError(f"no WebSocket upgrade: {response[:200]!r}")
        self.buffer = response.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        payload = text.encode()
        header = bytearray([0x81])
        if len(payload) < 126:
            header.append(0x80 | len(payload))
        elif len(payload) < 65536:
            header.append(0x80 | 126)
            header += struct.pack(">H", len(payload))
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", len(payload))
        mask = os.urandom(4)
        self.sock.sendall(bytes(header) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("the browser closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def receive(self):
        message = b""
        while True:
            first, second = self._read(2)
            length = second & 0x7F
            if length == 126:
                length = struct.unpack(">H", self._read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self._read(8))[0]
            data = self._read(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise RuntimeError("the browser closed the page")
            if opcode in (0x9, 0xA):
                continue
            message += data
            if first & 0x80:
                return message.decode()


class Page:
    def __init__(self, url):
        self.socket = Socket(url)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.receive())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def wait_loaded(self, previous=None, timeout=10):
        """Until the document is complete (and, given one, at another address than `previous`)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                state, href = self.evaluate("document.readyState"), self.evaluate("location.href")
            except RuntimeError:
                state, href = None, None
            if state == "complete" and (previous is None or href != previous):
                return href
            time.sleep(0.05)
        raise RuntimeError("the page did not load")

    def go(self, url):
        self.call("Page.navigate", url=url)
        time.sleep(0.1)
        return self.wait_loaded()

    def key(self, key, code=None, keycode=0, navigates=True):
        before = self.evaluate("location.href")
        for kind in ("keyDown", "keyUp"):
            params = {"type": kind, "key": key, "code": code or key, "windowsVirtualKeyCode": keycode}
            if kind == "keyDown" and len(key) == 1:
                params["text"] = key
            self.call("Input.dispatchKeyEvent", **params)
        return self.wait_loaded(before) if navigates else before

    def step(self):
        return int(urllib.parse.parse_qs(urllib.parse.urlparse(self.evaluate("location.href")).query).get("step", ["-1"])[0])


class Checks:
    """Prints each check as a line (`ok NAME` or `FAIL NAME: DETAIL`) and counts the failures."""
    def __init__(self):
        self.failures = 0

    def __call__(self, name, condition, detail=""):
        if condition:
            print(f"ok {name}")
        else:
            self.failures += 1
            print(f"FAIL {name}: {detail}")


@contextlib.contextmanager
def browser_page(chromium, profile):
    """Headless Chromium with one page, spoken to over the DevTools protocol; ended afterwards."""
    shutil.rmtree(profile, ignore_errors=True)  # a port file left by an earlier run would be read
    browser = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
                                f"--user-data-dir={profile}", "--window-size=1400,1000", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        port = int(open(port_file).read().split()[0])
        request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
        page = Page(json.loads(urllib.request.urlopen(request, timeout=10).read())["webSocketDebuggerUrl"])
        page.call("Page.enable")
        page.call("Runtime.enable")
        yield page
    finally:
        browser.terminate()
        try:
            browser.wait(timeout=10)
        except subprocess.TimeoutExpired:
            browser.kill()


def follow(chromium, base, game, work, binary, db, rest):
    """`serve --follow`: the page at a game's last step follows it as another process appends."""
    check = Checks()
    try:
        with browser_page(chromium, os.path.join(work, "cdp-profile-follow")) as page:
            page.go(f"{base}/games/{game}?step=0&as=auditor&whole=1")
            before = int(page.evaluate("document.querySelector('.timeline').dataset.steps"))
            page.key("End", keycode=35)
            check("End goes to the game's last step", page.step() == before, f"{page.step()} of {before}")
            page.evaluate("window.__loaded = 'once'")
            # Another process appends the rest of the log.
            appended = subprocess.run([binary, "import", "--db", db, rest], capture_output=True, text=True)
            check("the rest of the log is appended", appended.returncode == 0, appended.stderr)
            deadline = time.time() + 15
            while time.time() < deadline and page.step() <= before:
                time.sleep(0.1)
            after = int(page.evaluate("document.querySelector('.timeline').dataset.steps"))
            check("the page follows the game to its new last step", after > before and page.step() == after, f"{before} -> {after}, at {page.step()}")
            shown = page.evaluate("document.querySelector('.timeline').dataset.step")
            check("and shows it", shown == str(after), str(shown))
            check("without a page load", page.evaluate("window.__loaded") == "once", str(page.evaluate("window.__loaded")))
            page.go(f"{base}/games")
            check("the games list says it follows the log", page.evaluate("!!document.getElementById('following')") is True)
    except Exception as error:  # a broken page, a lost browser: a failure, said plainly
        check("the follow test could run", False, str(error))
    sys.exit(1 if check.failures else 0)


def main():
    if sys.argv[1] == "--follow":
        return follow(*sys.argv[2:9])
    chromium, base, game, work = sys.argv[1:5]
    check = Checks()
    try:
        with browser_page(chromium, os.path.join(work, "cdp-profile")) as page:
            url = f"{base}/games/{game}"

            page.go(f"{url}?step=5&as=auditor")
            check("the page opens at step 5", page.step() == 5, page.evaluate("location.href"))
            # Stepping swaps the step in place (issue 39, item 1): a value the page holds survives it.
            page.evaluate("window.__loaded = 'once'")
            page.key("ArrowRight", keycode=39)
            check("→ goes to step 6", page.step() == 6, str(page.step()))
            shown_step = page.evaluate("document.querySelector('.timeline').dataset.step")
            check("the page shows step 6", shown_step == "6", str(shown_step))
            page.key("ArrowLeft", keycode=37)
            check("← goes back to step 5", page.step() == 5, str(page.step()))
            check("stepping loads no page", page.evaluate("window.__loaded") == "once", str(page.evaluate("window.__loaded")))
            before = page.evaluate("location.href")
            page.evaluate("history.back()")
            page.wait_loaded(before)
            deadline = time.time() + 5
            while time.time() < deadline and page.evaluate("document.querySelector('.timeline').dataset.step") != "6":
                time.sleep(0.05)
            check("the back button steps back", page.step() == 6
                  and page.evaluate("document.querySelector('.timeline').dataset.step") == "6", page.evaluate("location.href"))
            # Keys work after a click in a filter (focus stays in the checkbox); Ctrl+→ is not "next".
            page.evaluate("document.getElementById('hideSame').focus()")
            page.key("ArrowRight", keycode=39)
            check("→ works with a filter focused", page.step() == 7, str(page.step()))
            for kind in ("keyDown", "keyUp"):
                page.call("Input.dispatchKeyEvent", type=kind, key="ArrowRight", code="ArrowRight", windowsVirtualKeyCode=39, modifiers=2)
            time.sleep(0.3)
            check("Ctrl+→ is left to the browser", page.step() == 7, str(page.step()))
            check("still no page load", page.evaluate("window.__loaded") == "once")
            # "When did this change?" (issue 39, item 5): a board cell's link goes, in place, to
            # the step that last changed it; the compare form shows the changes from any step.
            last = int(page.evaluate("document.querySelector('.timeline').dataset.steps"))
            page.key("End", keycode=35)
            before = page.evaluate("location.href")
            clicked = page.evaluate("(function(){var a=document.querySelector('#board td.cell:not(.empty) a.when');if(!a)return false;a.click();return true})()")
            if clicked:
                page.wait_loaded(before)
            landed = page.step()
            check("a cell's link goes to the step that last changed it", clicked and 0 < landed < last, f"{landed} of {last}")
            check("and the cell shows as changed there", page.evaluate("!!document.querySelector('#board td.cell.changed')") is True)
            before = page.evaluate("location.href")
            page.evaluate("(function(){var f=document.querySelector('form.compare');f.elements.from.value='2';f.requestSubmit();})()")
            page.wait_loaded(before)
            heading = page.evaluate("Array.prototype.map.call(document.querySelectorAll('h2'),function(h){return h.textContent}).join('|')")
            check("the compare form shows the changes from step 2", "changes from step 2" in heading, heading)
            check("no page load for either", page.evaluate("window.__loaded") == "once")
            steps = int(page.evaluate("document.querySelector('.timeline').dataset.steps"))
            page.key("End", keycode=35)
            check("End goes to the last step", page.step() == steps, f"{page.step()} of {steps}")
            page.key("Home", keycode=36)
            check("Home goes to step 0", page.step() == 0, str(page.step()))
            first_move = page.evaluate("(function(){var r=document.querySelector('#stepList li.move');return r?+r.dataset.step:null})()")
            page.key("]", code="BracketRight", keycode=221)
            check("] goes to the first move", first_move is not None and page.step() == first_move, f"{page.step()} vs {first_move}")
            label = page.evaluate("document.querySelector('#currentStep') && document.querySelector('#currentStep').textContent")
            check("the current row is the move, and says it was sent", bool(label) and "sent" in label, str(label))
            page.key("?", code="Slash", keycode=191, navigates=False)
            check("? shows the keys", page.evaluate("!document.getElementById('help').hidden") is True)
            page.key("?", code="Slash", keycode=191, navigates=False)
            check("? again hides them", page.evaluate("document.getElementById('help').hidden") is True)

            rows = page.evaluate("document.querySelectorAll('#stepList li').length")
            moves = page.evaluate("document.querySelectorAll('#stepList li.move').length")
            page.evaluate("document.getElementById('onlyMoves').click()")
            shown = page.evaluate("Array.prototype.filter.call(document.querySelectorAll('#stepList li'),function(r){return !r.hidden}).length")
            check("moves only leaves the moves (and the current step)", moves > 0 and moves <= shown <= moves + 1 and shown < rows,
                  f"{shown} shown of {rows}, {moves} moves")
            page.key("]", code="BracketRight", keycode=221)
            kept = page.evaluate("document.getElementById('onlyMoves').checked")
            check("the filter stays on at the next step", kept is True)
            page.evaluate("document.getElementById('onlyMoves').click()")

            findings = page.evaluate("Array.prototype.map.call(document.querySelectorAll('#stepList li.finding'),function(r){return +r.dataset.step})")
            if findings:
                page.go(f"{url}?step=0&as=auditor")
                page.key("}", code="BracketRight", keycode=221)
                check("} jumps to the first finding", page.step() == findings[0], f"{page.step()} vs {findings}")
                highlighted = page.evaluate("!!document.querySelector('.finding.current')")
                check("the finding of the step is highlighted in the findings list", highlighted is True)
            else:
                check("the game has a finding to jump to", False, "no row is marked as a finding")

            before = page.evaluate("location.href")
            page.evaluate("Array.prototype.find.call(document.querySelectorAll('.views a'),function(a){return a.dataset.view==='B'}).click()")
            page.wait_loaded(before)
            href = page.evaluate("location.href")
            mine = page.evaluate("document.querySelectorAll('#stepList li').length")
            others = page.evaluate("document.body.innerHTML.indexOf(' · A · ')")
            check("the view switch shows B's view", "as=B" in href, href)
            check("B's step list holds B's steps alone", 0 < mine < rows and others == -1, f"{mine} of {rows}")
            page.call("Page.captureScreenshot")  # the page still draws after every step

            # Search (issue 39, item 5): a game id's beginning typed into the list's search box
            # and sent with Enter finds that game, and only games whose ids begin so.
            page.go(f"{base}/games")
            listed = page.evaluate("Array.prototype.map.call(document.querySelectorAll('#games tbody tr'),function(r){return r.dataset.game})")
            target = listed[-1] if listed else None
            check("the list shows games to search among", bool(listed) and len(listed) > 1, str(listed))
            if target:
                prefix = target[:6]
                page.evaluate("document.querySelector('input[name=q]').focus()")
                page.call("Input.insertText", text=prefix)
                before = page.evaluate("location.href")
                for kind in ("keyDown", "keyUp"):
                    page.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                              **({"text": "\r"} if kind == "keyDown" else {}))
                page.wait_loaded(before)
                found = page.evaluate("Array.prototype.map.call(document.querySelectorAll('#games tbody tr'),function(r){return r.dataset.game})")
                check("search finds the game by the beginning of its id", target in found and f"q={prefix}" in page.evaluate("location.href"),
                      f"{found} at {page.evaluate('location.href')}")
                check("and lists only games whose ids begin so", bool(found) and all(g.startswith(prefix) for g in found) and len(found) < len(listed),
                      str(found))

            # Accessibility (issue 39, item 7): tools/a11y-check.js over each kind of page, and
            # the keyboard: Tab moves the focus on (never trapped) and shows where it is.
            script = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "a11y-check.js")).read()
            for name, address in (("the games list", f"{base}/games"), ("the auditor's view", f"{url}?step=5&as=auditor"),
                                  ("a device's view", f"{url}?step=5&as=A"), ("a comparison", f"{url}?step=9&from=2&as=auditor"),
                                  ("the last step", f"{url}?step={last}&as=auditor")):
                page.go(address)
                report = page.evaluate(script) or {}
                problems = report.get("problems", ["the check did not run"])
                check(f"accessible: {name}", not problems and report.get("controls", 0) > 0 and report.get("texts", 0) > 10,
                      "; ".join(problems[:8]) + (f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""))
            page.go(f"{url}?step=5&as=auditor")
            seen, unmarked = [], []
            for _ in range(25):
                for kind in ("keyDown", "keyUp"):
                    page.call("Input.dispatchKeyEvent", type=kind, key="Tab", code="Tab", windowsVirtualKeyCode=9)
                focused = page.evaluate("""(function(){var e=document.activeElement;if(!e||e===document.body)return null;
                    var s=getComputedStyle(e);return {what:e.tagName+(e.id?'#'+e.id:'')+' '+(e.textContent||'').trim().slice(0,20),
                    marked:(s.outlineStyle!=='none'&&parseFloat(s.outlineWidth)>0)||s.boxShadow!=='none'}})()""")
                if focused:
                    seen.append(focused["what"])
                    if not focused["marked"]:
                        unmarked.append(focused["what"])
            check("Tab moves the focus through the page", len(set(seen)) >= 10, f"{len(set(seen))} distinct of {seen[:5]}")
            check("the focused control is always marked", not unmarked, ", ".join(unmarked[:5]))
    except Exception as error:  # a broken page, a lost browser: a failure, said plainly
        check("the key test could run", False, str(error))
    sys.exit(1 if check.failures else 0)


if __name__ == "__main__":
    main()
