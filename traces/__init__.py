"""Traces of a real implementation, judged by the same checkers (issue 49).

    traces/format.py   the trace format (version 1) and its JSON schema, validated with the stdlib
    traces/load.py     a directory of traces (and an access log) read and checked line by line
    traces/bucket.py   the bucket's facts rebuilt from the writers' own requests and answers, and a
                       History placed at one admissible timing of the processes' clocks
    traces/judge.py    the checkers run on the extreme admissible placements: violated, possibly, held
    traces/conform.py  the conformance replay: the trace's inputs through model.step, the first
                       effect the implementation did not produce
    traces/command.py  `check-trace DIR`

docs/traces.md describes the format, the verdicts and the argument behind them.
"""
