"""The bottom of the house, which every layer may import: it imports nothing of the project.

errors.py: the errors the tool names and the exit status each ends a run with; packages.py: the map of
the house (the tool's packages, their layers and the data files the wheel carries); inputs.py: the one
reading of every number a user types; signals.py: the first SIGINT or SIGTERM stops a run, later ones
wait. This `__init__` imports nothing at all.
"""
