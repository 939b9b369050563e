"""campaign/prices.py and its tables (campaign/price_tables/): a count of requests by (operation, status) into
dollars, each provider's billing rules as data with where and when they were read, and the ADR's own listing
figures checked against the tables (docs/cost.md quotes the same numbers)."""

from __future__ import annotations

import copy
import fnmatch
import os
import re

import pytest

from campaign import prices as P
from house.packages import DATA

S3 = "aws-s3-standard-us-east-1"
R2 = "cloudflare-r2-standard"


@pytest.fixture(scope="module")
def s3():
    return P.load(S3)


@pytest.fixture(scope="module")
def r2():
    return P.load(R2)


def test_both_tables_ship_with_the_package_and_say_where_and_when_they_were_read():
    assert P.names() == [S3, R2]
    shipped = [f"price_tables/{f}" for f in os.listdir(P.TABLES_DIR)]
    assert all(any(fnmatch.fnmatch(f, g) for g in DATA["campaign"]) for f in shipped), shipped
    for name in (S3, R2):
        t = P.load(name)
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", t.read_on)
        assert all(u.startswith(("https://", "http://")) for u in t.data["sources"].values())


def test_s3_bills_2xx_and_4xx_not_5xx_delete_free_list_as_put_get_as_class_b(s3):
    """ErrorCodeBilling.html: billed for 200 OK and 4XX, not for 5XX; the S3 FAQ: deletes are free; LIST in the
    PUT group ($0.005 per 1,000), GET in the other ($0.0004 per 1,000)."""
    assert s3.rule("PUT", "2xx") == ("tier1", pytest.approx(5e-6)) and s3.rule("LIST", "2xx") == ("tier1", pytest.approx(5e-6))
    assert s3.rule("GET", "2xx") == ("tier2", pytest.approx(4e-7))
    assert s3.rule("PUT", "412") == ("tier1", pytest.approx(5e-6)) and s3.rule("GET", "404") == ("tier2", pytest.approx(4e-7))
    assert s3.rule("PUT", "5xx") == (None, 0.0) and s3.rule("GET", "never_arrived") == (None, 0.0)
    assert s3.rule("DELETE", "2xx") == ("free", 0.0)


def test_r2_bills_a_412_put_as_class_a_delete_free_list_class_a_get_class_b(r2):
    """developers.cloudflare.com/r2/pricing: ListObjects and PutObject Class A ($4.50 / million), GetObject
    Class B ($0.36 / million), DeleteObject free; a PutObject answered 412 is a Class A operation."""
    assert r2.rule("PUT", "412") == ("A", pytest.approx(4.5e-6)) and ("PUT", "412") in r2.overrides
    assert r2.rule("LIST", "2xx") == ("A", pytest.approx(4.5e-6)) and r2.rule("GET", "2xx") == ("B", pytest.approx(3.6e-7))
    assert r2.rule("DELETE", "2xx") == ("free", 0.0) and r2.rule("DELETE", "404") == ("free", 0.0)


def test_a_bill_adds_its_lines_and_names_every_guess_it_rests_on(s3, r2):
    counts = {("PUT", "2xx"): 1_000, ("PUT", "412"): 10, ("GET", "404"): 100, ("GET", "5xx"): 7,
              ("DELETE", "2xx"): 50, ("LIST", "never_arrived"): 3}
    b = P.bill(counts, s3)
    assert b.usd == pytest.approx(1_010 * 5e-6 + 100 * 4e-7)
    assert b.by_class() == {"tier1": 1_010, "tier2": 100, "free": 50, "not billed": 10}
    assert b.unconfirmed == ["GET 404 x 100: status 404", "PUT 412 x 10: status 412"]
    r = P.bill(counts, r2)
    assert r.usd == pytest.approx(1_010 * 4.5e-6 + 107 * 3.6e-7)  # R2's 5xx: assumed billed, said so
    assert "GET 5xx x 7: status 5xx" in r.unconfirmed and not any(x.startswith("PUT 412") for x in r.unconfirmed)
    assert P.bill({("PUT", "2xx"): 0, ("PUT", "412"): 0}, s3).unconfirmed == []


