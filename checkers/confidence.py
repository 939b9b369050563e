"""How sure a figure measured over seeds is: the bounds and intervals a report prints beside it (issue 48, part 5).

Every figure a campaign gives that varies by seed is a count out of the seeds it ran (a violation, a coverage
point reached, a finding shown, a broken model caught) or an order statistic of many measurements (a failover's
p50, p99). Each gets an interval at LEVEL (95 %):

- k of n seeds: the Clopper-Pearson interval, exact, from the beta quantile (`clopper_pearson`); with k = 0 the
  one-sided bound `zero_bound`, 1 - 0.05^(1/n) (about the rule of three's 3/n): 0 violations in 20,000 seeds is
  "under 1.5e-4 per seed at 95 %", never "safe";
- a quantile of n measurements: the distribution-free interval of two order statistics, their ranks from the
  binomial (`quantile_interval`), a side the sample cannot bound left open (None);
- two reports compared (`runner.py diff`): a share moved beyond chance when the two intervals are apart
  (`apart`); a minimum shrank beyond chance when more of NEW's values fall below every one of OLD's than
  chance allows (`precedence_p`, an exact test for two samples of one distribution).

They bound a chance over the seed distribution this tool draws (scenarios/swarm.py), not over real deployments;
docs/guide.md says what they mean and what they do not. The standard library only: the regularized incomplete
beta function by its continued fraction, its quantile by bisection (tests/checkers/test_confidence.py holds
them to scipy's and R's figures).

Like checkers/paired.py, it lives with the checkers so that every layer above may use it; it declares no
invariant and reads no history.
"""

from __future__ import annotations

from math import comb, exp, lgamma, log, log1p

LEVEL = 0.95
_TINY = 1e-300
_EPS = 1e-15


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1 (its continued fraction,
    evaluated by the modified Lentz method, on the side of x where it converges fast)."""
    if a <= 0 or b <= 0:
        raise ValueError(f"betainc needs a, b > 0 (got {a}, {b})")
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - betainc(b, a, 1.0 - x)
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x)) / a
    # Lentz: f = 1 / (1 + d1 / (1 + d2 / (1 + ...)))
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    f = d
    for m in range(1, 100_000):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + num / c
            c = c if abs(c) > _TINY else _TINY
            f *= c * d
        if abs(c * d - 1.0) < _EPS:
            return front * f
    raise ArithmeticError(f"betainc({a}, {b}, {x}) did not converge")  # pragma: no cover


def beta_ppf(q: float, a: float, b: float) -> float:
    """The q-quantile of the Beta(a, b) distribution: the x with I_x(a, b) = q (bisection, to float precision)."""
    if not 0 <= q <= 1:
        raise ValueError(f"a quantile's level is in [0, 1] (got {q})")
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p): I_{1-p}(n - k, k + 1)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return betainc(n - k, k + 1, 1.0 - p)


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact (Clopper-Pearson) two-sided interval for a chance seen k times in n tries: each side holds
    (1 - level) / 2 of the chance at most."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"clopper_pearson needs 0 <= k <= n, n > 0 (got {k} of {n})")
    alpha = 1 - level
    lo = 0.0 if k == 0 else beta_ppf(alpha / 2, k, n - k + 1)
    hi = 1.0 if k == n else beta_ppf(1 - alpha / 2, k + 1, n - k)
    return lo, hi


def zero_bound(n: int, level: float = LEVEL) -> float:
    """Seen 0 times in n tries: the one-sided upper bound on its chance, 1 - (1 - level)^(1/n) (exact; the rule
    of three, 3/n, is its approximation at 95 %)."""
    if n <= 0:
        raise ValueError(f"zero_bound needs n > 0 (got {n})")
    return 1.0 - (1.0 - level) ** (1.0 / n)


def share(k: int, n: int, level: float = LEVEL) -> dict:
    """k of n, for a report: the share, its Clopper-Pearson interval, and with k = 0 the one-sided bound."""
    if n <= 0:
        return {"k": k, "n": n, "share": None, "interval": None}
    lo, hi = clopper_pearson(k, n, level)
    out = {"k": k, "n": n, "share": _sig(k / n), "interval": [_sig(lo), _sig(hi)]}
    if k == 0:
        out["upper_one_sided"] = _sig(zero_bound(n, level))
        out["rule_of_three"] = _sig(3 / n)
    return out


def quantile_ranks(n: int, q: float, level: float = LEVEL) -> tuple[int | None, int | None]:
    """The 1-based ranks (l, u) of the order statistics X_(l) <= X_(u) that hold the q-quantile with chance at
    least `level`, each side missing it with chance at most (1 - level) / 2 (the number of values below the
    quantile is Binomial(n, q)); None for a side n values cannot bound."""
    if n <= 0 or not 0 < q < 1:
        raise ValueError(f"quantile_ranks needs n > 0 and 0 < q < 1 (got {n}, {q})")
    alpha = (1 - level) / 2
    # l: the largest rank with P(B <= l - 1) <= alpha (B ~ Binomial(n, q)); the cdf grows with l
    if binom_cdf(0, n, q) > alpha:
        low = None
    else:
        a, b = 1, n  # cdf(a - 1) <= alpha holds at a
        while a < b:
            mid = (a + b + 1) // 2
            if binom_cdf(mid - 1, n, q) <= alpha:
                a = mid
            else:
                b = mid - 1
        low = a
    # u: the smallest rank with P(B <= u - 1) >= 1 - alpha
    if binom_cdf(n - 1, n, q) < 1 - alpha:
        high = None
    else:
        a, b = 1, n
        while a < b:
            mid = (a + b) // 2
            if binom_cdf(mid - 1, n, q) >= 1 - alpha:
                b = mid
            else:
                a = mid + 1
        high = a
    return low, high


def quantile_interval(values: list, q: float, level: float = LEVEL) -> list:
    """[low, high]: the order-statistic interval of the q-quantile of `values` (sorted or not); a side the
    sample cannot bound is None (a p99 of fewer than 368 values has no upper bound: 0.99^367 > 0.025)."""
    v = sorted(values)
    if not v:
        return [None, None]
    low, high = quantile_ranks(len(v), q, level)
    return [None if low is None else v[low - 1], None if high is None else v[high - 1]]


def apart(k_old: int, n_old: int, k_new: int, n_new: int, level: float = LEVEL) -> int:
    """-1 if NEW's share lies below OLD's beyond chance (their intervals are apart, NEW's under OLD's), +1 if
    above, 0 if their intervals overlap (within chance). The test `diff` holds a coverage point's share to."""
    if n_old <= 0 or n_new <= 0:
        return 0
    lo_o, hi_o = clopper_pearson(k_old, n_old, level)
    lo_n, hi_n = clopper_pearson(k_new, n_new, level)
    return -1 if hi_n < lo_o else 1 if lo_n > hi_o else 0


def precedence_p(k: int, m: int, n: int) -> float:
    """The chance that at least k of n values of one sample fall below every one of m values of another, both
    drawn from one distribution (every order of the m + n values as likely): C(n, k) / C(m + n, k). `diff`
    holds a margin's minimum to it: NEW's values below OLD's least one, k of them, beyond chance."""
    if k <= 0:
        return 1.0
    if k > n or m < 0:
        return 0.0
    return comb(n, k) / comb(m + n, k)


def _sig(x: float) -> float:
    """A figure rounded for a report (6 significant digits: an interval's ends are not exact beyond that)."""
    return float(f"{x:.6g}")
