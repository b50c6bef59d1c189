"""Open an HTML page in headless Chromium (Debian's `chromium`) and report, from
inside the browser, which images failed to load and which links do not resolve.

No extra Python dependency: a checker page (written beside nothing, in a temp dir)
loads the page in an iframe, checks every <img> (complete, naturalWidth > 0) and
fetches every local link (file:// XHR, allowed by --allow-file-access-from-files),
checking that a `#fragment` names an element id of the target page. The result is
written into the checker's DOM, which `--dump-dom` prints."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--allow-file-access-from-files",
         "--disable-dev-shm-usage"]

CHECKER = """<!doctype html><html><body><pre id="result">pending</pre>
<iframe id="f" src="%(page)s" style="width:1200px;height:800px"></iframe>
<script>
function get(url) {
  return new Promise(function (resolve) {
    var x = new XMLHttpRequest();
    x.onload = function () { resolve(x.responseText); };
    x.onerror = function () { resolve(null); };
    try { x.open("GET", url); x.send(); } catch (e) { resolve(null); }
  });
}
document.getElementById("f").onload = async function () {
  var doc = this.contentDocument, out = {images: [], bad_images: [], links: 0,
                                         bad_links: [], text: doc.body.innerText.length};
  for (var img of doc.images) {
    out.images.push(img.getAttribute("src"));
    if (!img.complete || img.naturalWidth === 0) out.bad_images.push(img.getAttribute("src"));
  }
  var cache = {};
  for (var a of doc.querySelectorAll("a[href]")) {
    var href = a.getAttribute("href");
    if (/^(https?:|mailto:)/.test(href)) continue;
    out.links += 1;
    var u = new URL(href, doc.baseURI), frag = u.hash.slice(1);
    u.hash = "";
    var key = u.href;
    if (!(key in cache)) cache[key] = await get(key);
    var body = cache[key];
    if (body === null || body === "") { out.bad_links.push(href); continue; }
    if (frag && body.indexOf("id='" + frag + "'") < 0 &&
        body.indexOf('id="' + frag + '"') < 0) out.bad_links.push(href);
  }
  document.getElementById("result").textContent = "RESULT" + JSON.stringify(out) + "END";
};
</script></body></html>
"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run_chromium(url: str, budget_ms: int = 60000, timeout: int = 240) -> str:
    exe = chromium()
    assert exe, "chromium not installed"
    with tempfile.TemporaryDirectory() as profile:
        res = subprocess.run(
            [exe, *FLAGS, f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}",
             "--dump-dom", url], capture_output=True, text=True, timeout=timeout)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def check_page(page: Path, work: Path) -> dict:
    """{"images", "bad_images", "links", "bad_links", "text"} for `page`."""
    checker = work / "checker.html"
    checker.write_text(CHECKER % {"page": page.resolve().as_uri()})
    dom = run_chromium(checker.resolve().as_uri())
    m = re.search(r"RESULT(.*?)END", dom, re.S)
    assert m, "checker page produced no result: " + dom[-1500:]
    import html

    return json.loads(html.unescape(m.group(1)))


def dump_dom(page: Path) -> str:
    return run_chromium(page.resolve().as_uri(), budget_ms=5000)


# --------------------------------------------------------------------------------------
# Driving a page (clicks, downloads) over the Chrome DevTools Protocol, with aiohttp's
# websocket client (a core dependency): no extra package, Debian's chromium only.

