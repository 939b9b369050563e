"""The install compiles the hot modules into .compiled/ (nodelease/compiled.py says how they are used).

Everything else is in pyproject.toml. A build that fails (no C compiler) leaves the checker in pure
Python: the same results, slower; `python runner.py compile --check` says which state you are in.
NODELEASE_NO_COMPILE=1 skips the build (a quick install, e.g. tests/cli/test_install.py's wheel).
"""

import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyCompiled(build_py):
    def run(self):
        super().run()
        if os.environ.get("NODELEASE_NO_COMPILE"):
            print("compiled: skipped (NODELEASE_NO_COMPILE)", file=sys.stderr)
            return
        sys.path.insert(0, HERE)
        try:
            from nodelease import compiled

            n = compiled.build(log=lambda line: print(line, file=sys.stderr))
            print(f"compiled: {n} modules built; {compiled.ROOT}", file=sys.stderr)
        except Exception as e:  # no compiler, no Cython: the checker runs from source
            print(f"warning: hot modules not compiled, running from source ({e})", file=sys.stderr)
        finally:
            sys.path.remove(HERE)


setup(cmdclass={"build_py": BuildPyCompiled})
