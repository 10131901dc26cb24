"""Every CLI command the README and docs/cli.md show runs as documented (issue 23).

* README.md's "The CLI" block: each line runs from a folder that holds the project's ``examples``
  and ``tests``, with the exit status its comment gives (``# exit 1``, else 0); ``--json`` prints
  a document the published schema accepts.
* docs/cli.md's transcripts (``$ command`` and what it printed): the command runs, and every line
  the transcript shows is in what it prints now, in that order, with the figures (times, counts)
  masked: the output's *shape* is the documented one (torch versions may differ in counts).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
from pathlib import Path

import pytest

from export.cli import main
from json_schema import validate

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())


def _blocks(text: str) -> list[list[str]]:
    """The lines of each fenced code block of a markdown text."""
    return [m.group(1).splitlines() for m in re.finditer(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M)]


def _readme_commands() -> list[str]:
    section = (ROOT / "README.md").read_text().split("## The CLI", 1)[1].split("\n## ", 1)[0]
    lines = _blocks(section)[0]
    return [line for line in lines if line.startswith("symshape ")]


def _transcripts() -> list[tuple[str, list[str]]]:
    """(command, the lines shown after it) for each ``$ symshape ...`` in docs/cli.md."""
    out: list[tuple[str, list[str]]] = []
    for block in _blocks((ROOT / "docs" / "cli.md").read_text()):
        shown: list[str] | None = None
        for line in block:
            if line.startswith("$ "):
                shown = []
                out.append((line[2:], shown))
            elif shown is not None:
                shown.append(line)
    return out


def _mask(line: str) -> str:
    return re.sub(r"\d+(\.\d+)?", "N", line.rstrip())


def _run(command: str) -> tuple[int, str, str]:
    argv = shlex.split(command, comments=True)
    assert argv[0] == "symshape", command
    out, err = io.StringIO(), io.StringIO()
    code = main(argv[1:], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture()
def project_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder like the project's root for the commands: ``examples`` and ``tests`` in it, and
    what the commands write lands in the temporary folder."""
    for name in ("examples", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_cli_commands_run_as_documented(project_folder: Path) -> None:
    commands = _readme_commands()
    assert len(commands) >= 4 and any(c.startswith("symshape replay") for c in commands)
    for command in commands:
        expected = 1 if "# exit 1" in command else 0
        code, text, err = _run(command)
        assert code == expected, (command, err)
        assert "Traceback" not in err and "symshape: error" not in err, (command, err)
        if "--json" in shlex.split(command, comments=True):
            validate(json.loads(text), SCHEMA)
    assert (project_folder / "demo.pt2").exists() and (project_folder / "dims.dot").exists()


def test_the_cli_doc_transcripts_show_what_the_commands_print(project_folder: Path) -> None:
    transcripts = _transcripts()
    assert len(transcripts) >= 4
    for command, shown in transcripts:
        assert shown, command
        _, text, err = _run(command)
        printed = [_mask(line) for line in (err + text).splitlines()]
        at = 0
        for line in shown:
            want = _mask(line)
            try:
                at = printed.index(want, at) + 1
            except ValueError:
                pytest.fail(f"{command}\n  documented line not printed (in order): {line!r}\n"
                            f"  printed:\n" + "\n".join(f"    {p}" for p in printed))


def test_the_readme_quick_start_runs_as_written() -> None:
    """The Quick start is self-contained: pasted into Python, it prints the error and ends with
    the verified fix's program."""
    section = (ROOT / "README.md").read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    code = "\n".join(_blocks(section)[0])
    scope: dict[str, object] = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "README.md (Quick start)", "exec"), scope)  # noqa: S102 - the README's own code
    assert "tokens.size(1) must be divisible by 4" in printed.getvalue()
    assert scope["ep"] is not None
