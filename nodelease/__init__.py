"""The tool around the checker: its command line, campaigns, reports and the errors it names.

`nodelease.errors` stands below every layer (it imports nothing of the project); the rest of
this package is the top layer, the command line (`nodelease-check`, `python runner.py`).
"""
