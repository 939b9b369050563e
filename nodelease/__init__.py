"""The command line (`nodelease-check`, `python runner.py`), the top layer: cli.py parses and
dispatches, one module per subcommand's work (amendments, bakeoff, bench, broken, docs,
exhaustive, guided, listing, replay, s3).

The library they call is campaign/ (a campaign's seeds and its `run`, `resume` and `merge`:
run.py; the reports: report.py; the inputs checked: validate.py; two reports compared, `diff`:
diff.py; the compiled hot modules and `compile`: compiled.py); the errors and the exit statuses
are house/errors.py's. This `__init__` imports nothing.
"""
