"""The guided search over plans (search.py) and its plan-native mutations (mutate.py); the command and
the bake-off against uniform seeds are nodelease's (nodelease/guided.py, nodelease/bakeoff.py)."""
