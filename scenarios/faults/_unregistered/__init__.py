"""Fault kinds written for issue 39's "S3's other answers", kept out of the registry on purpose.

`scenarios.faults._discover` skips a module whose name starts with "_", so nothing here is drawn,
scheduled, turned off by `calm` or offered to the shrinker: adding a kind to the swarm's draw moves
every later draw of a seed, and the world's random draw is being split into one stream per part
(issue 38) so that a new kind moves no other part's draws. Once that lands, registering a kind is
moving its module to scenarios/faults/, naming it in faults.ORDER (its hooks after "conflict"), and
declaring its coverage point (the predicate each module names `reached`) in the checker of the
rules it serves; `test_the_swarm_s_draw_is_pinned` then changes its figures, on purpose.

Until then each kind's fate hook is tested on a ScriptedWorld (tests/scenarios/test_s3_answers.py),
installed by hand (`install`), and the world core already carries out the fates they give
(scenarios/core.py: `fast_5xx`, `sdk_retry`, and the existing `conflict`); the scripted world's
network rules give the same answers (NetRule actions `answer_5xx`, `sdk_retry`, `conflict`).

- fast_5xx.py: a request answered 500 or 503 at once, never applied (not a timeout; the model
  sees `timed_out`, outcome unknown: the real-S3 adapter's mapping);
- sdk_retry_412.py: a write applied, its answer a 5xx or a closed connection, sent again by the
  client's SDK, whose retry meets the write's own object: 412 (a DELETE's: 404 or 412);
- conflict_any.py: any conditional write answered 409 ConditionalRequestConflict, never applied
  (today's `conflict` kind draws it only for racing writes, the upgrade only for markers).
"""

from __future__ import annotations


def install(world, kind, rate: float) -> None:
    """Switch an unregistered kind on in one world (a test's): its rate in force and its fate hook."""
    for option in kind.rates:
        world.options[option] = rate
        world.fault[option] = rate
    if kind.send_early is not None:
        world.send_early.append(kind.send_early)
    if kind.send_late is not None:
        world.send_late.append(kind.send_late)
