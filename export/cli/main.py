"""``symshape``: the entry point, the ``export`` command and the exit statuses.

``symshape export MODEL.py:FACTORY ...`` loads the model (:mod:`export.cli.loading`), turns the
flags into a spec (:mod:`export.cli.args`), exports, and prints the report
(:mod:`export.cli.report`, :mod:`export.cli.graph`); ``symshape replay FILE`` is
:mod:`export.cli.replay`, ``symshape check FILE --shape x=2,8`` :mod:`export.cli.check` (its
own statuses: 0 admitted, 1 refused, 2 usage or input error). Exit status: 0 exported, 1
constraint violations (or a data-dependent branch), 2 usage or input error, 3 the export failed
for another reason.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import logging
import os
import sys
import time
import traceback
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from export.api import export as run_export
from export.program.analysis import Analysis, analyse
from export.cli.args import (UsageError, build_parser, constraints_of, dynamic_shapes_of, example_sizes,
                             parse_dynamic, parse_example)
from export.cli.check import run_check
from export.cli.graph import constraint_graph, to_dot
from export.cli.loading import Loaded, exception_line, loaded_model, split_target
from export.cli.replay import run_replay
from export.cli.report import error_doc, export_document, input_shapes, print_report
from export.errors import (
    ConstraintViolationError,
    DataDependentError,
    ExportError,
    InputError,
    SymshapeWarning,
    UnsupportedTorchVersionError,
)
from export.diagnose.probe import enlarged_inputs
from export.spec.inputs import Inputs
from export.program.exported import SymshapeProgram, save
from shapes.spec import InputDim

__all__ = ["main", "Failed", "EXIT_OK", "EXIT_VIOLATION", "EXIT_USAGE", "EXIT_FAILED"]

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_USAGE = 2
EXIT_FAILED = 3
EXIT_PIPE_CLOSED = 141


class Failed(Exception):
    """The export failed for another reason: exit status 3."""


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the command line; returns the exit status (also for ``--help`` and usage errors)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    want_json = "--json" in argv
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:  # --help
            return int(e.code or 0)
        if args.command == "export":
            status = _cmd_export(args, out, err)
        elif args.command == "check":
            status = run_check(args, out, err)
        else:
            status = run_replay(args, out)
        out.flush()
        return status
    except BrokenPipeError:  # `symshape ... | head -1`: the reader has what it wanted
        return pipe_closed(out)
    except UsageError as e:
        return _fail(e, EXIT_USAGE, debug, want_json, out, err)
    except Failed as e:
        return _fail(e, EXIT_FAILED, debug, want_json, out, err)
    except KeyboardInterrupt:
        print("symshape: interrupted", file=err)
        return 130
    except Exception as e:  # noqa: BLE001 - a bug in symshape: still one line unless --debug
        return _fail(Failed(f"internal error: {exception_line(e)} (rerun with --debug for the traceback)"),
                     EXIT_FAILED, debug, want_json, out, err, cause=e)


def pipe_closed(out: TextIO) -> int:
    """The reader closed our output (``| head -1``): stop quietly, no traceback, no "internal
    error", and nothing more written there (the flush at exit goes to /dev/null). The status is
    the shell's for a closed pipe, 141 (128 + SIGPIPE)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, out.fileno())
    return EXIT_PIPE_CLOSED


def _fail(e: Exception, code: int, debug: bool, want_json: bool, out: TextIO, err: TextIO,
          cause: BaseException | None = None) -> int:
    if debug:
        traceback.print_exception(cause or e, file=err)
    print(f"symshape: error: {e}", file=err)
    if want_json:
        print(json.dumps(error_doc(str(e), code), indent=2), file=out)
    return code


if __name__ == "__main__":
    sys.exit(main())


class _Progress:
    """Progress lines on stderr: ``symshape: exporting ... [1.6s]``."""

    def __init__(self, enabled: bool, stream: TextIO) -> None:
        self.enabled = enabled
        self.stream = stream
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def say(self, text: str) -> None:
        if self.enabled:
            print(f"symshape: {text} [{self.elapsed():.1f}s]", file=self.stream, flush=True)


