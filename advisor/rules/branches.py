"""Branches (B001): the program reads branches its analysis does not use; and what to say about
``--branches`` and ``--uses``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from hep_advisor.findings.recommendation import Action, Evidence, Recommendation
from hep_advisor.models import scenarios as sc
from hep_advisor.models.replay.predict import MergePrediction, Reader
from hep_advisor.models.scenarios import PredictionPoint
from hep_advisor.probes.results import DatasetProfile, largest_tree
from hep_advisor.rules import versions
from hep_advisor.rules.compression import _percent
from hep_advisor.rules.context import Context
from hep_advisor.rules.files import replay_point
from hep_advisor.rules.inputs import Inputs, python_files
from hep_advisor.rules.rule import Rule
from hep_advisor.rules.storage import entry_step

#: Recommend reading fewer branches when the branches the analysis uses hold at most this share
#: of the bytes the program reads.
BRANCHES_MAX_FRACTION = 0.5


def branches_rule(ctx: Context) -> Recommendation | None:
    """B001: the program reads more branches than the analysis uses.  ``ctx.branches`` is what
    the program reads (``--branches``; none given: every branch, as ROOT without
    ``SetBranchStatus`` and uproot without ``filter_name`` do), ``ctx.uses`` what the analysis
    uses (``--uses``).  It fires only when the used branches are a strict subset of the read
    ones holding at most ``BRANCHES_MAX_FRACTION`` of the bytes read; without ``uses`` it
    cannot tell, and does not fire.  The speed-up is the program's reader replayed on the
    read branches over the printed reader replayed on the used ones (:func:`_replayed`); where
    no basket map was read, the rate model's prediction for the used branches' bytes over its
    prediction for the read ones' (the fallback)."""
    tree = ctx.tree
    if tree is None or not ctx.uses or not tree.branch_profiles:
        return None
    by_name = {b.name: b for b in tree.branch_profiles}
    given = bool(ctx.branches)
    read = [n for n in dict.fromkeys(ctx.branches) if n in by_name] if given else list(by_name)
    used = [n for n in dict.fromkeys(ctx.uses) if n in by_name]
    if not read or not used or not set(used) < set(read):
        return None  # the program reads no more than the analysis uses (or the names are off)
    total = sum(b.compressed_bytes for b in tree.branch_profiles)
    read_bytes = sum(by_name[n].compressed_bytes for n in read)
    used_bytes = sum(by_name[n].compressed_bytes for n in used)
    if total <= 0 or read_bytes <= 0 or used_bytes <= 0:
        return None
    fraction = used_bytes / read_bytes
    if fraction > BRANCHES_MAX_FRACTION:
        return None
    scen = sc.branches(used_bytes / total, len(used) / len(by_name))
    replayed = _replayed(ctx, used)
    if replayed is not None:  # the program's reader, then the printed one on the used branches
        point = replay_point(replayed)
    else:  # no basket maps or reader: the rate model's scenario (the fallback)
        now = ctx.predict(sc.branches(read_bytes / total, len(read) / len(by_name))) \
            if read_bytes < total else None
        point = _relative(ctx.predict(scen), now)
    how = []
    if replayed is not None:
        b, a = replayed.before, replayed.after
        how = [Evidence("replayed now / used branches only",
                        f"{b.total_s:.2f} / {a.total_s:.2f}", "s", "derived",
                        f"{b.io_s:.2f} / {a.io_s:.2f} s of device time, "
                        f"{b.compressed_mb:,.1f} / {a.compressed_mb:,.1f} MB read "
                        "(the program's reader, then the printed one)")]
    what_read = (f"{len(read)} of the tree's {tree.branches} branches" if given
                 else f"all {tree.branches} branches")
    return ctx.make(
        rule=B001,
        title=f"Read only the {len(used)} branches the analysis uses, not {len(read)} "
              f"({_percent(fraction)} of the bytes read now)",
        audience="analyst", point=point, scenario=scen,
        summary=(f"The program reads {what_read} ({read_bytes / 1e6:,.1f} MB), but the "
                 f"analysis uses {len(used)} of them, holding {_percent(fraction)} of those "
                 "bytes. Reading (or keeping) only those reads less."),
        evidence=[
            Evidence("branches the program reads", len(read), "", "probed",
                     "given with --branches" if given else
                     "every branch (no --branches): ROOT's and uproot's default"),
            Evidence("branches the analysis uses", len(used), "", "probed",
                     "given with --uses"),
            Evidence("bytes read now", float(f"{read_bytes / 1e6:.4g}"), "MB", "probed",
                     f"{_percent(read_bytes / total)} of the tree's compressed bytes"),
            Evidence("bytes the analysis uses", float(f"{used_bytes / 1e6:.4g}"), "MB",
                     "probed"),
            Evidence("share of the bytes read that are used", float(f"{100 * fraction:.3g}"),
                     "%", "derived"),
            Evidence("threshold", 100 * BRANCHES_MAX_FRACTION, "%", "threshold",
                     "of the bytes read"),
            *how,
        ],
        actions=[
            *_readers_first(ctx, [
                Action.labelled("ROOT: enable only these branches",
                                'tree->SetBranchStatus("*", 0); for (auto b : {'
                                + ", ".join(_cxx_string(root_name(n)) for n in used)
                                + "}) tree->SetBranchStatus(b, 1);", versions.ROOT_TTREE),
                Action.labelled("uproot: name them (an entry-count step of whole clusters: a "
                                "memory-size step such as the default '100 MB' first reads "
                                "every basket's key)",
                                f"tree.iterate(filter_name={used!r}, "
                                f"step_size={_step(ctx, used)})", versions.UPROOT)]),
            Action.labelled("or slim the files once to these branches (RDataFrame Snapshot)",
                            snapshot_script(ctx.paths, tree.name, used), versions.ROOT_RDF),
        ],
        extra_assumptions=(
            ("the program reads the branches given with --branches" if given else
             "the program reads every branch (no --branches: ROOT's default without "
             "SetBranchStatus, uproot's without filter_name)")
            + " and the analysis needs only those given with --uses",))


