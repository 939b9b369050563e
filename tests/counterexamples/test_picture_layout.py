"""The picture as a browser lays it out (issue 27): it opens on its point, no label overlaps
another, none runs off the page.

Debian's headless chromium (no Playwright download) loads each named broken model's shrunk
counterexample drawn by counterexamples/picture.py, with a small script appended that reads
the laid-out box (getBoundingClientRect) of every SVG text shown, of both SVGs and of the
scrolled view, as the page opens and after the reader zooms out, unfolds, asks for the whole
run and comes back to the violation; it writes them into the DOM, and --dump-dom hands them
here. Boxes are compared with a 0.5 px tolerance: two texts overlap when they share more
than that in both directions; a text is clipped when it passes its SVG's edge by more.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from counterexamples.picture import render

NAMED = ("unconditional_fence", "reused_generation", "unlocked_resolver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,900")
SLACK_PX = 0.5

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")

# Appended to a copy of the page: runs after the page's own script (it comes later in the body).
MEASURE = """
<script>
(function(){
  function box(e){ var r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }
  function shown(e){
    var s = getComputedStyle(e);
    return s.display !== 'none' && s.visibility !== 'hidden' && e.firstChild && e.firstChild.nodeValue.trim() !== '';
  }
  function state(name){
    var out = {name: name, svgs: [], keys: [], rings: []};
    document.querySelectorAll('svg').forEach(function(svg){
      var texts = [];
      svg.querySelectorAll('text').forEach(function(t){
        if (shown(t)) { texts.push({box: box(t), text: t.firstChild.nodeValue, cls: t.getAttribute('class')}); }
      });
      out.svgs.push({id: svg.id || svg.getAttribute('class'), box: box(svg), texts: texts});
    });
    var scroller = document.getElementById('timeline').parentNode;
    out.view = box(scroller);
    out.view[2] = out.view[0] + scroller.clientWidth;  // without the scroll bar
    document.querySelectorAll('#timeline text.key').forEach(function(t){
      out.keys.push({box: box(t), shown: shown(t)}); });
    document.querySelectorAll('#timeline circle.violation').forEach(function(c){ out.rings.push(box(c)); });
    out.zoom = document.getElementById('zoomlevel').textContent;
    return out;
  }
  function click(id){ var b = document.getElementById(id); if (b) { b.click(); } }  // an older page lacks some
  var states = [state('as it opens')];
  click('zout'); click('zout'); states.push(state('zoomed out twice'));
  click('fold'); states.push(state('unfolded'));
  click('fold'); click('whole'); states.push(state('the whole run'));
  click('focus'); states.push(state('back to the violation'));
  var pre = document.createElement('pre');
  pre.id = 'layout';
  pre.textContent = JSON.stringify(states);
  document.body.appendChild(pre);
})();
</script>
"""


def laid_out(page: str, folder) -> list[dict]:
    """The states MEASURE records, from headless chromium's DOM of `page`."""
    html = folder / "page.html"
    html.write_text(page.replace("</body>", MEASURE + "</body>"))
    r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={folder / 'profile'}", "--dump-dom", html.as_uri()],
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    found = re.search(r'<pre id="layout">(.*?)</pre>', r.stdout, re.DOTALL)
    assert found, "the measuring script did not run: " + r.stdout[-500:]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
                      .replace("&amp;", "&"))


def overlaps(a, b) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > SLACK_PX and min(a[3], b[3]) - max(a[1], b[1]) > SLACK_PX


def inside(inner, outer) -> bool:
    return (inner[0] >= outer[0] - SLACK_PX and inner[1] >= outer[1] - SLACK_PX
            and inner[2] <= outer[2] + SLACK_PX and inner[3] <= outer[3] + SLACK_PX)


def faults_of(state: dict) -> list[str]:
    """Every pair of texts of one SVG that overlap, and every text that passes its SVG's edge, in words."""
    out = []
    for svg in state["svgs"]:
        texts = svg["texts"]
        for k, a in enumerate(texts):
            if not inside(a["box"], svg["box"]):
                out.append(f"{state['name']}: {a['text']!r} ({a['cls']}) is clipped by the edge of {svg['id']}")
            for b in texts[k + 1:]:
                if overlaps(a["box"], b["box"]):
                    out.append(f"{state['name']}: {a['text']!r} ({a['cls']}) overlaps {b['text']!r} ({b['cls']})")
    return out


