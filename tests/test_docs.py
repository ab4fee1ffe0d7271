"""The documentation cannot go stale (issue 26 item 1, issue 27 item 6).

* The site (mkdocs.yml, docs/) builds with ``--strict``: a broken link, a missing page or a
  reference to a name that no longer exists fails here.
* Every code block of docs/**/*.md and README.md runs:
  ``console`` blocks run each line that starts with ``$ `` (a trailing ``\\`` continues it)
  from the repository root with the venv's ``accelperf`` on PATH, and must exit 0, or the
  status written as ``# exit N`` at the end of the line, and print the output the page
  shows after it (its words in order; lines starting with ``#`` are the page's words
  about the output, a wall-clock time may differ, and so may the numbers of a line that
  ends in ``# varies: why``); ``python`` blocks of one page run
  in order in one namespace. ``<!-- docs-test: skip (reason) -->`` on the line before a
  block skips it; other languages (``toml``, ``text``, plain fences) are not run.
* The tutorial notebook runs top to bottom (nbclient).

Commands run in a scratch directory that links every top-level entry of the repository, so
``examples/...`` resolves as written while the files a command writes (``--out x.svg``) land
in the scratch directory, not in the checkout.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]*)\)\s*-->")
EXIT = re.compile(r"#\s*exit\s+(?P<status>\d+)\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
COMMAND_SECONDS = 300


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""
    page: Path
    line: int            # 1-based line of the opening fence
    lang: str
    text: str
    skip_reason: str | None

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    found, lines = [], page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, indent, body = i, len(m["indent"]), []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
            i += 1
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        skip = SKIP.search(before)
        found.append(Block(page, start + 1, m["lang"], "\n".join(body),
                           skip["reason"] if skip else None))
        i += 1
    return found


def commands(block: Block) -> list[tuple[str, int]]:
    """(command, expected exit status) of each ``$ `` line of a console block."""
    return [(command, status) for command, status, _ in shown(block)]


def shown(block: Block) -> list[tuple[str, int, list[str]]]:
    """(command, expected exit status, the output the page shows) of each ``$ `` line of a
    console block: the lines after it up to the next, without those that start with ``#``
    (a page's words about the output, not the output)."""
    out, pending = [], None
    for line in block.text.splitlines():
        if pending is not None:
            pending += "\n" + line
        elif line.startswith("$ "):
            pending = line[2:]
        else:
            if out and line.strip() and not line.lstrip().startswith("#"):
                out[-1][2].append(line)
            continue
        if pending.endswith("\\"):
            continue
        m = EXIT.search(pending)
        out.append((pending, int(m["status"]) if m else 0, []))
        pending = None
    return out


# A wall-clock time as the commands print one ("fit 2.8 s"): it differs from run to run.
SECONDS = re.compile(r"(?<![\w.])\d+(?:\.\d+)? s\b")
# A shown line that ends in "# varies: why": its numbers differ between machines (the page
# says why); its words are compared, its numbers not.
VARIES = re.compile(r"\s+#\s*varies\b.*$")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def missing_output(page_lines: list[str], output: str) -> str | None:
    """The first word of the output a page shows that the command did not print, in order
    (None when every word is there): words, because the page may wrap a line where the
    terminal did not; in order, with lines of the output the page leaves out allowed
    between them; a wall-clock time matches any other, and so does any number on a line
    that the page marks ``# varies``."""
    words = SECONDS.sub("N s", output).split()
    at = 0
    for line in page_lines:
        varies = VARIES.search(line) is not None
        for word in SECONDS.sub("N s", VARIES.sub("", line)).split():
            at = next((i for i in range(at, len(words)) if
                       (NUMBER.sub("N", words[i]) == NUMBER.sub("N", word) if varies
                        else words[i] == word)), None)
            if at is None:
                return word
            at += 1
    return None


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A directory that looks like the repository root but keeps what commands write."""
    d = tmp_path_factory.mktemp("docs-run")
    for entry in ROOT.iterdir():
        if entry.name not in {".git", ".venv", "site"}:
            (d / entry.name).symlink_to(entry)
    return d


def _env():
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               MPLBACKEND="Agg", COLUMNS="100", NO_MKDOCS_2_WARNING="1")
    env.pop("ACCELPERF_DEBUG", None)
    return env


SHELL_SYNTAX = set("|&;<>`$*?")
IN_DOUBLE_QUOTES = set("`$")            # what bash still expands between "..."


def needs_shell(command: str) -> bool:
    """Whether bash would do more with ``command`` than split it into words: a pipe, a
    redirection, a glob, a variable, ... outside quotes (or a variable or backquote
    inside double quotes). `--target 'g1<=64B'` is one word, run in-process like any
    other: in bash it was a Python start-up of its own, and a fit the page shares with
    the demo made again (4.5 s of the GPU page)."""
    quote = None
    escaped = False
    for ch in command:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote is None and ch in "'\"":
            quote = ch
        elif ch == quote:
            quote = None
        elif ch in (SHELL_SYNTAX if quote is None else
                    IN_DOUBLE_QUOTES if quote == '"' else ()):
            return True
    return False


def _in_process(command: str, cwd: Path) -> tuple[int, str, str]:
    """`accelperf ARGS` through accelperf.cli.main in this process: the same code path as
    the console script, without a Python start-up and imports per line (tens of lines)."""
    import io
    import shlex

    from accelperf.cli import main
    argv = shlex.split(command, comments=True)[1:]
    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()


# A benchmark run from the source tree, plain arguments only: `PYTHONPATH=src` is what the
# editable install gives this process already.
BENCHMARK = re.compile(r"PYTHONPATH=src python (?P<script>benchmarks/\w+\.py)"
                       r"(?P<args>(?: [\w./-]+)*)\s*$")


def _script_in_process(script: str, args: list[str], cwd: Path) -> tuple[int, str, str]:
    """`python SCRIPT ARGS` run as __main__ in this process (runpy): the GPU page's
    benchmark then reads the fits the demo and tests/test_logca_select.py made
    (tests/shared_fits.py) instead of making them again in a process of its own."""
    import io
    import runpy
    import sys

    out, err, here, argv = io.StringIO(), io.StringIO(), os.getcwd(), sys.argv
    os.chdir(cwd)
    sys.argv = [script, *args]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:               # SystemExit("why"): Python prints it and exits 1
            code = 1
            err.write(f"{exc.code}\n")
    finally:
        os.chdir(here)
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()


def run_console(block: Block, cwd: Path):
    """Each ``$`` line: a plain ``accelperf ...`` line runs in-process, and a benchmark run
    from the source tree (BENCHMARK); anything else with shell syntax (pipes,
    redirections, globs, variables, other programs) in bash."""
    for command, expected, page_output in shown(block):
        plain = command.split("#")[0]
        benchmark = BENCHMARK.fullmatch(plain.rstrip())
        if command.startswith("accelperf ") and not needs_shell(plain) \
                and "\n" not in plain.replace("\\\n", ""):
            code, stdout, stderr = _in_process(command.replace("\\\n", " "), cwd)
        elif benchmark:
            code, stdout, stderr = _script_in_process(benchmark["script"],
                                                      benchmark["args"].split(), cwd)
        else:
            done = subprocess.run(["bash", "-c", command], cwd=cwd, env=_env(), text=True,
                                  capture_output=True, timeout=COMMAND_SECONDS,
                                  stdin=subprocess.DEVNULL)
            code, stdout, stderr = done.returncode, done.stdout, done.stderr
        assert code == expected, (
            f"{block.where()}: `{command}` exited {code}, the page says {expected}\n"
            f"--- stdout\n{stdout[-2000:]}\n--- stderr\n{stderr[-2000:]}")
        word = missing_output(page_output, stdout + stderr)
        assert word is None, (
            f"{block.where()}: `{command}` printed no {word!r} where the page shows it "
            f"(paste what it prints now)\n--- stdout\n{stdout[-3000:]}\n"
            f"--- stderr\n{stderr[-2000:]}")


def run_python(block: Block, namespace: dict, cwd: Path) -> str:
    """Run the block; what it printed."""
    import io
    import warnings

    from accelperf.errors import FormatNote
    code = compile(block.text, block.where(), "exec")
    here, out = os.getcwd(), io.StringIO()
    os.chdir(cwd)
    try:
        # a page's own example reads as written, with no note on an implicit form (the
        # tutorial's space once left count_range out)
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("error", FormatNote)
            exec(code, namespace)
    finally:
        os.chdir(here)
    return out.getvalue()


def check_printed(block: Block, printed: str):
    """A ``text`` block right after a ``python`` block shows what that block prints (a
    page once showed two findings in the other order): its words, in order, as a console
    block's output (lines starting with ``#`` are the page's words). A text block there
    that is not output says so with ``<!-- docs-test: skip (reason) -->``."""
    shown_lines = [line for line in block.text.splitlines()
                   if line.strip() and not line.lstrip().startswith("#")]
    word = missing_output(shown_lines, printed)
    assert word is None, (f"{block.where()}: the python block before it printed no "
                          f"{word!r} where the page shows it (paste what it prints now)\n"
                          f"--- printed\n{printed[-3000:]}")


def test_only_what_bash_would_expand_sends_a_line_to_bash():
    assert not needs_shell("accelperf logca design --target 'g1<=64B' --pair o,L")
    assert not needs_shell('accelperf density bound --algorithm "rho = alpha/(2*s^2)"')
    assert not needs_shell("accelperf lpn simulate m --inputs 'examples/images/*.jpg'")
    assert needs_shell("accelperf logca whatif --set A=*2")            # a glob
    assert needs_shell("accelperf lpn list | head -3")
    assert needs_shell('accelperf lpn show "$MODEL"')
    assert needs_shell("accelperf lpn show 'a'b > out.txt")
    assert not needs_shell("accelperf lpn show \\'a\\'")              # escaped quotes


def test_the_output_a_page_shows_is_what_the_command_prints():
    printed = "gpu-sort: error 12.6% (max 17.1%); fit 2.2 s\n  terms: floor,\n  layer:L1d\n"
    assert missing_output(["gpu-sort: error 12.6% (max", "17.1%); fit 9.9 s"], printed) is None
    assert missing_output(["terms: floor, layer:L1d"], printed) is None      # rewrapped
    assert missing_output(["gpu-sort: error 12.7%"], printed) == "12.7%"
    assert missing_output(["layer:L1d", "terms:"], printed) == "terms:"       # out of order
    assert missing_output(["fit 2.2 ms"], printed) == "2.2"          # only seconds vary
    assert missing_output(["gpu-sort: error 9.6% (max 1%);  # varies: the BLAS"],
                          printed) is None
    assert missing_output(["gpu-sort: loss 9.6%  # varies: the BLAS"], printed) == "loss"
    block = Block(ROOT / "x.md", 1, "console", "$ accelperf x\n# about it\nout 1\n\n"
                  "$ accelperf y  # exit 2\n", None)
    assert shown(block) == [("accelperf x", 0, ["out 1"]), ("accelperf y  # exit 2", 2, [])]


def test_the_block_reader_follows_the_convention(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("```console\n$ accelperf --version\nout\n$ accelperf nope  # exit 2\n"
                    "$ echo a \\\n  b\n```\n\n<!-- docs-test: skip (slow) -->\n```python\nx\n```\n"
                    "```toml\na = 1\n```\n")
    got = blocks(page)
    assert [b.lang for b in got] == ["console", "python", "toml"]
    assert commands(got[0]) == [("accelperf --version", 0), ("accelperf nope  # exit 2", 2),
                                ("echo a \\\n  b", 0)]
    assert got[1].skip_reason == "slow" and got[0].skip_reason is None


# Pages that extract what a test file extracts too (the AES-GCM stream, the credit link):
# they share it (tests/extracted.py), in one work unit with that file (tests/conftest.py).
SHARE_EXTRACTIONS = {"docs/how-to/packet-engine.md", "docs/explanation/interfaces.md"}
# Pages that fit the shipped GPU data as the demo and tests/test_logca_select.py do
# (tests/shared_fits.py), in one work unit with them.
SHARE_FITS = {"docs/how-to/gpu-pays-off.md", "README.md"}
# Pages that run one `lpn calibrate` (tests/shared_fits.py), in one work unit.
SHARE_CALIBRATIONS = {"docs/how-to/calibrate.md", "README.md"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_code_block_runs(page, scratch):
    from extracted import reusing_extractions
    from shared_fits import reusing_calibrations, reusing_fits
    namespace = {"__name__": "__docs__"}
    name = str(page.relative_to(ROOT))
    printed = None          # what the python block just before printed
    with reusing_extractions() if name in SHARE_EXTRACTIONS else contextlib.nullcontext(), \
            reusing_fits() if name in SHARE_FITS else contextlib.nullcontext(), \
            reusing_calibrations() if name in SHARE_CALIBRATIONS else contextlib.nullcontext():
        for block in blocks(page):
            if block.skip_reason is not None:
                printed = None
                continue
            if block.lang == "text" and printed is not None:
                check_printed(block, printed)
            printed = None
            if block.lang == "console":
                run_console(block, scratch)
            elif block.lang == "python":
                printed = run_python(block, namespace, scratch)


def test_the_site_builds_strictly(tmp_path):
    mkdocs = BIN / "mkdocs"
    if not mkdocs.exists() and shutil.which("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    done = subprocess.run([str(mkdocs if mkdocs.exists() else "mkdocs"), "build", "--strict",
                           "--site-dir", str(tmp_path / "site")], cwd=ROOT, env=_env(),
                          text=True, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "tutorial" / "ten-minutes" / "index.html").exists()
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()


def test_the_notebook_is_generated_from_the_tutorial_page():
    """docs/tutorial/ten-minutes.ipynb is tools/make_tutorial_notebook.py's output: edit the
    page and re-run the tool, never the notebook."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_tutorial_notebook",
                                                  ROOT / "tools" / "make_tutorial_notebook.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.NOTEBOOK.read_text(encoding="utf-8") == tool.notebook(), \
        "run: .venv/bin/python tools/make_tutorial_notebook.py"