class DevTools:
    """One headless Chromium with one page, driven over CDP (flat sessions)."""

    def __init__(self, download_dir: Path, timeout: float = 120.0):
        self.download_dir = Path(download_dir)
        self.timeout = timeout
        self._id = 0
        self._events: list[dict] = []

    async def __aenter__(self) -> DevTools:
        import asyncio

        import aiohttp

        exe = chromium()
        assert exe, "chromium not installed"
        self._profile = tempfile.TemporaryDirectory()
        self.proc = await asyncio.create_subprocess_exec(
            exe, *FLAGS, f"--user-data-dir={self._profile.name}", "--remote-debugging-port=0",
            "--autoplay-policy=no-user-gesture-required", "about:blank",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        url = None
        while url is None:
            line = await asyncio.wait_for(self.proc.stderr.readline(), self.timeout)
            assert line, "chromium exited before printing its DevTools URL"
            m = re.search(rb"DevTools listening on (ws://\S+)", line)
            if m:
                url = m.group(1).decode()
        self._drain = asyncio.ensure_future(self._drain_stderr())
        self.http = aiohttp.ClientSession()
        self.ws = await self.http.ws_connect(url, max_msg_size=0)
        await self.send("Browser.setDownloadBehavior", behavior="allow",
                        downloadPath=str(self.download_dir.resolve()), eventsEnabled=True)
        target = await self.send("Target.createTarget", url="about:blank")
        attached = await self.send("Target.attachToTarget", targetId=target["targetId"],
                                   flatten=True)
        self.session = attached["sessionId"]
        await self.send("Page.enable", session=True)
        await self.send("Runtime.enable", session=True)
        return self

    async def _drain_stderr(self) -> None:
        while await self.proc.stderr.readline():
            pass

    async def __aexit__(self, *exc) -> None:
        import asyncio

        await self.ws.close()
        await self.http.close()
        self.proc.terminate()
        try:
            await asyncio.wait_for(self.proc.wait(), 20)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
        self._drain.cancel()
        self._profile.cleanup()

    async def send(self, method: str, session: bool = False, **params) -> dict:
        import asyncio

        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        await self.ws.send_json(msg)
        while True:
            reply = await asyncio.wait_for(self.ws.receive_json(), self.timeout)
            if reply.get("id") == self._id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})
            self._events.append(reply)

    async def event(self, method: str, predicate=lambda p: True) -> dict:
        import asyncio

        while True:
            for i, ev in enumerate(self._events):
                if ev.get("method") == method and predicate(ev.get("params", {})):
                    return self._events.pop(i)["params"]
            self._events.append(await asyncio.wait_for(self.ws.receive_json(), self.timeout))

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", session=True, url=url)
        await self.event("Page.loadEventFired")

    async def js(self, expression: str):
        res = await self.send("Runtime.evaluate", session=True, expression=expression,
                              awaitPromise=True, returnByValue=True)
        assert "exceptionDetails" not in res, res["exceptionDetails"]
        return res["result"].get("value")

    async def download(self, click_expression: str) -> Path:
        """Run `click_expression` (which starts a download) and return the saved file."""
        await self.js(click_expression)
        begin = await self.event("Browser.downloadWillBegin")
        await self.event("Browser.downloadProgress",
                         lambda p: p.get("guid") == begin["guid"] and p.get("state") == "completed")
        path = self.download_dir / begin["guid"]
        named = self.download_dir / begin["suggestedFilename"]
        return named if named.exists() else path
LAYOUT = """<!doctype html><html><body style="margin:0"><pre id="result">pending</pre>
<iframe id="f" src="%(page)s" style="width:%(width)dpx;height:900px;border:0"></iframe>
<script>
document.getElementById("f").onload = function () {
  var doc = this.contentDocument, win = this.contentWindow, out = {tables: [], figures: [],
      cut: [], findings: [], methods: [], published: 0};
  doc.querySelectorAll("table").forEach(function (t) {
    out.tables.push({rows: t.rows.length, id: t.closest("[id]") ? t.closest("[id]").id : "",
                     cls: t.className});
  });
  doc.querySelectorAll("figure img").forEach(function (img) {
    out.figures.push({src: img.getAttribute("src"),
                      width: img.getBoundingClientRect().width,
                      natural: img.naturalWidth});
  });
  doc.querySelectorAll(".wide").forEach(function (w) {
    if (w.scrollWidth > w.clientWidth + 1)
      out.cut.push({id: w.closest("[id]") ? w.closest("[id]").id : "",
                    scroll: w.scrollWidth, client: w.clientWidth});
  });
  if (doc.documentElement.scrollWidth > win.innerWidth + 1)
    out.cut.push({id: "page", scroll: doc.documentElement.scrollWidth,
                  client: win.innerWidth});
  doc.querySelectorAll("p.finding").forEach(function (p) {
    out.findings.push({rq: p.dataset.rq, text: p.innerText,
                       links: Array.prototype.map.call(p.querySelectorAll("a.num"),
                         function (a) { return a.getAttribute("href"); })});
  });
  doc.querySelectorAll(".cap span.method, figcaption span.method, ul.methods span.method")
    .forEach(function (s) {
      var tbl = s.closest("[data-table], .tbl, figure, ul");
      out.methods.push({method: s.dataset.method, text: s.innerText,
                        where: tbl ? (tbl.id || tbl.className) : ""});
    });
  out.published = doc.querySelectorAll(".published table.pub tr").length;
  document.getElementById("result").textContent = "RESULT" + JSON.stringify(out) + "END";
};
</script></body></html>
"""


