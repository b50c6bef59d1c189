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
