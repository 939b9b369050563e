"""The bottom of the house, which every layer may import: it imports nothing of the project.

errors.py: the errors the tool names and the exit status each ends a run with; packages.py: the map of
the house (the tool's packages, their layers and the data files the wheel carries). This `__init__`
imports nothing at all.
"""