def _write_text(path: str, text: str, what: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as e:
        raise UsageError(f"{path}: cannot write the {what}: {e.strerror or e}") from None


def _cmd_export(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    dyn = [parse_dynamic(s) for s in args.dynamic]
    examples = [parse_example(s) for s in args.example]
    if dyn and args.constraint:
        raise UsageError("use either --dynamic (Dim API) or --constraint (classic API), not both")
    path, factory = split_target(args.target)
    progress = _Progress(not (args.quiet or args.json), err)
    progress.say(f"loading {path}:{factory}")
    # with --json, stdout is the document: the model's own prints go to stderr
    quiet_stdout = contextlib.redirect_stdout(err) if args.json else contextlib.nullcontext()
    with quiet_stdout, loaded_model(path, factory, args.debug) as loaded:
        try:
            inputs = Inputs.bind(loaded.model, loaded.args, loaded.kwargs)
        except InputError as e:
            raise UsageError(str(e)) from None
        if examples:
            loaded, inputs = _resized_example(loaded, inputs, example_sizes(inputs, examples), progress)
        if dyn:
            dynamic_shapes, labels = dynamic_shapes_of(inputs, dyn)
            spec_kw: dict[str, Any] = {"dynamic_shapes": dynamic_shapes}
        elif args.constraint:
            records, labels = constraints_of(inputs, args.constraint)
            spec_kw = {"constraints": records}
        else:
            spec_kw, labels = {}, {}
        what = getattr(loaded.model, "__name__", None) or type(loaded.model).__name__
        progress.say(f"exporting {what} (tracing{', strict' if args.strict else ''}, "
                     f"{len(labels)} dynamic dim{'s' if len(labels) != 1 else ''})")
        noted: list[str] = []
        with _progress_lines(progress):
            ep, error = _export(loaded, spec_kw, args, err, noted)
        elapsed = progress.elapsed()
        progress.say("exported" if ep is not None else
                     f"export failed: {'constraint violations' if isinstance(error, ConstraintViolationError) else 'data-dependent branch'}")
        problem_text = ep.symshape.problem if ep is not None else getattr(error, "problem", None)
        problem = json.loads(problem_text) if problem_text else None
        kept = ep.symshape_solver if ep is not None else None
        analysis = (Analysis(problem, kept) if kept is not None and problem is not None else
                    analyse(problem) if problem is not None else None)
        shapes = input_shapes(inputs, analysis if ep is not None else None, labels)
    doc = export_document(ep, error, analysis, target=args.target, inputs=shapes, elapsed=elapsed, warnings=noted)
    _write_outputs(doc, ep, error, analysis, args)
    if args.json:
        print(json.dumps(doc, indent=2, default=str), file=out)
    else:
        print_report(doc, error, out)
    return EXIT_OK if ep is not None else EXIT_VIOLATION


def _resized_example(loaded: Loaded, inputs: Inputs, sizes: dict[InputDim, int], progress: _Progress
                     ) -> tuple[Loaded, Inputs]:
    """The factory's example with the ``--example`` dims resized (data repeated), bound again."""
    moved = ", ".join(f"{d} = {inputs.size(d)} -> {n}" for d, n in sizes.items())
    try:
        args, kwargs = enlarged_inputs(inputs, loaded.args, loaded.kwargs, sizes)
        resized = dataclasses.replace(loaded, args=args, kwargs=kwargs or {})
        bound = Inputs.bind(resized.model, resized.args, resized.kwargs)
    except Exception as e:  # noqa: BLE001 - a tensor that cannot be resized: the flag is at fault
        raise UsageError(f"--example: cannot resize the example ({moved}): {exception_line(e)}") from None
    progress.say(f"example resized: {moved}")
    return resized, bound


class _ProgressHandler(logging.Handler):
    """The library's progress (logger ``symshape``) as progress lines."""

    def __init__(self, progress: _Progress) -> None:
        super().__init__(logging.INFO)
        self.progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        self.progress.say(record.getMessage())


@contextlib.contextmanager
def _progress_lines(progress: _Progress) -> Iterator[None]:
    """While exporting, each step that traces again (a larger example, the boundary re-trace, the
    fix's verification) is a progress line: ``symshape: verifying the suggested fix ... [3.2s]``."""
    if not progress.enabled:
        yield
        return
    logger = logging.getLogger("symshape")
    handler, level, propagate = _ProgressHandler(progress), logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


@contextlib.contextmanager
def _quiet_torch_logs(quiet: bool) -> Iterator[None]:
    """With ``-q``, torch's own log lines (``W1202 ... non_strict_utils.py``) are silenced too."""
    if not quiet:
        yield
        return
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)


def _export(loaded: Loaded, spec_kw: dict[str, Any], args: argparse.Namespace, err: TextIO, noted: list[str]
            ) -> tuple[SymshapeProgram | None, ConstraintViolationError | DataDependentError | None]:
    """Run the export: the program, or the violation/data-dependent error to report; the
    SymshapeWarnings it raised are appended to ``noted`` (the report prints them)."""
    captured = io.StringIO()
    try:
        # torch prints the partial graph of a failed trace on stderr: kept for --debug only
        with contextlib.redirect_stderr(captured), _quiet_torch_logs(args.quiet), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SymshapeWarning)
            try:
                return run_export(loaded.model, loaded.args, loaded.kwargs, strict=args.strict,
                                  zero_one_examples=args.zero_one_examples, dim_relations=args.dim_relations,
                                  fix_verification=args.fix_verification, **spec_kw), None
            finally:
                noted += [str(w.message) for w in caught if issubclass(w.category, SymshapeWarning)]
                for w in caught:  # other warnings (torch's, the model's) as Python would show them
                    if not issubclass(w.category, SymshapeWarning):
                        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    except (ConstraintViolationError, DataDependentError) as e:
        return None, e
    except InputError as e:
        raise UsageError(str(e)) from (e if args.debug else None)
    except UnsupportedTorchVersionError as e:
        raise UsageError(str(e)) from None
    except ExportError as e:
        raise Failed(f"{type(e).__name__}: {e}") from e
    except Exception as e:  # noqa: BLE001 - torch or the model failed while tracing
        raise Failed(f"torch.export failed: {exception_line(e)} (rerun with --debug for details)") from e
    finally:
        text = captured.getvalue()
        if text and (args.debug or "def forward(" not in text):
            err.write(text)