def layout_report(page: Path, work: Path, width: int = 1280) -> dict:
    """The report as laid out by the browser at `width` px: rows per table, displayed
    figure widths, boxes cut off horizontally, the abstract's findings (text and number
    links), the method texts of captions and methods, published-numbers rows."""
    checker = work / "layout.html"
    checker.write_text(LAYOUT % {"page": page.resolve().as_uri(), "width": width})
    dom = run_chromium(f"{checker.resolve().as_uri()}", budget_ms=20000)
    m = re.search(r"RESULT(.*?)END", dom, re.S)
    assert m, "layout page produced no result: " + dom[-1500:]
    import html

    return json.loads(html.unescape(m.group(1)))


EVAL = """<!doctype html><html><head><meta charset="utf-8">%(scripts)s</head><body>
<pre id="result">pending</pre><script>
try { document.getElementById("result").textContent =
        "RESULT" + JSON.stringify(%(expr)s) + "END"; }
catch (e) { document.getElementById("result").textContent = "ERROR" + e + "END"; }
</script></body></html>
"""


def eval_js(work: Path, expr: str, scripts: list[Path] = (), inline: str = ""):
    """The JSON value of the JavaScript expression `expr` evaluated in headless
    Chromium after loading `scripts` (files, in order) and then `inline` code."""
    import html

    tags = "".join(f'<script src="{Path(s).resolve().as_uri()}"></script>' for s in scripts)
    if inline:
        tags += "<script>" + inline + "</script>"
    page = Path(work) / "eval.html"
    page.write_text(EVAL % {"scripts": tags, "expr": expr}, encoding="utf-8")
    dom = run_chromium(page.resolve().as_uri(), budget_ms=20000)
    m = re.search(r"(RESULT|ERROR)(.*?)END</pre>", dom, re.S)
    assert m, "eval page produced no result: " + dom[-1500:]
    assert m.group(1) == "RESULT", html.unescape(m.group(2))
    return json.loads(html.unescape(m.group(2)))


FIT = """<!doctype html><html><body style="margin:0"><pre id="result">pending</pre>
<iframe id="f" src="%(page)s" style="width:%(width)dpx;height:900px;border:0"></iframe>
<script>
document.getElementById("f").onload = function () {
  var doc = this.contentDocument, win = this.contentWindow, judges = %(judges)s;
  var cs = win.getComputedStyle(doc.body);
  var column = doc.body.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
  var out = {window: win.innerWidth, column: column, tables: [], wide: [], broken: []};
  doc.querySelectorAll("table").forEach(function (t, k) {
    var box = t.closest("[id]"), w = t.getBoundingClientRect().width;
    var rec = {k: k, id: box ? box.id : "", cls: t.className, width: w,
               table: t.dataset.table || ""};
    out.tables.push(rec);
    if (w > column + 0.5) out.wide.push(rec);
  });
  doc.querySelectorAll("td, th").forEach(function (c) {
    var text = c.innerText.trim();
    if (judges.indexOf(text) < 0) return;
    var r = doc.createRange(); r.selectNodeContents(c);
    var tops = {};
    Array.prototype.forEach.call(r.getClientRects(), function (q) {
      if (q.width > 0) tops[Math.round(q.top)] = 1; });
    if (Object.keys(tops).length > 1)
      out.broken.push({text: text, lines: Object.keys(tops).length,
                       table: (c.closest("[id]") || {}).id || ""});
  });
  document.getElementById("result").textContent = "RESULT" + JSON.stringify(out) + "END";
};
</script></body></html>
"""


def table_fit(page: Path, work: Path, judges: list[str], width: int = 1400) -> dict:
    """Every table of `page` laid out by Chromium in a `width` px window: its width
    against the text column's (the body's content box), the tables wider than it
    (`wide`), and every cell holding a judge name whose text takes more than one line
    (`broken`)."""
    checker = work / "fit.html"
    checker.write_text(FIT % {"page": page.resolve().as_uri(), "width": width,
                              "judges": json.dumps(sorted(judges))})
    dom = run_chromium(checker.resolve().as_uri(), budget_ms=20000)
    m = re.search(r"RESULT(.*?)END", dom, re.S)
    assert m, "fit page produced no result: " + dom[-1500:]
    import html

    return json.loads(html.unescape(m.group(1)))
