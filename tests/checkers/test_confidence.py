"""checkers/confidence.py: the bounds and intervals beside every figure that varies by seed (issue 48, part 5).

The reference figures are scipy 1.17.1's (`scipy.special.betainc`, `scipy.stats.beta.ppf`, `scipy.stats.binom`),
computed once and quoted here, so that no test imports scipy; R's `binom.test(k, n)$conf.int` gives the same
Clopper-Pearson ends to the digits R prints (e.g. binom.test(5, 10): 0.1870860 0.8129140; binom.test(7, 200):
0.01418553 0.07078100)."""

from __future__ import annotations

import itertools
import random

import pytest

from checkers import confidence as c


@pytest.mark.parametrize("a, b, x, want", [
    (0.5, 0.5, 0.3, 0.36901011956554536),
    (2, 3, 0.4, 0.5248),  # a polynomial: 1 - sum_{j<2} C(4, j) 0.4^j 0.6^(4-j)
    (10, 20, 0.2, 0.049263517304212585),
    (1000, 50, 0.95, 0.34450982299155564),
    (20000, 3, 0.9999, 0.676622279588659),
    (3, 20000, 0.0002, 0.7619846060932671),
])
def test_the_incomplete_beta_is_scipys(a, b, x, want):
    assert c.betainc(a, b, x) == pytest.approx(want, rel=1e-11, abs=1e-13)


def test_the_incomplete_beta_at_its_ends_and_refusing_bad_shapes():
    assert c.betainc(3, 4, 0) == 0.0 and c.betainc(3, 4, 1) == 1.0
    with pytest.raises(ValueError):
        c.betainc(0, 1, 0.5)


# (k, n) -> scipy's beta.ppf(0.025, k, n - k + 1) and beta.ppf(0.975, k + 1, n - k) (0 and 1 at the ends)
CLOPPER_PEARSON = [
    (0, 1, 0.0, 0.975),
    (0, 10, 0.0, 0.3084971078187607),
    (1, 10, 0.0025285785444617848, 0.4450161170281954),
    (5, 10, 0.18708602844739855, 0.8129139715526015),
    (10, 10, 0.6915028921812392, 1.0),
    (1, 3, 0.008403758659612636, 0.9057006759497539),
    (7, 200, 0.014185525898419246, 0.0707809983509772),
    (150, 200, 0.6840371666701309, 0.8083928303774125),
    (1234, 2000, 0.5952863544920243, 0.6383700196787462),
    (0, 20000, 0.0, 0.0001844269639618992),
    (3, 20000, 3.093467444528525e-05, 0.00043830045339363695),
    (19999, 20000, 0.9997214496678255, 0.9999987341104021),
]


@pytest.mark.parametrize("k, n, lo, hi", CLOPPER_PEARSON)
def test_clopper_pearson_is_scipys_and_rs(k, n, lo, hi):
    got = c.clopper_pearson(k, n)
    assert got[0] == pytest.approx(lo, rel=1e-10, abs=1e-15)
    assert got[1] == pytest.approx(hi, rel=1e-10, abs=1e-15)


def test_clopper_pearson_covers_what_it_claims():
    """Each side of the 95 % interval misses the true chance at most 2.5 % of the time: checked exactly, by
    summing the binomial over every k, for a few (n, p)."""
    from math import comb

    for n, p in ((10, 0.3), (40, 0.05), (200, 0.5)):
        below = above = 0.0
        for k in range(n + 1):
            lo, hi = c.clopper_pearson(k, n)
            weight = comb(n, k) * p ** k * (1 - p) ** (n - k)
            below += weight if hi < p else 0
            above += weight if lo > p else 0
        assert below <= 0.025 and above <= 0.025, (n, p, below, above)


