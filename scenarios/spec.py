"""What a run is: the model, the scenario, the values pinned (or a whole configuration) and whether known
findings fail it, resolved once by the command (campaign/run.py, `resolve`) into one frozen `RunSpec` that
is passed whole: to the worker pool (house/pool.py), to each seed's run (`campaign.run.run_one`), to the
guided search and the explorer. Nothing below the command looks a scenario or a model up by name again but
through it.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.params import Params


@dataclass(frozen=True)
class RunSpec:
    model: str = "correct"
    scenario: str = "swarm"
    pins: tuple = ()  # ((key, ms), ...) pinned for every seed, sorted; the rest is drawn per seed
    params: Params | None = None  # a whole configuration instead (nothing drawn), or None
    strict: bool = False  # known protocol findings fail a run too
    # fault kinds held off whatever the seed draws (each kind's draw skipped, its options at their off values):
    # the kinds added to the tool since a report was written, so that its seeds replay (and resume) as the
    # runs it recorded (issue 46); () in every run of the tool as it is
    kinds_off: tuple = ()

    @classmethod
    def of(cls, model: str = "correct", scenario: str = "swarm", params=None, strict: bool = False) -> "RunSpec":
        """A spec from a model name, a scenario, the pins (a dict, or None) or a whole configuration (Params)."""
        if isinstance(params, Params):
            return cls(model, scenario, (), params, strict)
        return cls(model, scenario, tuple(sorted((params or {}).items())), None, strict)

    @property
    def world_params(self) -> Params | dict:
        """What a world takes: the whole configuration, or the pins (a fresh dict: the world may keep it)."""
        return self.params if self.params is not None else dict(self.pins)

    def load_model(self):
        """The model object (with .step) registered under the spec's name."""
        from broken_models import load_model

        return load_model(self.model)

    def world(self, seed: int, choices=None, options: dict | None = None):
        """The SimPy world of `seed` under this spec (not run yet)."""
        from .sim import SimWorld

        return SimWorld(seed, self.load_model(), self.scenario, self.world_params, self.model, options=options,
                        choices=choices, kinds_off=self.kinds_off)

    def fault_kinds(self) -> list[str]:
        """The fault kinds this spec's runs know, in their order (a report lists them: `replay` holds the kinds
        added since off)."""
        from .faults import KINDS

        return [k for k in KINDS if k not in self.kinds_off]
