"""The tool around the checker: its command line, campaigns, reports and the errors it names.

`nodelease.errors` stands below every layer (it imports nothing of the project, and this
`__init__` imports nothing at all, so anyone may import it); the rest of this package is the top
layer, the command line (`nodelease-check`, `python runner.py`): cli.py parses and dispatches,
one module per subcommand's work (campaign, replay, broken, bench, exhaustive, s3, listing),
report.py what a run tells its user, compiled.py the compiled hot modules.
"""