@pytest.mark.parametrize("code, key", [(200, "2xx"), (204, "2xx"), (404, "404"), ("412", "412"), (409, "409"),
                                       (403, "4xx"), (503, "5xx"), ("never_arrived", "never_arrived")])
def test_statuses_map_to_a_tables_keys(code, key):
    assert P.status_class(code) == key


def test_bad_counts_and_bad_tables_are_refused(s3):
    with pytest.raises(ValueError, match="no price for the operation 'HEAD'"):
        P.bill({("HEAD", "2xx"): 1}, s3)
    with pytest.raises(ValueError, match="no billing rule for the status '3xx'"):
        P.bill({("GET", "3xx"): 1}, s3)
    with pytest.raises(ValueError, match="no price table 'gcs'"):
        P.load("gcs")
    data = copy.deepcopy(s3.data)
    del data["operations"]["LIST"]
    with pytest.raises(ValueError, match="no rule for the operation LIST"):
        P.parse(data)
    data = copy.deepcopy(s3.data)
    data["statuses"]["5xx"].pop("sources")
    with pytest.raises(ValueError, match="status 5xx: a rule read somewhere names its sources"):
        P.parse(data)
    data = copy.deepcopy(s3.data)
    data["classes"]["tier2"]["confirmed"] = "probably"
    with pytest.raises(ValueError, match="'confirmed' must be one of"):
        P.parse(data)


def test_the_adrs_listing_figures_checked_against_the_tables(s3, r2):
    """ADR 0020, "Cost, after": N x (1 + N) requests a period, 12 per 3 s at three nodes ("about 260,000 GETs and
    86,000 LISTs a day, about $0.50 a day at AWS S3 Standard list prices"), 420 at twenty ("about 12 million GETs
    and 580,000 LISTs a day, about $8"): N LISTs and N x N GETs a period. docs/cost.md quotes these figures."""
    three, twenty = P.listing_per_day(3), P.listing_per_day(20)
    assert three == {("LIST", "2xx"): 86_400, ("GET", "2xx"): 259_200}
    assert twenty == {("LIST", "2xx"): 576_000, ("GET", "2xx"): 11_520_000}
    assert sum(three.values()) / 28_800 == 12 and sum(twenty.values()) / 28_800 == 420
    assert P.bill(three, s3).usd == pytest.approx(0.53568)  # the ADR's "about $0.50"
    assert P.bill(twenty, s3).usd == pytest.approx(7.488)  # the ADR's "about $8"
    assert P.bill({("GET", "2xx"): 12_000_000, ("LIST", "2xx"): 580_000}, s3).usd == pytest.approx(7.70)
    # the model reads every object but its own: N x N a period
    assert P.bill(P.listing_per_day(3, reads_own=False), s3).usd == pytest.approx(0.50112)
    assert P.bill(P.listing_per_day(20, reads_own=False), s3).usd == pytest.approx(7.2576)
    # R2 at list prices, and a 30-day month after its free tier, rounded up to whole millions
    assert P.bill(three, r2).usd == pytest.approx(0.482112) and P.bill(twenty, r2).usd == pytest.approx(6.7392)
    m = P.month(three, r2)
    assert m["classes"]["A"] == {"requests": 2_592_000, "free": 1_000_000, "billed": 2_000_000, "usd": 9.0}
    assert m["classes"]["B"]["billed"] == 0 and m["usd"] == 9.0 and m["list_usd"] == pytest.approx(14.46336)
    assert P.month(twenty, r2)["usd"] == pytest.approx(17 * 4.5 + 336 * 0.36)
    assert P.month(three, s3)["usd"] == pytest.approx(30 * 0.53568)  # no free tier modelled for S3
