"""A run drawn as one self-contained HTML page (issue 13): inline SVG, no network.

One lane per process, labelled with its node, instance, machine and clock offset. In each
lane: the node lease's valid intervals as the world's facts give them (checkers/facts.py:
rebuilt from the writes the bucket applied), with the model's own belief beside them where
the two differ; the holds of each actor as bars in the owner's colour; the acts (a request
served, data acknowledged) as marks; starts, crashes and exits. Below, a bucket lane: each
write is an arrow from its sender's lane at the instant it was sent to the bucket at the
instant it took effect, marked with its condition and outcome (applied, 412, 404, lost, late).
Outages are shaded; the events that prove the violation are ringed in red, with the true
time between them shaded. Hovering any mark shows its fields.

Long quiet stretches (nothing but lease renewals) are folded to a narrow band, and the page
zooms (buttons or ctrl + wheel), so a 2,000-event history stays readable. Every position is
computed here; the page's small script only rescales them when the reader zooms or unfolds.

The page opens on its point (issue 27): zoomed and scrolled to the events that prove the
violation, with some time before them for their causes; the whole run stays a scroll, a
zoom or the "whole run" button away. No label overlaps another or runs off the page: every
text is placed here in a free slot of its row (_Slots, with widths from the fonts' advance),
or left to its mark's tooltip, and the script hides the labels that a zoom out makes collide.
"""

from __future__ import annotations

import html
import itertools
import json
import os

LANE_H = 64
TOP = 34
TICK_Y, FOLD_Y = 12, 26  # baselines of the axis' seconds and of the folds' lengths
BUCKET_H = 76
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22")
QUIET_KINDS = ("lease_valid", "answered", "check_began", "guard_passed", "listed", "leases_reply", "told", "running",
               "sent", "arrived")
FOLDED_PX = 28
RIGHT_PAD = 300  # room for the labels of the last writes
MONO_EM = 0.62  # advance of DejaVu Sans Mono (the page's monospace on Debian) is 0.602 em; other glyphs
WIDE_EM = 1.05  # (✓ ⚡ ▶, drawn from a fallback font) at most about one em
WLABEL_PX = 9.5  # font sizes, as in _STYLE


def write_html(path: str, history, violation, plan: dict | None = None) -> None:
    from house.errors import UsageError

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    try:
        with open(path, "w") as f:
            f.write(render(history, violation, plan))
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