def _relative(point: PredictionPoint, now: PredictionPoint | None) -> PredictionPoint:
    """``point``'s speed-up (and interval) over ``now`` rather than over the model's
    baseline (``now`` is ``None``: the baseline itself)."""
    if now is None or not now.speedup:
        return point
    s = point.speedup
    return replace(point, speedup=None if s is None else s / now.speedup,
                   speedup_low=None if point.speedup_low is None
                   else point.speedup_low / now.speedup,
                   speedup_high=None if point.speedup_high is None
                   else point.speedup_high / now.speedup)


def selection_notes(dataset: DatasetProfile, branches: Sequence[str] | None,
                    uses: Sequence[str] | None) -> tuple[str, ...]:
    """What to say about ``--branches`` (read) and ``--uses`` (used), as notes: names that
    no tree has, used branches the program does not read, and, for ``--branches`` alone,
    that B001 needs ``--uses``."""
    trees = dataset.trees
    if not trees or not (branches or uses):
        return ()
    tree = largest_tree(trees)
    known = {b.name for b in tree.branch_profiles}
    if not known:
        return ()
    notes = []
    for flag, names in (("--branches", branches), ("--uses", uses)):
        missing = [n for n in dict.fromkeys(names or ()) if n not in known]
        if missing:
            notes.append(f"{flag}: no branch {_names(missing)} in tree {tree.name}")
    if branches and uses:
        unread = [n for n in dict.fromkeys(uses) if n in known and n not in set(branches)]
        if unread:
            notes.append(f"--uses names {_names(unread)}, which the program does not read "
                         "(--branches): the used branches should be among the read ones")
    elif branches and not uses:
        notes.append(f"the program reads {len(set(branches) & known)} of the {len(known)} "
                     "branches (--branches): that is the baseline; whether it reads more than "
                     "the analysis needs (B001) takes the branches it uses (--uses)")
    return tuple(notes)


def _names(names: Sequence[str], shown: int = 5) -> str:
    head = ", ".join(names[:shown])
    return head + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _cxx_string(text: str) -> str:
    """A C++ string literal (JSON's escapes are C++'s for these)."""
    return json.dumps(text, ensure_ascii=False)


def root_name(branch: str) -> str:
    """ROOT's name for a branch as uproot names it: a split object's member ``evt/evt_f0``
    is ``evt.evt_f0`` to ``SetBranchStatus`` and to RDataFrame (they know no ``/``)."""
    return branch.replace("/", ".")


def snapshot_script(ins: Inputs, tname: str, names: list[str]) -> str:
    """Python that slims the inputs' files to ``names`` with RDataFrame into slim.root.  The
    files go to a TChain one by one (``AddFile``: no wildcards), through links with plain names
    where ROOT would read their paths as syntax (see :mod:`.inputs`)."""
    head = f"files = {python_files(ins)}\nchain = ROOT.TChain({tname!r})\n"
    columns = [root_name(n) for n in names]
    snap = f"ROOT.RDataFrame(chain).Snapshot({tname!r}, 'slim.root', {columns!r})"
    if not ins.links:
        return ("import os\n\nimport ROOT\n\n" + head
                + "for f in files:\n    chain.AddFile(f)\n" + snap)
    return ("import os\nimport tempfile\n\nimport ROOT\n\n" + head
            + "with tempfile.TemporaryDirectory() as links:  # ROOT reads $, ? and # as syntax\n"
            "    for i, f in enumerate(files):\n"
            "        link = os.path.join(links, f'{i}.root')\n"
            "        os.symlink(os.path.abspath(f), link)\n"
            "        chain.AddFile(link)\n"
            "    " + snap)


def _readers_first(ctx: Context, actions: list[Action]) -> list[Action]:
    """(ROOT's, uproot's) with the program's own engine's first: the one the short report
    shows."""
    root, up = actions
    return [root, up] if ctx.reader is not None and ctx.reader.engine == "root" else [up, root]


def _replayed(ctx: Context, used: Sequence[str]) -> MergePrediction | None:
    """The program's reader on the branches it reads now, then on the used ones alone with the
    reader the rule prints (uproot: an entry step of whole clusters; a ROOT reader: itself),
    replayed (``None`` without basket maps or a reader)."""
    prog = ctx.program_reader
    if prog is None or not ctx.basket_maps:
        return None
    after = prog if prog.engine == "root" else Reader(step=_step(ctx, used))
    return ctx.reader_replay(prog, after, after_branches=list(used))


def _step(ctx: Context, used: Sequence[str]) -> int:
    """uproot's entry-count ``step_size`` for the used branches, whole clusters."""
    if ctx.basket_maps:
        from hep_advisor.models.replay.predict import cluster_step

        return cluster_step(ctx.basket_maps, list(used))
    return entry_step(ctx)


B001 = Rule("B001", "branches", "branches", "Read only the branches the analysis uses",
            trigger="the used branches (--uses) hold <= 50% of the bytes read",
            prediction="the program's reader replayed on the branches it reads, then the "
                       "printed reader on the used ones (the rate model's scenario where no "
                       "basket map was read)",
            measure="time the analysis once with the change applied",
            check=lambda ctx, found: branches_rule(ctx))

RULES = (B001,)
