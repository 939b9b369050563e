"""Examples: implementations of ADR 0020 written outside the checker, to be judged by it (issue 49)."""
