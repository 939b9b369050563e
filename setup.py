"""The build: the packages and data files the wheel carries, and the hot modules compiled.

The tool's top-level packages and its data files are named once, in house/packages.py (read here as
a file: nothing of the project is imported by the build); every subpackage of those packages is found.
Everything else is in pyproject.toml.

The install compiles the hot modules into .compiled/ (campaign/compiled.py says how they are used).
A build that fails (no C compiler) leaves the checker in pure Python: the same results, slower;
`python runner.py compile --check` says which state you are in. NODELEASE_NO_COMPILE=1 skips the build
(a quick install, e.g. tests/cli/test_install.py's wheel).
"""

import importlib.util
import os
import sys

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def _house():
    spec = importlib.util.spec_from_file_location("_house", os.path.join(HERE, "house", "packages.py"))
    house = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(house)
    return house


class BuildPyCompiled(build_py):
    def run(self):
        super().run()
        if os.environ.get("NODELEASE_NO_COMPILE"):
            print("compiled: skipped (NODELEASE_NO_COMPILE)", file=sys.stderr)
            return
        sys.path.insert(0, HERE)
        try:
            from campaign import compiled

            n = compiled.build(log=lambda line: print(line, file=sys.stderr))
            print(f"compiled: {n} modules built; {compiled.ROOT}", file=sys.stderr)
        except Exception as e:  # no compiler, no Cython: the checker runs from source
            print(f"warning: hot modules not compiled, running from source ({e})", file=sys.stderr)
        finally:
            sys.path.remove(HERE)


HOUSE = _house()
setup(
    packages=find_packages(where=HERE, include=[n for p in HOUSE.PACKAGES for n in (p, p + ".*")]),
    package_data={package: list(globs) for package, globs in HOUSE.DATA.items()},
    cmdclass={"build_py": BuildPyCompiled},
)
