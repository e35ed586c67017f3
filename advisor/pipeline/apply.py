"""``hep-advisor apply``: carry out a layout recommendation into new files, safely.

M001 (merge), R001 (rewrite baskets, ``hadd -O``) and C001 (recompress) are applied with ROOT's
``hadd`` where it can be found (on ``PATH`` or in the ``root`` package), else with uproot.

Safety, in order:

- Only DEST is written.  Inputs are opened read-only; their size and modification time are
  recorded before and compared after (``ApplyResult.inputs_unchanged``).  An output name that
  already exists in DEST and is not recorded in DEST's journal is never overwritten.
- Each output is written under a temporary name (``.NAME.partial``), then verified: its entries
  and the SHA-256 of every branch's decompressed values must equal those of its inputs (see
  :mod:`hep_advisor.pipeline.apply_verify`).  Only then is it renamed into place and marked verified
  in the journal, ``hep-advisor-apply.json`` in DEST (written atomically after every output).
- Interrupted (Ctrl-C, a crash), it is resumable: run the same command again.  Verified outputs
  whose file still has its recorded SHA-256 are skipped; a verified output that changed since
  (truncated, damaged) is detected and written again; temporary files are removed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hep_advisor.findings.apply import (
    JOURNAL,
    ApplyError,
    ApplyPlan,
    ApplyResult,
    OutputResult,
    PlannedOutput,
    VerificationError,
)
from hep_advisor.pipeline.apply_verify import (
    compare,
    data_digest,
    digest_from_json,
    digest_to_json,
    file_sha256,
    tree_names,
)
from hep_advisor.pipeline.apply_write import find_hadd, write_output

JOURNAL_VERSION = 1
#: What apply can do, by recommendation code.
#: ROOT's compression settings (algorithm x 100 + level) of the algorithms C001 proposes.
SETTINGS = {"LZ4": 404, "ZSTD": 505, "ZLIB": 101, "LZMA": 207}
#: Merged file size when neither the user nor a cached advice gives one (MB).
DEFAULT_TARGET_MB = 1000.0

Progress = Callable[[int, int, str], None]


# -- planning --------------------------------------------------------------------------------
def input_files(paths: Sequence[str]) -> list[tuple[str, int]]:
    """The ROOT files of ``paths`` (files, directories, globs) with their sizes, sorted."""
    from hep_advisor.probes.files import discover

    found = discover([str(p) for p in paths])
    if not found.files:
        why = "; ".join(f"{e.path}: {e.error}" for e in found.errors[:3])
        raise ApplyError(f"no ROOT file in {', '.join(map(str, paths))}"
                         + (f" ({why})" if why else ""))
    return [(os.path.abspath(f.path), f.size_bytes) for f in found.files]


def make_plan(code: str, paths: Sequence[str], dest: str | Path, *,
              target_mb: float | None = None, optimize: bool = False,
              algorithm: str = "ZSTD", tool: str | None = None) -> ApplyPlan:
    """What ``apply CODE`` would do: outputs in DEST and the inputs of each.  M001: the files
    in sorted order, grouped into outputs of about ``target_mb`` (``optimize``: ``hadd -O``,
    for tiny baskets); R001 and C001: one output per input, same name (``algorithm`` for
    C001).  ``tool``: ``"hadd"`` or ``"uproot"`` (default: hadd where found)."""
    code = code.upper()
    from hep_advisor.rules.registry import RULES, tryable

    if code not in tryable():
        raise ApplyError(f"apply knows {', '.join(tryable())} (the layout recommendations), "
                         f"not {code}")
    kind = RULES[code].change
    assert kind is not None
    if tool is None:
        tool = "hadd" if find_hadd() else "uproot"
    elif tool == "hadd" and not find_hadd():
        raise ApplyError("hadd not found (install ROOT, or use --tool uproot)")
    files = input_files(paths)
    dest_abs = os.path.abspath(dest)
    compression = None
    if kind == "merge":
        target = float(target_mb or DEFAULT_TARGET_MB)
        options = ("-O", "-fk") if optimize else ("-fk",)
        outputs = _groups(files, target * 1e6)
    else:
        target = None
        if kind == "compression":
            alg = algorithm.upper()
            if alg not in SETTINGS:
                raise ApplyError(f"unknown algorithm {algorithm!r} ({', '.join(SETTINGS)})")
            compression = SETTINGS[alg]
            options = ("-O", f"-f{compression}")
        else:
            options = ("-O", "-fk")
        outputs = _one_each(files)
    for o in outputs:
        if any(os.path.dirname(i) == dest_abs and os.path.basename(i) == o.name
               for i in o.inputs):
            raise ApplyError(f"DEST {dest_abs} holds the input {o.name}: choose another DEST")
    return ApplyPlan(code, kind, tool, dest_abs, options, tuple(outputs), compression, target)


def _groups(files: list[tuple[str, int]], target_bytes: float) -> list[PlannedOutput]:
    groups: list[list[tuple[str, int]]] = [[]]
    for f in files:
        cur = groups[-1]
        size = sum(s for _, s in cur)
        if cur and size + f[1] / 2 > target_bytes:
            groups.append([f])
        else:
            cur.append(f)
    return [PlannedOutput(f"merged_{i:03d}.root", tuple(p for p, _ in g), sum(s for _, s in g))
            for i, g in enumerate(groups)]


def _one_each(files: list[tuple[str, int]]) -> list[PlannedOutput]:
    out: list[PlannedOutput] = []
    seen: set[str] = set()
    for i, (p, s) in enumerate(files):
        name = os.path.basename(p)
        if name in seen:
            name = f"{i:04d}_{name}"
        seen.add(name)
        out.append(PlannedOutput(name, (p,), s))
    return out


# -- the journal -----------------------------------------------------------------------------
def _read_journal(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ApplyError(f"{path}: unreadable journal ({exc}); remove it to start over") from None
    return data if isinstance(data, dict) else None


def _write_journal(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def _fingerprints(plan: ApplyPlan) -> dict[str, list[int]]:
    out = {}
    for o in plan.outputs:
        for p in o.inputs:
            st = os.stat(p)
            out[p] = [st.st_size, st.st_mtime_ns]
    return out


# -- doing it --------------------------------------------------------------------------------
def apply_plan(plan: ApplyPlan, progress: Progress | None = None,
               after_write: Callable[[Path], None] | None = None,
               check: Callable[[], None] | None = None) -> ApplyResult:
    """Write, verify and rename every output of ``plan`` not verified before (see the module's
    docstring).  ``progress(done_bytes, total_bytes, message)``; ``after_write(tmp_path)`` is
    called on each output before it is verified (tests use it to damage one); ``check`` is
    called between steps and may raise to stop.  Raises :class:`VerificationError` when an
    output's data differ from its inputs' (nothing is renamed; the journal records it)."""

    dest = Path(plan.dest)
    dest.mkdir(parents=True, exist_ok=True)
    jpath = dest / JOURNAL
    journal = _read_journal(jpath)
    if journal is not None and journal.get("plan") != plan.key():
        raise ApplyError(f"{jpath} records another apply ({journal.get('plan', {}).get('code')}"
                         f", other inputs or options): use a new DEST, or remove the journal")
    fingerprints = _fingerprints(plan)
    if journal is None:
        journal = {"version": JOURNAL_VERSION, "plan": plan.key(), "tool": plan.tool,
                   "inputs": fingerprints, "outputs": {}}
    elif journal.get("inputs") != fingerprints:
        raise ApplyError(f"the inputs changed since {jpath} was written: use a new DEST")
    done: dict[str, Any] = journal["outputs"]
    for o in plan.outputs:  # never overwrite what is not ours; leftovers of a killed run go
        target = dest / o.name
        if target.exists() and o.name not in done:
            raise ApplyError(f"{target} exists and is not recorded in {JOURNAL}: "
                             "apply never overwrites it (choose another DEST)")
        (dest / f".{o.name}.partial").unlink(missing_ok=True)
    _write_journal(jpath, journal)

    total = plan.input_bytes
    finished = 0
    results: list[OutputResult] = []

    def report(extra: int, message: str) -> None:
        if progress is not None:
            progress(min(finished + extra, total), total, message)

    for o in plan.outputs:
        if check is not None:
            check()
        target = dest / o.name
        rec = done.get(o.name)
        state = "written"
        if rec is not None and rec.get("state") == "verified":
            if target.exists() and file_sha256(str(target)) == rec.get("sha256"):
                results.append(OutputResult(o.name, str(target), len(o.inputs),
                                            int(rec["bytes"]), int(rec["entries"]), "skipped"))
                finished += o.input_bytes
                report(0, f"{o.name}: verified before, skipped")
                continue
            state = "redone"
            report(0, f"{o.name}: changed since it was verified; writing it again")
            target.unlink(missing_ok=True)
        tmp = dest / f".{o.name}.partial"
        try:
            report(0, f"writing {o.name}")
            write_output(plan, o, str(tmp), check=check)
            report(o.input_bytes // 3, f"checking the inputs of {o.name}")
            if after_write is not None:
                after_write(tmp)
            want = data_digest(list(o.inputs), tree_names(o.inputs[0]), check=check)
            report(2 * o.input_bytes // 3, f"verifying {o.name}")
            try:
                got = data_digest([str(tmp)], list(want), check=check)
                problems = compare(want, got)
            except Exception as exc:
                problems = [f"unreadable: {type(exc).__name__}: {exc}"]
            if problems:
                done[o.name] = {"state": "failed", "problems": problems[:20]}
                _write_journal(jpath, journal)
                raise VerificationError(f"{o.name}: verification failed: {problems[0]}"
                                        + (f" (and {len(problems) - 1} more)"
                                           if len(problems) > 1 else ""))
            sha = file_sha256(str(tmp))
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        entries = sum(t.entries for t in want.values())
        done[o.name] = {"state": "verified", "sha256": sha, "bytes": target.stat().st_size,
                        "entries": entries, "inputs": list(o.inputs),
                        "digest": digest_to_json(want)}
        _write_journal(jpath, journal)
        finished += o.input_bytes
        results.append(OutputResult(o.name, str(target), len(o.inputs),
                                    target.stat().st_size, entries, state))
        report(0, f"{o.name} verified")
    unchanged = _fingerprints(plan) == fingerprints
    return ApplyResult(plan, tuple(results), unchanged, str(jpath))


def journal_digests(dest: str | Path) -> dict[str, Any]:
    """Each verified output's data digest, from DEST's journal (``{}`` when none)."""
    data = _read_journal(Path(dest) / JOURNAL) or {}
    return {k: digest_from_json(v["digest"]) for k, v in data.get("outputs", {}).items()
            if v.get("state") == "verified"}