def test_zero_in_n_is_a_bound_on_the_chance_per_seed():
    """0 violations in 20,000 seeds: under 1.5e-4 per seed at 95 % (the exact 1 - 0.05^(1/n) and the rule of
    three agree to 3 digits), one-sided, so tighter than the two-sided interval's upper end."""
    n = 20_000
    assert c.zero_bound(n) == pytest.approx(1.4978e-4, rel=1e-4)
    assert c.zero_bound(n) < 3 / n < c.clopper_pearson(0, n)[1]
    assert 1 - (1 - c.zero_bound(n)) ** n == pytest.approx(0.95)  # the chance of 0 in n at the bound is 5 %
    s = c.share(0, n)
    assert s["upper_one_sided"] == pytest.approx(1.4978e-4, rel=1e-4) and s["rule_of_three"] == 1.5e-4
    assert "upper_one_sided" not in c.share(1, n)
    assert c.share(0, 0)["interval"] is None


@pytest.mark.parametrize("n, q, ranks", [
    (10, 0.5, (2, 9)),  # the textbook median interval of 10 values, X(2)..X(9)
    (100, 0.5, (40, 61)),
    (1000, 0.99, (983, 997)),
    (40000, 0.99, (39561, 39640)),
    (367, 0.99, (359, None)),  # 0.99^367 > 0.025: no upper bound yet
    (368, 0.99, (360, 368)),
])
def test_order_statistic_ranks_follow_the_binomial(n, q, ranks):
    """scipy's binom(n, q).cdf on each side: for n = 1000, q = 0.99, cdf(982) = 0.0138 <= 0.025 < cdf(983) =
    0.0264, and cdf(995) = 0.9713 < 0.975 <= cdf(996) = 0.9899."""
    low, high = c.quantile_ranks(n, q)
    assert (low, high) == ranks
    if low is not None:
        assert c.binom_cdf(low - 1, n, q) <= 0.025 < c.binom_cdf(low, n, q)
    if high is not None:
        assert c.binom_cdf(high - 2, n, q) < 0.975 <= c.binom_cdf(high - 1, n, q)


def test_a_quantile_interval_holds_the_true_quantile_as_often_as_it_claims():
    """Drawn 400 times, 200 uniform values each: the interval of the median misses 0.5 in about 5 % of the
    draws at most (a fixed stream: the count is the same every run)."""
    rng = random.Random(48)
    missed = sum(1 for _ in range(400) if not (lambda iv: iv[0] <= 0.5 <= iv[1])(
        c.quantile_interval([rng.random() for _ in range(200)], 0.5)))
    assert missed <= 0.06 * 400
    assert c.quantile_interval([], 0.5) == [None, None]
    assert c.quantile_interval([5, 1, 3], 0.99) == [3, None]  # 3 values bound a p99 from below only


def test_apart_calls_a_share_moved_only_beyond_chance():
    assert c.apart(800, 2000, 660, 2000) == -1  # 40 % -> 33 %: the intervals are apart
    assert c.apart(800, 2000, 760, 2000) == 0  # 40 % -> 38 %: within chance
    assert c.apart(660, 2000, 800, 2000) == 1
    assert c.apart(4, 4, 3, 4) == 0  # one seed of four is chance
    assert c.apart(3, 0, 1, 4) == 0


def test_precedence_is_the_exact_chance_of_k_values_below_every_other_one():
    """C(n, k) / C(m + n, k), checked against every order of a small pooled sample."""
    m, n = 3, 4
    orders = list(itertools.permutations("o" * m + "n" * n))
    for k in range(0, n + 1):
        hits = sum(1 for o in orders if o[:k] == ("n",) * k)
        assert c.precedence_p(k, m, n) == pytest.approx(hits / len(orders)), k
    assert c.precedence_p(1, 2000, 2000) == pytest.approx(0.5)  # one seed below the old minimum: a coin toss
    assert c.precedence_p(5, 2000, 2000) < 0.05 < c.precedence_p(4, 2000, 2000)
    assert c.precedence_p(3, 10, 2) == 0.0
