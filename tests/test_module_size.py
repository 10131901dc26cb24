"""No module of the three packages is over 500 lines (the guide's rule, issue 34): a longer one
holds more than one responsibility and is split along its seam. Torch-free and fast: the files
are counted as text."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("shapes", "solver", "export")
MAX_LINES = 500


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_500_lines() -> None:
    files = sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))
    assert len(files) > 50
    offenders = {str(p.relative_to(ROOT)): n for p in files if (n := _lines(p)) > MAX_LINES}
    assert not offenders, f"modules over {MAX_LINES} lines (split each along a seam of responsibility): " + \
        ", ".join(f"{p} ({n})" for p, n in sorted(offenders.items(), key=lambda kv: -kv[1]))


def test_the_count_is_lines_of_text(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("a = 1\n" * 500)
    assert _lines(f) == 500
    f.write_text("a = 1\n" * 500 + "b = 2")
    assert _lines(f) == 501
