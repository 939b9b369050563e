"""Exhaustive exploration of small configurations with the model's own step function (issue 15)."""
