"""The guided search over plans (search.py), its plan-native mutations (mutate.py), and the bake-off
that measures it against uniform seeds (bakeoff.py)."""