@pytest.fixture(scope="module")
def layouts(tmp_path_factory, shrunk_named):
    """model -> the states MEASURE records of its shrunk counterexample's page, as `runner.py shrink
    --html` draws it (the session's shrinks: tests/counterexamples/conftest.py)."""
    out = {}
    for name in NAMED:
        *_, best, shrinker = shrunk_named[name]
        best = dict(best)
        out[name] = laid_out(render(shrinker.history, shrinker.violation, best), tmp_path_factory.mktemp(name))
    return out


@needs_chromium
def test_the_layout_check_sees_an_overlap_and_a_clip(tmp_path):
    """The check can fail: two texts drawn over each other, and one past its SVG's right edge."""
    page = ('<!DOCTYPE html><html><body><div><svg id="timeline" width="300" height="60">'
            '<text x="10" y="20">unconditional ✓ nodes/n2</text><text x="60" y="24">if-match 412</text>'
            '<text x="250" y="50">unconditional</text></svg></div>'
            '<span id="zoomlevel"></span>' + "".join(f'<button id="{b}"></button>' for b in
                                                    ("zout", "fold", "whole", "focus")) + "</body></html>")
    found = faults_of(laid_out(page, tmp_path)[0])
    assert any("'unconditional ✓ nodes/n2' (None) overlaps 'if-match 412'" in f for f in found), found
    assert any("'unconditional' (None) is clipped" in f for f in found), found
    assert len(found) == 2, found


@needs_chromium
@pytest.mark.parametrize("name", NAMED)
def test_no_label_overlaps_another_or_runs_off_the_page(name, layouts):
    """Lane names, the bucket lane's, the writes' labels, the axis' seconds and the folds' lengths:
    as the page opens, zoomed out, unfolded, the whole run, and back."""
    states = layouts[name]
    assert [s["name"] for s in states] == ["as it opens", "zoomed out twice", "unfolded", "the whole run",
                                           "back to the violation"]
    timeline = {s["name"]: next(v for v in s["svgs"] if v["id"] == "timeline") for s in states}
    assert all(len(v["texts"]) >= 5 for v in timeline.values()), "the labels are measured"
    found = [f for s in states for f in faults_of(s)]
    assert not found, "\n".join(found[:20])
    assert {t["cls"] for t in timeline["as it opens"]["texts"]} >= {"ticklabel", "wlabel key"}


@needs_chromium
@pytest.mark.parametrize("name", NAMED)
def test_the_picture_opens_on_the_events_that_prove_the_violation(name, layouts):
    """Every ring of a proving event, and every label of a proving write, is in the scrolled view as
    the page opens and when the reader comes back to it; the whole run stays reachable."""
    states = {s["name"]: s for s in layouts[name]}
    for moment in ("as it opens", "back to the violation"):
        s = states[moment]
        view = s["view"]
        assert s["rings"], "the violation is drawn"
        for ring in s["rings"]:
            centre = ((ring[0] + ring[2]) / 2, (ring[1] + ring[3]) / 2)
            assert view[0] <= centre[0] <= view[2], f"{moment}: a ring at x {centre[0]:.0f} is out of {view[:3:2]}"
        assert s["keys"], "the proving write's label is drawn"
        for key in s["keys"]:
            assert key["shown"] and inside([key["box"][0], view[1], key["box"][2], view[3]], view), \
                f"{moment}: a proving write's label {key['box']} is not in the view {view}"
    assert states["as it opens"]["zoom"] == states["back to the violation"]["zoom"]
    whole = states["the whole run"]
    timeline = next(v for v in whole["svgs"] if v["id"] == "timeline")
    assert timeline["box"][2] - timeline["box"][0] <= whole["view"][2] - whole["view"][0] + SLACK_PX, \
        "the whole run fits the view"
