"""Explorer speed (issue 25's targets): the page for the demo's models under 5 MB, loaded in
under 1 s in headless Chromium, an update under 50 ms for the LogCA curve of 400 points
and for the JPEG interface.

Builds the page as ``accelperf explore --out`` does (SPARC AES designs, src-map-c,
jpeg-decoder at 75 MHz), then in one headless Chromium (Playwright, the system browser):

* loads it ``--loads`` times in fresh tabs; the load time is the page's own clock from the
  start of navigation to the end of its first draw (``explorerTimings.ready``);
* baseline, in the same browser: a page holding only the same inlined Vega bundle (the
  vl-convert-python package's, a module script as in the explorer) and nothing else,
  loaded as often: the ratio says how much of the load is the charting library's parse
  and compile, which no change to the explorer's own code can remove;
* moves the LogCA A slider and the JPEG mean-symbols slider ``--updates`` times each
  (input events, one at a time, each after the last one's chart is rendered); each update
  is timed inside the page with performance.now() from the input to its chart rendered
  (formulas, readouts, chart), beside its model part alone (the baseline for updates: the
  same update with the drawing left out).

Prints median and min of each, the page size and the machine's load average (1 minute,
before and after); the headline last. Times are the machine's: on a shared machine the
load average says how far to trust them.

Run: .venv/bin/python benchmarks/explore_speed.py [--loads 10] [--updates 40] [--delays]
(psutil, in the test extra, adds the browser's CPU time)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def build(delays: bool) -> str:
    from accelperf.explore import (DEFAULT_DESIGNS, LogcaPanel, build_page, density_panel,
                                   lpn_panel)
    from accelperf.logca.presets import preset
    return build_page(LogcaPanel(tuple(preset(d, "aes") for d in DEFAULT_DESIGNS)),
                      density_panel("src-map-c"),
                      lpn_panel("jpeg-decoder", frequency_hz=75e6, delays=delays))


def browser_cpu() -> dict | None:
    """{pid: user + system CPU seconds} of every process this one started (the browser's),
    or None without psutil. Unlike wall time, CPU time hardly depends on what else the
    machine runs: on an idle core a load takes about its CPU time."""
    try:
        import psutil
    except ImportError:
        return None
    out = {}
    for proc in psutil.Process().children(recursive=True):
        try:
            t = proc.cpu_times()
            out[proc.pid] = t.user + t.system
        except psutil.Error:
            pass
    return out


def cpu_ms_since(before: dict | None) -> float | None:
    """Browser CPU milliseconds since ``before``, over the processes alive now (a tab
    closed meanwhile is left out: its time is not this run's)."""
    if before is None:
        return None
    now = browser_cpu()
    return 1e3 * sum(t - before.get(pid, 0.0) for pid, t in now.items())


def timed_load(browser, url: str, mark: str) -> tuple[float, float | None, float | None]:
    """(milliseconds from navigation start to the page's ``mark``, to its first screen
    (the explorer's ``ready``; None for the baseline), browser CPU ms) of one load in a
    fresh tab."""
    cpu = browser_cpu()
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.goto(url)
    page.wait_for_function(mark, timeout=60_000)
    ms = page.evaluate(mark)
    first = page.evaluate("window.explorerTimings ? window.explorerTimings.ready : null")
    used = cpu_ms_since(cpu)
    page.close()
    return ms, first, used


READY = "window.explorerTimings && window.explorerTimings.allDrawn"
BASELINE = "window.baselineReady"
MOVE = """async ([id, n]) => {
  // n slider moves, one input event at a time, back and forth within the range; each
  // waits for the last one's chart to be rendered (the page draws asynchronously)
  const s = document.getElementById(id), lo = Number(s.min), hi = Number(s.max);
  const step = (hi - lo) / 97;
  let v = Number(s.value);
  for (let i = 0; i < n; i++) {
    v = v + step > hi ? lo + step : v + step;
    s.value = v;
    s.dispatchEvent(new Event("input"));
    await window.explorerSettled();
  }
}"""


def summary(name: str, values: list[float]) -> str:
    return f"{name}: median {statistics.median(values):.1f} ms, min {min(values):.1f} ms " \
           f"({len(values)} runs)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--updates", type=int, default=40)
    parser.add_argument("--delays", action="store_true",
                        help="with the JPEG decoder's delay sliders (minutes to build)")
    args = parser.parse_args(argv)
    for name in ("loads", "updates"):
        if getattr(args, name) < 2:
            print(f"error: --{name} = {getattr(args, name)} is invalid: at least 2",
                  file=sys.stderr)
            return 2
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if chromium is None or sync_playwright is None:
        print("error: needs chromium on PATH and playwright (pip install -e '.[test]')",
              file=sys.stderr)
        return 2
    from accelperf.explore.page import vega_script

    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    html = build(args.delays)
    print(f"page built in {time.perf_counter() - start:.1f} s (the JPEG interface's "
          f"extraction{' with its delays' if args.delays else ''})")
    size = len(html.encode())
    vega_bytes = len(vega_script().encode())
    with tempfile.TemporaryDirectory() as tmp:
        page_file, blank_file = Path(tmp) / "explorer.html", Path(tmp) / "vega-only.html"
        page_file.write_text(html, encoding="utf-8")
        # the mark is set by a module script after the bundle's: it runs once the bundle has
        blank_file.write_text(
            "<!doctype html><html><head><meta charset='utf-8'><script type='module'>"
            + vega_script().replace("</script", "<\\/script") + "</script></head><body>"
            "<script type='module'>window.baselineReady = performance.now();</script>"
            "</body></html>", encoding="utf-8")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
            timed_load(browser, blank_file.as_uri(), BASELINE)      # warm the browser
            runs = {"explorer": [], "baseline": []}
            for _ in range(args.loads):           # interleaved: all see the same load
                runs["explorer"].append(timed_load(browser, page_file.as_uri(), READY))
                runs["baseline"].append(timed_load(browser, blank_file.as_uri(), BASELINE))
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.goto(page_file.as_uri())
            page.wait_for_function("window.explorerTimings && window.explorerTimings.ready")
            page.evaluate("() => { for (const k of Object.keys(window.explorerTimings)) "
                          "if (Array.isArray(window.explorerTimings[k])) "
                          "window.explorerTimings[k].length = 0; }")
            update_cpu = {}
            for key, slider in (("logca", "in-A-slider"),
                                ("lpn", "in-mean_blocks_symbols-slider")):
                cpu = browser_cpu()
                page.evaluate(MOVE, [slider, args.updates])
                used = cpu_ms_since(cpu)
                update_cpu[key] = None if used is None else used / args.updates
            timings = page.evaluate("window.explorerTimings")
            startup = page.evaluate("[window.explorerTimings.scriptStart, "
                                    "window.explorerTimings.allDrawn, "
                                    "window.explorerTimings.firstDraw]")
            errors = page.evaluate("document.getElementById('lpn-status').textContent")
            browser.close()
    load_after = os.getloadavg()[0]
    if errors:
        print(f"error: the LPN panel says: {errors}", file=sys.stderr)
        return 1
    print(f"page: {size / 1e6:.2f} MB ({vega_bytes / 1e6:.2f} MB of it the Vega bundle); "
          f"target < 5 MB")
    print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after, "
          f"on {os.cpu_count()} cores")
    loads = [ms for ms, _, _ in runs["explorer"]]
    base = [ms for ms, _, _ in runs["baseline"]]
    print(summary("load, explorer (navigation start to every chart drawn)", loads))
    print(summary("  of which the first screen (its chart and every readout)",
                  [first for _, first, _ in runs["explorer"]]))
    print(summary("load, baseline: the Vega bundle alone", base))
    print(f"load ratio explorer / Vega alone: "
          f"{statistics.median(loads) / statistics.median(base):.2f}")
    script_start, ready, first_draws = startup
    print(f"  one load in parts: {script_start:.0f} ms until the explorer's script runs "
          f"(HTML and formulas parsed and run), {ready - script_start:.0f} ms more until "
          f"every chart is drawn (the Vega bundle's run, the controls, the three panels); "
          f"each chart's first draw (its Vega view made and rendered): " + ", ".join(
              f"{chart} {end - begin:.0f} ms" for chart, (begin, end) in first_draws.items()))
    if runs["explorer"][0][2] is not None:
        cpu = [c for _, _, c in runs["explorer"]]
        cpu_base = [c for _, _, c in runs["baseline"]]
        print(summary("browser CPU time per load, explorer", cpu))
        print(summary("browser CPU time per load, Vega alone", cpu_base))
    for whole, part, what in (("logca", "logcaCompute", "update, LogCA curve of 400 points"),
                              ("lpn", "lpnCompute", "update, JPEG interface")):
        print(summary(what, timings[whole]))
        print(summary("  its model part alone (drawing left out)", timings[part]))
        print(f"  ratio whole / model part: "
              f"{statistics.median(timings[whole]) / statistics.median(timings[part]):.1f}")
        if update_cpu[whole] is not None:
            print(f"  browser CPU time per update: {update_cpu[whole]:.1f} ms (mean)")
    print(f"update_logca_ms_median: {statistics.median(timings['logca']):.1f}")
    print(f"update_jpeg_ms_median: {statistics.median(timings['lpn']):.1f}")
    print(f"explorer_load_ms_median: {statistics.median(loads):.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