class TimeMap:
    """True time (ms) -> x (px): linear, but stretches with nothing to see folded to FOLDED_PX."""

    def __init__(self, end_ms: int, busy: list[int], width_px: int) -> None:
        fold_ms = max(3_000, end_ms // 30)
        keep = min(600, fold_ms // 4)  # kept at full scale on both sides of a fold
        marks = sorted({0, end_ms, *busy})
        folds = []
        for a, b in itertools.pairwise(marks):
            if b - a > fold_ms:
                folds.append((a + keep, b - keep))
        shown_ms = end_ms - sum(b - a for a, b in folds)
        self.scale = max(width_px - FOLDED_PX * len(folds), 200) / max(shown_ms, 1)  # px per ms
        self.segments = []  # (t0, t1, x0, x1)
        t, x = 0, 0.0
        for a, b in folds:
            x1 = x + (a - t) * self.scale
            self.segments.append((t, a, x, x1))
            self.segments.append((a, b, x1, x1 + FOLDED_PX))
            t, x = b, x1 + FOLDED_PX
        self.segments.append((t, end_ms, x, x + (end_ms - t) * self.scale))
        self.folds = folds
        self.width = self.segments[-1][3]

    def x(self, t: int) -> float:
        for t0, t1, x0, x1 in self.segments:
            if t <= t1:
                return round(x0 + (x1 - x0) * (max(t, t0) - t0) / max(t1 - t0, 1), 1)
        return round(self.width, 1)


def text_w(text: str, font_px: float) -> float:
    """How wide `text` is drawn in the page's monospace at `font_px`, erring wide."""
    return sum(MONO_EM if ord(c) < 0x2000 else WIDE_EM for c in text) * font_px


class _Slots:
    """The boxes texts already take: a new text goes only where it overlaps none."""

    def __init__(self) -> None:
        self.bands: dict[int, list[tuple[float, float, float, float]]] = {}  # 16 px bands of y -> boxes

    def take(self, x0: float, x1: float, rows) -> float | None:
        """The baseline of the first of `rows` (baseline, top, bottom) where [x0, x1] is free (now taken), or None."""
        for y, top, bottom in rows:
            bands = range(int(top // 16) - 1, int(bottom // 16) + 2)
            near = [box for band in bands for box in self.bands.get(band, ())]
            if all(x1 + 2 <= a or x0 >= b + 2 or bottom <= t or top >= u for a, b, t, u in near):
                self.bands.setdefault(int(top // 16), []).append((x0, x1, top, bottom))
                return y
        return None


def _e(text) -> str:
    return html.escape(str(text), quote=True)


class _Svg:
    """SVG elements whose x positions carry their true times (data-a, data-b) for the zoom."""

    def __init__(self, tm: TimeMap) -> None:
        self.tm = tm
        self.parts: list[str] = []

    def rect(self, a: int, b: int, y: float, h: float, cls: str, title: str = "", style: str = "") -> None:
        x0, x1 = self.tm.x(a), self.tm.x(b)
        self.parts.append(f'<rect class="{cls}" data-a="{a}" data-b="{b}" x="{x0}" y="{y}" width="{max(x1 - x0, 1.5)}" '
                          f'height="{h}"{_style(style)}>{_title(title)}</rect>')

    def line(self, a: int, y1: float, b: int, y2: float, cls: str, title: str = "", style: str = "",
             attrs: str = "") -> None:
        self.parts.append(f'<line class="{cls}" data-a="{a}" data-b="{b}" x1="{self.tm.x(a)}" y1="{y1}" '
                          f'x2="{self.tm.x(b)}" y2="{y2}"{_style(style)}{attrs}>{_title(title)}</line>')

    def dot(self, a: int, y: float, r: float, cls: str, title: str = "", style: str = "") -> None:
        self.parts.append(f'<circle class="{cls}" data-a="{a}" cx="{self.tm.x(a)}" cy="{y}" r="{r}"{_style(style)}>'
                          f'{_title(title)}</circle>')

    def text(self, a: int, y: float, text: str, cls: str, title: str = "", middle: bool = False,
             attrs: str = "") -> None:
        anchor = ' text-anchor="middle"' if middle else ""
        self.parts.append(f'<text class="{cls}" data-a="{a}" x="{self.tm.x(a)}" y="{y}"{anchor}{attrs}>{_e(text)}'
                          f'{_title(title)}</text>')

    def label(self, slots: _Slots, a: int, ys, text: str, font_px: float, cls: str, title: str = "",
              middle: bool = False, attrs: str = "") -> float | None:
        """`text` at time `a` in the first free row of `ys`; None (and nothing drawn) if none is free."""
        x, w = self.tm.x(a), text_w(text, font_px)
        x0 = x - w / 2 if middle else x
        if x0 < 0 or x0 + w > self.tm.width + RIGHT_PAD - 8:  # it would run off the page
            return None
        y = slots.take(x0, x0 + w, [(y, y - 0.93 * font_px, y + 0.24 * font_px) for y in ys])
        if y is not None:
            self.text(a, y, text, cls, title, middle, attrs)
        return y


def _style(style: str) -> str:
    return f' style="{style}"' if style else ""


def _title(title: str) -> str:
    return f"<title>{_e(title)}</title>" if title else ""


def render(history, violation, plan: dict | None = None) -> str:
    from checkers.facts import facts, minus

    from .story import _renewal, phrase, tell

    ev = history.events
    fx = facts(history)
    procs = history.processes
    acting = {p for _t, p, kind, _f in ev if p >= 0 and kind in ("apply", "refused", "operator_done")}
    lanes = [p for p, pr in enumerate(procs) if pr.node_id != "operator" or p in acting]
    lane_of = {p: k for k, p in enumerate(lanes)}
    color = {p: PALETTE[k % len(PALETTE)] for k, p in enumerate(lanes)}
    proving = set(violation.events) if violation is not None else set()
    busy = [t for i, (t, _p, kind, _f) in enumerate(ev)
            if kind not in QUIET_KINDS and not _renewal(history, i) or i in proving]
    width = max(1200, min(30_000, 16 * len(busy)))
    tm = TimeMap(history.end_ms, busy, width)
    svg = _Svg(tm)
    n = len(lanes)
    bucket_y = TOP + n * LANE_H + 10
    height = bucket_y + BUCKET_H
    base = history.options.get("clock_base", 0)
    actors = sorted({h.actor for h in fx.holds})
    actor_row = {a: k for k, a in enumerate(actors)}
    hold_h = max(2.5, min(8.0, 22.0 / max(len(actors), 1)))

    slots = _Slots()
    # the axis, the folds: fold lengths on a row of their own, under the seconds
    step = _nice_step(history.end_ms / max(width / 110, 1))
    steps = [k for k in NICE_STEPS if step / 10 <= k <= step * 10]  # finer ones for zooming in, coarser for out
    for t0, t1, x0, x1 in tm.segments:
        if (t0, t1) in tm.folds:
            svg.rect(t0, t1, 14, height - 14, "fold", f"{(t1 - t0) / 1000:.1f} s folded: lease renewals only")
            svg.label(slots, (t0 + t1) // 2, (FOLD_Y,), f"~{(t1 - t0) / 1000:.0f}s", 10, "foldlabel",
                      f"{(t1 - t0) / 1000:.1f} s folded", middle=True)
            continue
        for t in range(-(-t0 // steps[0]) * steps[0], t1 + 1, steps[0]):
            level = max(k for k in steps if t % k == 0)
            if level >= step:  # the ticks of this zoom; the page's script shows the finer or coarser ones
                svg.line(t, 16, t, height, "tick", attrs=f' data-step="{level}"')
                svg.label(slots, t, (TICK_Y,), f"{t / 1000:g} s", 10, "ticklabel", attrs=f' data-step="{level}"')
            else:
                hide = f' data-step="{level}" style="display:none"'
                svg.line(t, 16, t, height, "tick", attrs=hide)
                svg.text(t, TICK_Y, f"{t / 1000:g} s", "ticklabel", attrs=hide)
    # lanes
    folds_at = 0  # backgrounds go first: everything else is drawn over them
    for k, p in enumerate(lanes):
        y = TOP + k * LANE_H
        svg.parts.insert(folds_at, f'<rect class="lane" x="0" y="{y}" width="{tm.width}" height="{LANE_H - 4}" '
                                   f'data-lane="{p}"/>')
    # outages
    for i, (t, _p, kind, f) in enumerate(ev):
        if kind == "outage":
            machine, until = f.machine, f.until_ms
            for k, p in enumerate(lanes):
                if machine == "*" or procs[p].machine == machine:
                    svg.rect(t, min(until, history.end_ms), TOP + k * LANE_H, LANE_H - 4, "outage",
                             f"outage of {machine} until {until / 1000:.3f} s\n" + history.describe(i))
    # process lives and the node lease: world facts, and the model's belief where it differs
    ends = fx.ended
    for k, p in enumerate(lanes):
        y = TOP + k * LANE_H
        start = next((t for t, q, kind, _f in ev if q == p and kind == "start"), 0)
        end = ends.get(p, (history.end_ms, None))[0]
        svg.line(start, y + LANE_H / 2, end, y + LANE_H / 2, "life", f"{procs[p].label} runs", f"stroke:{color[p]}")
        for s, e, i in fx.lease.get(p, ()):
            svg.rect(s, e, y + 4, 9, "lease", f"node lease valid (world facts) {s / 1000:.3f}-{e / 1000:.3f} s\n"
                     + history.describe(i), f"fill:{color[p]}")
        clock = procs[p].clock
        believed = []
        for i, (t, q, kind, f) in enumerate(ev):
            if q == p and kind == "lease_valid":
                believed.append((t, min(clock.true_at(f.until_ms), end), i))
        world = [(s, e) for s, e, _i in fx.lease.get(p, ())]
        for s, e, i in _merge(believed):
            for a, b in minus((s, e), world):  # where the model believes more than the world's facts give
                svg.rect(a, b, y + 14, 5, "belief", f"the model believes its node lease valid here, the world's "
                         f"facts do not ({a / 1000:.3f}-{b / 1000:.3f} s)\n" + history.describe(i))
    # the violation first: its proving events' labels take their slots before any other
    order = sorted(range(len(ev)), key=lambda i: i not in proving)
    # holds per actor, in the owner's colour
    for h in fx.holds:
        if h.proc not in lane_of:
            continue
        y = TOP + lane_of[h.proc] * LANE_H + 22 + actor_row[h.actor] * hold_h
        for s, e in fx.windows(h) or [(h.start_ms, h.start_ms)]:
            svg.rect(s, max(e, s + 1), y, hold_h - 1, "hold", f"{h.describe(history)}", f"fill:{color[h.proc]}")
        if len(actors) <= 4:
            svg.label(slots, h.start_ms, (y + hold_h - 1,), h.actor, 9, "holdlabel", h.describe(history))
    # marks on the lanes: acts, starts, crashes, exits, faults, fences; a glyph with no room is a dot
    for i in order:
        t, p, kind, f = ev[i]
        if p not in lane_of:
            continue
        y = TOP + lane_of[p] * LANE_H
        mid = y + LANE_H / 2
        tip = history.describe(i) + "\n" + phrase(history, i)
        if kind in ("served", "data_acked"):
            svg.dot(t, y + LANE_H - 10, 3 if kind == "served" else 2.2, "act " + kind, tip, f"fill:{color[p]}")
        elif kind in ("start", "crash", "exit"):
            if svg.label(slots, t, (mid - 2, mid + 12), {"start": "▶", "crash": "✕", "exit": "■"}[kind], 12,
                         "life " + kind, tip) is None:
                svg.dot(t, mid, 3, "lifedot " + kind, tip)
        elif kind == "fault":
            word = {"request_lost": " lost", "reply_lost": " no reply", "late": " late", "held_back": " late",
                    "slow_reply": " slow"}.get(f.what, "")
            if f.what in ("request_lost", "late", "held_back"):
                svg.line(t, y + LANE_H - 4, t, y + LANE_H + 4, "w lost" if f.what == "request_lost" else "w late", tip)
            if (svg.label(slots, t, (y + LANE_H - 6,), "⚡" + word, 11, "fault", tip) is None
                    and svg.label(slots, t, (y + LANE_H - 6,), "⚡", 11, "fault", tip) is None):
                svg.dot(t, y + LANE_H - 10, 2.5, "faultdot", tip)
        elif kind in ("fenced", "lease_ran_out", "lease_lost", "lease_invalidated", "hold_ended", "hold_began",
                      "release_pending", "released", "acquire_unresolved", "resolver_release", "request_failed"):
            svg.dot(t, mid + 6, 1.8, "mark", tip)
    # the bucket lane and the writes, as arrows from the sender at their send to the bucket
    svg.parts.insert(folds_at, f'<rect class="bucket" x="0" y="{bucket_y}" width="{tm.width}" '
                               f'height="{BUCKET_H - 10}"/>')
    rows = tuple(bucket_y + 18 + r * 13 for r in range(4))  # a write's label goes where it fits, else only hovers
    for i in order:
        t, p, kind, f = ev[i]
        if kind == "fault_delete" and p < 0:
            svg.label(slots, t, rows[::-1], f"✕ {f.key} deleted", WLABEL_PX, "wlabel refused", history.describe(i))
        if p not in lane_of:
            continue
        y = TOP + lane_of[p] * LANE_H + LANE_H / 2 + 3  # from just under the sender's life line
        if kind == "apply":
            key, op, cond, state, sent = f.key, f.op, f.cond, f.state, f.sent_ms
            named, serial = f.named_serial, f.serial
            renewal = _renewal(history, i)
            cls = "w " + ("renewal" if renewal else "cond" if cond else "uncond")
            late = t - sent > history.params["attempt_timeout_ms"]
            if late:
                cls += " late"
            label = {"if-match": f"if-match #{named}", "if-none-match": "if-none-match", None: "unconditional"}.get(
                cond, str(cond))
            tip = (f"{op} {key} ({label}): applied as #{serial}" + (f', "{state}"' if state else "")
                   + (" - LATE: applied after its sender's timeout" if late else "") + "\n" + history.describe(i))
            svg.line(sent, y, t, bucket_y, cls, tip, f"stroke:{color[p]}")
            if not (renewal or key.startswith("wal/")) or i in proving:  # routine writes only hover
                svg.label(slots, t, rows, f"{'late ' if late else ''}{label} ✓ {key}", WLABEL_PX,
                          "wlabel" + (" key" if i in proving else ""), tip)
        elif kind == "refused":
            key, op, cond, met, sent, status = f.key, f.op, f.cond, f.met, f.sent_ms, f.status
            tip = f"{op} {key} ({cond}) refused: {status}, it met \"{met}\"\n" + history.describe(i)
            svg.line(sent, y, t, bucket_y, "w refused", tip)
            svg.label(slots, t, rows, f"{cond} {status} {key}", WLABEL_PX,
                      "wlabel refused" + (" key" if i in proving else ""), tip)
    # the violation: its proving events ringed, the true time between them shaded
    if violation is not None and proving:
        times = [ev[i].t_ms for i in proving if 0 <= i < len(ev)]
        lo, hi = min(times), max(times)
        involved = sorted({lane_of[ev[i].proc] for i in proving if ev[i].proc in lane_of})
        if hi > lo:
            for k in involved or range(n):
                svg.rect(lo, hi, TOP + k * LANE_H, LANE_H - 4, "overlap",
                         f"{violation.invariant}: {hi - lo} ms of true time between the proving events")
        for i in sorted(proving):
            if not 0 <= i < len(ev):
                continue
            t, p = ev[i].t_ms, ev[i].proc
            yy = TOP + lane_of[p] * LANE_H + LANE_H / 2 if p in lane_of else bucket_y + 10
            if ev[i].kind in ("apply", "refused"):
                yy = bucket_y  # the write's arrow's tip
            svg.line(t, 16, t, height, "proving", history.describe(i))
            svg.dot(t, yy, 7, "violation", f"{violation.invariant}: {violation.message}\n" + history.describe(i))
    focus = _focus(history, violation)
    names, width_px = _lane_labels(lanes, procs, color, base, bucket_y)
    title = (f"{history.model}: {violation.invariant} violated" if violation is not None
             else f"{history.model}: no violation")
    story = tell(plan, history, violation) if violation is not None else ""
    return _PAGE.format(
        title=_e(title), seed=history.seed, model=_e(history.model),
        message=_e(f"{violation.invariant}: {violation.message}") if violation is not None else "no violation",
        events=len(ev), seconds=f"{history.end_ms / 1000:.1f}", processes=len(lanes), folds=len(tm.folds),
        label_w=width_px, height=height, width=round(tm.width) + RIGHT_PAD, scale=tm.scale, pad=RIGHT_PAD, labels=names,
        body="\n".join(svg.parts), focus=json.dumps(focus), segments=json.dumps(tm.segments), story=_e(story),
        script=_SCRIPT, style=_STYLE)


def _focus(history, violation) -> list[int] | None:
    """The stretch of true time the page opens on, [from, first proving event, last, to]: the proving events,
    with time before them for their causes (three heartbeats, or a quarter of the stretch) and a little after;
    None with no violation."""
    if violation is None:
        return None
    times = [history.events[i].t_ms for i in violation.events if 0 <= i < len(history.events)]
    if not times:
        return None
    lo, hi = min(times), max(times)
    beat = history.params.get("heartbeat_period_ms", 3_000)
    before, after = max(3 * beat, (hi - lo) // 4), max(beat // 2, (hi - lo) // 10)
    return [max(0, lo - before), lo, hi, min(history.end_ms, hi + after)]


def _lane_labels(lanes, procs, color, base: int, bucket_y: float) -> tuple[str, int]:
    """The column of lane names beside the timeline, and its width (wide enough for the longest)."""
    rows = []
    for k, p in enumerate(lanes):
        pr = procs[p]
        y = TOP + k * LANE_H
        sub = f"{pr.machine}, clock {pr.offset_ms - base:+d} ms" + (f", drift {pr.drift_ppm:+d} ppm" if pr.drift_ppm
                                                                     else "")
        rows.append((y, pr.label, sub, f"fill:{color[p]}"))
    rows.append((bucket_y, "bucket", "writes as they took effect", ""))
    width = 8 + max(max(text_w(name, 12.5), text_w(sub, 11)) for _y, name, sub, _style in rows) + 12
    out = "".join(f'<text class="lanelabel" x="8" y="{y + 20}"{_style(style)}>{_e(name)}</text>'
                  f'<text class="lanesub" x="8" y="{y + 36}">{_e(sub)}</text>' for y, name, sub, style in rows)
    return out, round(width)


def _merge(intervals):
    out = []
    for s, e, i in sorted(intervals):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e, out[-1][2])
        else:
            out.append((s, e, i))
    return out


NICE_STEPS = (100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000, 600_000)


def _nice_step(ms: float) -> int:
    return next((step for step in NICE_STEPS if step >= ms), NICE_STEPS[-1])


_STYLE = """
body{font:13px system-ui,sans-serif;margin:0;color:#222;background:#fff}
header{padding:10px 16px;border-bottom:1px solid #ddd}
h1{font-size:17px;margin:0 0 4px 0} .msg{color:#b00;font-weight:600}
.bar{display:flex;gap:8px;align-items:center;margin-top:6px;font-size:12px;color:#555}
button{font:12px system-ui;padding:2px 8px}
.wrap{display:flex;border-bottom:1px solid #ddd}
.labels{flex:0 0 auto;background:#fafafa;border-right:1px solid #ddd}
.scroll{overflow-x:auto;flex:1 1 auto}
.lane{fill:#f6f7f9} .bucket{fill:#eef1f5}
.lanelabel{font:600 12px ui-monospace,monospace} .lanesub{font:11px ui-monospace,monospace;fill:#666}
.tick{stroke:#e4e4e4;stroke-width:1} .ticklabel{font:10px ui-monospace,monospace;fill:#888}
.fold{fill:url(#zig);opacity:.55} .foldlabel{font:10px ui-monospace,monospace;fill:#999}
.outage{fill:#999;opacity:.25}
.life{stroke-width:1.2;opacity:.5} text.life{font-size:12px}
.lease{opacity:.85} .belief{fill:#fff;stroke:#e00;stroke-width:1.2;stroke-dasharray:3 2}
.hold{opacity:.9} .holdlabel{font:9px ui-monospace,monospace;fill:#222}
.holdlabel,.wlabel,.fault,.ticklabel,.foldlabel{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
.act{stroke:#fff;stroke-width:.5} .mark{fill:#555}
.fault{font-size:11px}
.w{stroke-width:1.2;opacity:.8;marker-end:url(#arrow)} .w.renewal{opacity:.18}
.w.uncond{stroke-dasharray:4 2} .w.late{stroke-width:2.2} .w.refused{stroke:#d00 !important;opacity:.9}
.w.lost{stroke:#888;stroke-width:2}
.wlabel{font:9.5px ui-monospace,monospace;fill:#333} .wlabel.refused{fill:#c00} .wlabel.lost{fill:#777}
.overlap{fill:#e00;opacity:.13}
.proving{stroke:#e00;stroke-width:1;stroke-dasharray:3 3}
.violation{fill:none;stroke:#e00;stroke-width:2.5}
.legend span{margin-right:12px}
pre{margin:0;padding:10px 16px;font:12px ui-monospace,monospace;white-space:pre-wrap}
details{border-top:1px solid #ddd}
summary{padding:8px 16px;cursor:pointer;font-weight:600}
"""

_SCRIPT = """
(function(){
  var segs = SEGMENTS, focus = FOCUS, zoom = 1, folded = true;
  var svg = document.getElementById('timeline'), scroller = svg.parentNode;
  var els = svg.querySelectorAll('[data-a]');
  var texts = Array.prototype.slice.call(svg.querySelectorAll('text'));
  texts = texts.filter(function(e){ return e.classList.contains('key'); }).concat(
          texts.filter(function(e){ return !e.classList.contains('key'); }));  // the proving events' labels first
  var end = segs[segs.length - 1][1];
  var tickEls = Array.prototype.slice.call(svg.querySelectorAll('[data-step]'));
  var levels = tickEls.map(function(e){ return +e.dataset.step; }).filter(function(v, i, all){
    return all.indexOf(v) === i; }).sort(function(a, b){ return a - b; });
  function ticks(){
    // the finest step whose ticks stand at least 90 px apart at this zoom
    var pick = levels[levels.length - 1];
    for (var i = 0; i < levels.length; i++){ if (levels[i] * SCALE * zoom >= 90) { pick = levels[i]; break; } }
    tickEls.forEach(function(e){ e.style.display = +e.dataset.step >= pick ? '' : 'none'; });
  }
  function xOf(t){
    var x = 0;
    for (var i = 0; i < segs.length; i++){
      var s = segs[i], w = s[3] - s[2], span = s[1] - s[0];
      if (!folded && i % 2 === 1) { w = span * SCALE; }
      if (t <= s[1]) { return (x + w * (Math.max(t, s[0]) - s[0]) / Math.max(span, 1)) * zoom; }
      x += w;
    }
    return x * zoom;
  }
  function timeAt(px){
    // the inverse of xOf: the true time drawn at x = px
    var x = 0;
    for (var i = 0; i < segs.length; i++){
      var s = segs[i], w = (!folded && i % 2 === 1 ? (s[1] - s[0]) * SCALE : s[3] - s[2]) * zoom;
      if (px <= x + w || i === segs.length - 1) {
        return s[0] + (s[1] - s[0]) * Math.max(0, px - x) / Math.max(w, 1e-9);
      }
      x += w;
    }
  }
  function declutter(w){
    // a label that a zoom out or an unfold brings onto another, or off the page, hides (its mark still hovers)
    var kept = [], hidden = 0;
    texts.forEach(function(e){ e.style.visibility = ''; });
    texts.forEach(function(e){
      if (e.style.display === 'none') { return; }
      var b = e.getBBox();
      var clash = b.x < 0 || b.x + b.width > w || kept.some(function(o){
        return b.x < o.x + o.width && o.x < b.x + b.width && b.y < o.y + o.height && o.y < b.y + b.height; });
      if (clash) { e.style.visibility = 'hidden'; hidden++; } else { kept.push(b); }
    });
    svg.setAttribute('data-hidden', hidden);
  }
  function redraw(){
    for (var i = 0; i < els.length; i++){
      var e = els[i], a = xOf(+e.dataset.a), tag = e.tagName;
      if (tag === 'rect'){ e.setAttribute('x', a); e.setAttribute('width', Math.max(xOf(+e.dataset.b) - a, 1.5)); }
      else if (tag === 'line'){ e.setAttribute('x1', a); e.setAttribute('x2', xOf(+e.dataset.b)); }
      else if (tag === 'circle'){ e.setAttribute('cx', a); }
      else { e.setAttribute('x', a); }
    }
    var w = xOf(end) + PAD;
    svg.setAttribute('width', w);
    svg.querySelectorAll('.lane,.bucket').forEach(function(r){ r.setAttribute('width', w); });
    document.getElementById('zoomlevel').textContent = Math.round(zoom * 100) + '%';
    ticks();
    declutter(w);
  }
  function zoomTo(z, at){
    // zoom to z keeping the point at x = at (default: the middle of the view) where it is on the screen
    var view = scroller.clientWidth, left = scroller.scrollLeft;
    if (at === undefined) { at = left + view / 2; }
    var screen = at - left, old = zoom;
    zoom = Math.max(0.01, Math.min(z, 80000 / (xOf(end) / zoom)));
    redraw();
    scroller.scrollLeft = at * zoom / old - screen;
  }
  function show(a, lo, hi, b){
    // the stretch [a, b] of true time across three quarters of the view (zoomed in at most 8x), the rest on
    // the right for the labels of the proving writes; zoomed out (down to 1/2, where labels thin out) only
    // as far as the proving events [lo, hi] need
    var view = scroller.clientWidth;
    zoom = 1;
    var fit = 0.75 * view / Math.max(xOf(b) - xOf(a), 1), need = 0.75 * view / Math.max(xOf(hi) - xOf(lo), 1);
    zoom = Math.max(0.5, Math.min(8, 80000 / xOf(end), Math.max(fit, Math.min(1, need))));
    redraw();
    var left = xOf(b) - xOf(a) <= 0.75 * view ? xOf(a) - 0.05 * view : xOf(b) - 0.8 * view, first = Infinity, last = 0;
    svg.querySelectorAll('text.key').forEach(function(e){ var k = e.getBBox(); last = Math.max(last, k.x + k.width); });
    svg.querySelectorAll('circle.violation').forEach(function(e){ first = Math.min(first, +e.getAttribute('cx')); });
    left = Math.max(0, Math.min(Math.max(left, last + 8 - view), first - 20));
    for (var pass = 0; pass < 3; pass++){  // and no label cut by the view's left edge, if the right one keeps those
      texts.forEach(function(e){
        if (e.style.display === 'none' || e.style.visibility === 'hidden') { return; }
        var k = e.getBBox();
        if (k.x < left && k.x + k.width > left && k.x - 4 + view >= last + 8) { left = Math.max(0, k.x - 4); }
      });
    }
    scroller.scrollLeft = left;
  }
  function whole(){
    // the whole run across the view, its labels thinned out to those with room
    zoom = 1;
    zoom = Math.max(0.01, (scroller.clientWidth - PAD) / xOf(end));
    redraw();
    scroller.scrollLeft = 0;
  }
  document.getElementById('zin').onclick = function(){ zoomTo(zoom * 1.5); };
  document.getElementById('zout').onclick = function(){ zoomTo(zoom / 1.5); };
  document.getElementById('whole').onclick = whole;
  var back = document.getElementById('focus');
  if (focus) { back.onclick = function(){
    folded = true; document.getElementById('fold').textContent = 'unfold quiet stretches'; show.apply(null, focus); }; } else { back.style.display = 'none'; }
  document.getElementById('fold').onclick = function(){
    // fold or unfold, the instant at the middle of the view staying there
    var view = scroller.clientWidth, t = timeAt(scroller.scrollLeft + view / 2);
    folded = !folded;
    this.textContent = folded ? 'unfold quiet stretches' : 'fold quiet stretches';
    redraw();
    scroller.scrollLeft = xOf(t) - view / 2;
  };
  scroller.addEventListener('wheel', function(ev){
    if (ev.ctrlKey){
      ev.preventDefault();
      zoomTo(zoom * (ev.deltaY < 0 ? 1.2 : 1/1.2), ev.clientX - svg.getBoundingClientRect().left);
    }
  }, {passive:false});
  if (focus) { show.apply(null, focus); } else { redraw(); }
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>{style}</style></head>
<body>
<header>
<h1>{title}</h1>
<div class="msg" id="violation-message">{message}</div>
<div class="bar">model {model} · seed {seed} · {processes} processes · {events} events · {seconds} s simulated ·
{folds} quiet stretches folded</div>
<div class="bar"><button id="zout">−</button><span id="zoomlevel">100%</span><button id="zin">+</button>
<button id="fold">unfold quiet stretches</button> <button id="focus">the violation</button>
<button id="whole">the whole run</button> (ctrl + wheel zooms; hover a mark for its fields)</div>
<div class="bar legend"><span>▮ node lease (world facts; red dashes: the model believes more)</span>
<span>▬ holds, in the owner's colour</span><span>● served · data acked</span><span>→ a write, sent to applied
(dashed: unconditional; thick: late; red: refused, 412 or 404)</span><span>⚡ fault</span><span>grey: outage</span>
<span style="color:#c00">◯ proves the violation; red shade: the true time between</span></div>
</header>
<div class="wrap">
<svg class="labels" width="{label_w}" height="{height}" xmlns="http://www.w3.org/2000/svg">{labels}</svg>
<div class="scroll"><svg id="timeline" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">
<defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto">
<path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker>
<pattern id="zig" width="8" height="8" patternUnits="userSpaceOnUse"><path d="M0,8 L4,0 L8,8" stroke="#bbb" fill="none"/></pattern></defs>
{body}
</svg></div></div>
<details open><summary>The story</summary><pre id="story">{story}</pre></details>
<script>var SEGMENTS = {segments}; var SCALE = {scale}; var PAD = {pad}; var FOCUS = {focus};</script>
<script>{script}</script>
</body></html>
"""
