"""A node of ADR 0020 written as a service would be: asyncio tasks, boto3, a trace (docs/traces.md).

It shares no code with the checker's model (model/): it was written from the ADR, and writes the
traces `nodelease-check check-trace` judges. `python -m examples.asyncio_node --help` runs one.
"""
