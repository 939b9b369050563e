"""The library the command line calls: campaigns of seeds and their reports (one layer below nodelease/).

run.py runs a campaign's seeds (in worker processes, or on a Dask cluster) and resumes and merges
campaigns; report.py builds, writes, reads and merges the reports, and says what a run tells its user;
validate.py checks a run's inputs (the timing rules T-1..T-4 and NL-4, a report read back) before
anything runs; diff.py compares two campaigns' reports (`diff`, and the amendments' measures);
compiled.py finds and loads the compiled hot modules. This `__init__` imports nothing:
importing compiled.py (the first thing the command line does) imports no other module of the project.
"""