def _program_to_save(ep: SymshapeProgram | None, error: Exception | None) -> tuple[SymshapeProgram | None, str]:
    """What ``--out`` writes and why: the exported program; on a failure, the program of the
    user's own spec exported with a larger example (a 0/1 example on a dynamic dim: it keeps the
    dim dynamic), else the verified fix's program (what re-exporting with the suggested flags
    gives); or None and the reason nothing is written."""
    if ep is not None:
        return ep, "the exported program"
    fixes = getattr(error, "fixes", None)
    if fixes is not None and fixes.larger_example_program is not None:  # the spec as declared, kept dynamic
        sizes = ", ".join(f"{k} = {v}" for k, v in (fixes.larger_example or {}).items())
        return fixes.larger_example_program, f"your spec's program, exported with a larger example ({sizes})"
    if fixes is not None and fixes.program is not None:
        return fixes.program, "the verified fix's program (what exporting with the suggested flags gives)"
    if isinstance(error, DataDependentError):
        return None, "the export failed on a data-dependent branch (see the error)"
    return None, "the export failed and no fix was verified, so there is no program to write"


def _write_outputs(doc: dict[str, Any], ep: SymshapeProgram | None, error: Exception | None,
                   analysis: Analysis | None, args: argparse.Namespace) -> None:
    """--out, --problem and --graph."""
    doc["out"], doc["out_note"] = None, None
    if args.out:
        program, what = _program_to_save(ep, error)
        if program is None:
            doc["out_note"] = f"not written to {args.out}: {what}"
        else:
            try:
                save(program, args.out)
            except OSError as e:
                raise UsageError(f"{args.out}: cannot write the program: {e.strerror or e}") from None
            doc["out"], doc["out_note"] = args.out, what
    if args.problem and doc["problem"] is not None:
        _write_text(args.problem, json.dumps(doc["problem"], indent=2) + "\n", "problem")
    if args.graph:
        if analysis is None:
            raise Failed("no solver problem to draw (the export recorded none)")
        _write_text(args.graph, to_dot(constraint_graph(analysis)), "graph")
        doc["graph"] = args.graph
