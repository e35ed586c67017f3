"""Writing one planned output of ``apply``: ROOT's ``hadd``, or uproot without ROOT.

The output goes to the temporary path it is given; the caller verifies and renames it.  A
``KeyboardInterrupt`` (or whatever ``check`` raises) ends a running ``hadd`` before it passes
on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hep_advisor.findings.apply import ApplyPlan, PlannedOutput

#: uproot: entries per extend() are chosen to fill about this many uncompressed bytes (one
#: basket per branch per call: large chunks give large baskets, as hadd -O does).
UPROOT_CHUNK_BYTES = 100_000_000


def find_hadd() -> str | None:
    """ROOT's hadd: on PATH, else in the ``root`` package's ``bin/``."""
    found = shutil.which("hadd")
    if found:
        return found
    try:
        import importlib.util

        spec = importlib.util.find_spec("ROOT")
    except (ImportError, ValueError):
        return None
    for loc in (spec.submodule_search_locations or []) if spec else []:
        cand = os.path.join(loc, "bin", "hadd")
        if os.access(cand, os.X_OK):
            return cand
    return None


def write_output(plan: ApplyPlan, out: PlannedOutput, tmp: str,
                 check: Callable[[], None] | None = None) -> None:
    if plan.tool == "hadd":
        _hadd(plan, out, tmp, check)
    else:
        _uproot_write(plan, out, tmp, check)


def _hadd(plan: ApplyPlan, out: PlannedOutput, tmp: str,
          check: Callable[[], None] | None) -> None:
    from hep_advisor.findings.apply import ApplyError

    hadd = find_hadd()
    if hadd is None:
        raise ApplyError("hadd not found")
    cmd = [hadd, *plan.options, tmp, *out.inputs]
    with tempfile.TemporaryFile() as log:  # a pipe left unread would fill and block hadd
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            while proc.poll() is None:
                if check is not None:
                    check()
                time.sleep(0.05)
        except BaseException:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise
        log.seek(0)
        text = log.read().decode(errors="replace")
    if proc.returncode != 0:
        last = [ln for ln in text.splitlines() if ln.strip()][-1:] or ["no message"]
        raise ApplyError(f"hadd failed for {out.name} (exit {proc.returncode}): {last[0]}")


def _uproot_write(plan: ApplyPlan, out: PlannedOutput, tmp: str,
                  check: Callable[[], None] | None) -> None:
    """Read each input's trees into arrays and write them (in large chunks) with uproot, with
    the first input's compression, or the plan's for C001."""
    import uproot

    from hep_advisor.pipeline.apply_verify import leaf_branches, tree_names

    names = tree_names(out.inputs[0])
    with uproot.open(out.inputs[0]) as f0:
        code = plan.compression if plan.compression is not None else int(f0.file.fCompress)
    compression: Any = uproot.compression.Compression.from_code(code) if code else None
    with uproot.recreate(tmp, compression=compression) as dst:
        for path in out.inputs:
            with uproot.open(path) as src:
                for name in names:
                    tree = src[name]
                    leaves = leaf_branches(tree)
                    n = int(tree.num_entries)
                    if n == 0 or not leaves:
                        continue
                    total = sum(int(tree[b].member("fTotBytes")) for b in leaves)
                    step = max(1, int(n * UPROOT_CHUNK_BYTES / max(total, 1)))
                    for chunk in tree.iterate(leaves, step_size=step, library="ak", how=dict):
                        if name not in dst:  # a TTree (assigning arrays writes an RNTuple)
                            dst.mktree(name, {b: a.type for b, a in chunk.items()})
                        dst[name].extend(chunk)
                        if check is not None:
                            check()