def test_the_tutorial_notebook_runs(scratch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook = nbformat.read(ROOT / "docs" / "tutorial" / "ten-minutes.ipynb", as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(scratch)}})
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code"
               for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # the objects show themselves: at least one cell ends in an HTML or SVG picture
    assert any({"text/html", "image/svg+xml"} & set(o.get("data", {})) for o in outputs)


def test_the_tutorial_net_is_the_shipped_example():
    """examples/three_stage.py (what the tutorial's shell commands load) defines the same
    pipeline() as the tutorial's first block, so the page and the commands agree."""
    import ast

    def pipeline_of(text):
        tree = ast.parse(text)
        [fn] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "pipeline"]
        return ast.dump(fn)

    page = ROOT / "docs" / "tutorial" / "ten-minutes.md"
    first = next(b for b in blocks(page) if b.lang == "python")
    shipped = (ROOT / "examples" / "three_stage.py").read_text(encoding="utf-8")
    assert pipeline_of(first.text) == pipeline_of(shipped)


def test_the_tutorial_is_short():
    """Issue 26's target: the reader's own code in the tutorial stays within 40 lines
    (blank lines, comments and lines that only print or assert what the page shows aside)."""
    page = ROOT / "docs" / "tutorial" / "ten-minutes.md"
    code = [line for b in blocks(page) if b.lang == "python" for line in b.text.splitlines()
            if line.strip() and not line.strip().startswith(("#", "print(", "assert "))]
    assert len(code) <= 40, len(code)
