"""Two campaigns of the same seeds compared seed by seed: does a known finding show under one of them
in more seeds than chance allows?

Two models run on the same seeds draw the same faults until their decisions differ, and from there a
few seeds move either way by chance (a request answered sooner shifts what later requests draw). So a
finding's seed count is compared on the seeds where only one of the two shows it, by a two-sided sign
test: 15 against 14 of 2,000 seeds (3 : 2 seeds moving) is chance, 11 : 0 is not. `amendments` judges a
variant with it, `diff` a report against its baseline, `broken` each model against the control: a model
whose violations hide as a finding shows there as a finding in more seeds than the correct model has.

Reads reports' `raw.finding_seeds` (finding id -> the seeds that showed it); runs nothing. It lives with the
checkers (whose verdicts it weighs) so that every layer above may use it: the mutants' probe as well as the
command line.
"""

from __future__ import annotations

from math import comb

SIGNIFICANCE = 0.05


def sign_test_p(a: int, b: int) -> float:
    """Two-sided sign test: the chance of a split at least as uneven as a : b of a + b fair coin tosses."""
    n, k = a + b, max(a, b)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(comb(n, i) for i in range(k, n + 1)) / 2 ** n)


def finding_seeds(report: dict) -> dict[str, set[int]]:
    """finding id -> the seeds of a report that showed it (empty for a report without its raw block)."""
    return {fid: set(seeds) for fid, seeds in ((report.get("raw") or {}).get("finding_seeds") or {}).items()}


def findings_paired(mine: dict, theirs: dict) -> dict[str, dict]:
    """finding id -> {"variant_only": seeds only `mine` shows it in, "correct_only": only `theirs`, "p": the
    sign test's}, for every finding either shows (`mine`, `theirs`: finding id -> seeds)."""
    out = {}
    for fid in sorted(set(mine) | set(theirs), key=lambda f: (len(f), f)):
        a, b = set(mine.get(fid, ())), set(theirs.get(fid, ()))
        out[fid] = {"variant_only": len(a - b), "correct_only": len(b - a), "p": round(sign_test_p(len(a - b), len(b - a)), 4)}
    return out


def more_often(d: dict) -> bool:
    """A finding shows under the first campaign in more seeds than under the second, beyond chance (sign
    test over the seeds where only one of them shows it, p < SIGNIFICANCE)."""
    a, b = d["variant_only"], d["correct_only"]
    return a > b and sign_test_p(a, b) < SIGNIFICANCE


def less_often(d: dict) -> bool:
    """The other way round, held to the same test (issue 44): a finding shows under the first campaign in fewer
    seeds than under the second, beyond chance. What "removes F-n" needs; fewer within chance is no removal."""
    return more_often({"variant_only": d["correct_only"], "correct_only": d["variant_only"]})


def rises(mine: dict, theirs: dict, other: str = "the other campaign") -> list[str]:
    """One line for each finding `mine` shows in more seeds than `theirs` (paired; beyond chance or not),
    saying which: what a campaign must never leave unsaid."""
    out = []
    for fid, d in findings_paired(mine, theirs).items():
        if d["variant_only"] > d["correct_only"]:
            beyond = "beyond chance" if more_often(d) else "within chance"
            out.append(f"{fid} in {d['variant_only']} seeds where {other} does not ({d['correct_only']} the other "
                       f"way; sign test p {d['p']:g}: {beyond})")
    return out
