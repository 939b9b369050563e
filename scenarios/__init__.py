"""Worlds that execute the model: the SimPy world (sim), its bucket, and what seeds draw."""
