"""Every file a run writes, named before the run begins, and written so that none is lost (issue 50).

Before any seed runs, a command registers each path it will write (`Outputs`): its report, the
summary and timeline beside it, a picture per invariant that may fail, a JUnit file, a
counterexample, the per-model reports of `broken`. Registering checks, once for the whole run:

- no two outputs share a path (`--report notes.txt` would put the summary over the report;
  `--junit P --report P` the XML over it): refused, naming both;
- each can be written (its folder made, the path not a directory);
- none replaces a file this tool did not write, unless `--force`. A file is the tool's when it is a
  report, a counterexample or a table the tool writes (`is_ours`), or it sits beside such a report
  under the name the tool gives its summary, timeline or pictures. So a run may write its report over
  the report of an earlier run at the same path (as output options usually do), never over a file of
  the user's.

Writing: `write_json` writes strict JSON (never NaN) to a temporary file beside the target and moves
it into place, so that a signal or a full disk never leaves half a report; `write_text` is the same
for text. What a run writes after its report (its summary, its pictures, its JUnit file) is
`secondary`: a failure there is a warning on stderr, never a lost verdict.

This module knows paths and files; it must not know the parser (nodelease/cli.py) nor a report's
fields beyond what marks it as the tool's.
"""

from __future__ import annotations

import json
import os
import re
import sys

from house.errors import UsageError

FORCE_HELP = "replace files at the output paths that this tool did not write (default: refuse, exit 2)"
MAX_DEPTH = 64  # no file this tool writes nests deeper; one that does is no input of the tool's
TOOL = "nodelease-check"


class Outputs:
    """The files one run will write, checked together before it runs (`check`)."""

    def __init__(self, force: bool = False) -> None:
        self.force = force
        self.paths: dict[str, tuple[str, str, str | None]] = {}  # real path -> (what, path, the report beside)

    def add(self, path: str, what: str, beside: str | None = None) -> str:
        """`path`, which the run will write as `what` (`beside`: the report it sits beside, which owns it)."""
        real = os.path.realpath(path)
        if real in self.paths:
            other = self.paths[real][0]
            raise UsageError(f"{what} and {other} would both be written to {path}: give them different paths"
                             + (" (name the report .json: its summary is the .txt beside it)"
                                if path.endswith(".txt") else ""))
        self.paths[real] = (what, path, beside)
        return path

    def report(self, path: str, what: str = "the report", summary: bool = True, timeline: bool = False,
               pictures=(), counterexamples=()) -> str:
        """A JSON report and what is written beside it: its summary (.txt), its timeline, a picture
        (`<stem>-<INV>.html`) or a counterexample (`<stem>-<INV>.json`) per invariant named."""
        self.add(path, what)
        stem = os.path.splitext(path)[0]
        if summary:
            self.add(stem + ".txt", f"the summary of {what}", path)
        if timeline:
            self.add(stem + ".timeline.txt", f"the timeline of {what}", path)
        for inv in pictures:
            self.add(f"{stem}-{inv}.html", f"the picture of {inv} beside {what}", path)
        for inv in counterexamples:
            self.add(f"{stem}-{inv}.json", f"the counterexample of {inv} beside {what}", path)
        return path

    def check(self) -> None:
        """Every path writable, and none a file this tool did not write (unless `force`): UsageError, one
        line, otherwise."""
        for what, path, beside in self.paths.values():
            writable(path, what)
            if self.force or not os.path.exists(path):
                continue
            if not (is_ours(path) or (beside is not None and os.path.exists(beside) and is_ours(beside))):
                raise UsageError(f"{path} exists and was not written by {TOOL}: {what} would replace it "
                                 f"(choose another path, or --force to replace it)")


def writable(path: str, what: str) -> None:
    """`path` can be created and written (its folder made): UsageError naming `what` otherwise."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot write {what} {path}: {e.strerror} ({folder})") from None
    if os.path.isdir(path):
        raise UsageError(f"cannot write {what} {path}: {path} is a directory")
    if (os.path.exists(path) and not os.access(path, os.W_OK)) or not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {what} {path}: permission denied")


def is_ours(path: str) -> bool:
    """Whether the file at `path` is one this tool writes: a report or table (JSON naming the command that
    wrote it), a counterexample (its format), a mutants report, amendments' measurements, a JUnit file or
    a picture of this tool's."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    if head.lstrip().startswith(b"<"):
        return b'name="nodelease-check"' in head or b'id="violation-message"' in head
    try:
        doc = load_json_file(path)
    except UsageError:
        return False
    if not isinstance(doc, dict):
        return False
    command = doc.get("command")
    if isinstance(command, str) and command.startswith(("python runner.py", TOOL)):
        return True
    if str(doc.get("format", "")).startswith("nodelease-counterexample/"):
        return True
    if {"seeds", "mutants"} <= set(doc) or {"reps", "cap_s", "rows"} <= set(doc):  # mutants, bakeoff
        return True
    return bool(doc) and all(isinstance(m, dict) and "verdict" in m for m in doc.values())  # amendments --json


# --- reading ---------------------------------------------------------------------------------------------


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def load_json_file(path: str, what: str = "report"):
    """The JSON document at `path`: UsageError, one line, if it cannot be read, is not strict JSON
    (NaN and Infinity are not), or nests deeper than any file of this tool (MAX_DEPTH)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise UsageError(f"no {what} at {path}") from None
    except IsADirectoryError:
        raise UsageError(f"the {what} {path} is a directory") from None
    except OSError as e:
        raise UsageError(f"cannot read the {what} {path}: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"the {what} {path} is not valid JSON (not UTF-8 text)") from None
    depth = nesting(text)
    if depth > MAX_DEPTH:
        raise UsageError(f"the {what} {path} nests {depth} levels deep: no file of {TOOL} nests more than "
                         f"{MAX_DEPTH}")
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as e:
        raise UsageError(f"the {what} {path} is not valid JSON (line {e.lineno}: {e.msg})") from None
    except ValueError as e:  # NaN, Infinity
        raise UsageError(f"the {what} {path} is not strict JSON: {e}") from None


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def nesting(text: str) -> int:
    """How deep the brackets of a JSON text nest (strings skipped): read before parsing, so that a
    document nested past the parser's recursion is refused in words (and nothing that walks a document
    read back can recurse out of its stack)."""
    depth = deepest = 0
    for ch in _NOT_BRACKETS.sub("", _STRING.sub("", text)):
        if ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        else:
            depth -= 1
    return deepest


# --- writing ---------------------------------------------------------------------------------------------


def write_text(path: str, text: str, what: str = "the report") -> None:
    """`text` at `path`, whole or not at all (a temporary file beside it, moved into place): UsageError,
    one line, if it cannot be written."""
    target = os.path.realpath(path)
    tmp = f"{target}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise UsageError(f"cannot write {what} {path}: {e.strerror or e}") from None


def write_json(path: str, doc, what: str = "the report") -> None:
    """`doc` as strict JSON (NaN or infinity in it is a bug of the tool: ValueError) at `path`, whole or
    not at all."""
    write_text(path, json.dumps(doc, indent=1, allow_nan=False) + "\n", what)


def warn(message: str) -> None:
    """A warning on stderr: something beside the verdict could not be done; the exit status stays the
    verdict's."""
    from .report import program

    print(f"{program()}: warning: {' '.join(message.split())}", file=sys.stderr, flush=True)


def secondary(write, *args) -> bool:
    """`write(*args)`, an output written after the report (a summary, a picture, a JUnit file): a failure
    is a warning, never the run's end. Whether it was written."""
    try:
        write(*args)
        return True
    except UsageError as e:
        warn(str(e))
        return False
