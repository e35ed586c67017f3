"""The recommendations: one pure function per kind, of (site, dataset, calibration, model).

Each rule returns a :class:`~advisor.advice.Recommendation` or ``None`` (it does not apply: its
trigger is not met, or the model predicts less than ``MIN_SPEEDUP``).  The predicted speed-up
always comes from a scenario run through the fitted model, never from a constant.  Codes are
stable:

====  ===========  ==============================================================
code  kind         when
====  ===========  ==============================================================
M001  merge        per-file costs take >= 10% of a file's time
R001  rewrite      mean basket < 8 kB, or clusters < 1 MB (and no merge applies)
C001  compression  decompression takes >= 15% of the time
B001  branches     the used branches (--uses) hold <= 50% of the bytes read
A001  readahead    larger sequential reads measured >= 10% faster
T001  treecache    scattered reads reach the storage smaller than 512 kB
P001  cache        the data fit in the available memory and are read cold
L001  layout       storage takes >= 20% of the time at one worker per core
W001  workers      the knee of the predicted scaling is above the workers now
N001  rntuple      a TTree sample converted to RNTuple read >= 1.05x as fast (measured)
====  ===========  ==============================================================

Three more families live beside these, each with its own inputs: ``reader`` (U001, U005: the
user's own reading code, from a trace), ``remote`` (X001-X003: stream, stage or cache data
behind a link; T001 for ROOT over the link) and ``cluster`` (D001-D003: nodes and workers
under Dask).
"""

from __future__ import annotations

from ..advice import Recommendation, rank_key
from .context import Context
from .data import branches_rule, compression_rule
from .files import merge_rule, rewrite_rule
from .parallel import workers_rule
from .rntuple import rntuple_rule, silence_ttree_rules
from .runspread import with_run_spread
from .storage import cache_rule, layout_rule, readahead_rule, treecache_rule


def recommend(ctx: Context) -> list[Recommendation]:
    """Every recommendation that applies, ranked by predicted speed-up, its interval widened by
    the machine's measured run-to-run spread (:mod:`.runspread`)."""
    merge = merge_rule(ctx)
    merged = merge is not None and merge.contradicted is None  # "not recommended": R001 stays
    found = [merge, rewrite_rule(ctx, merged), compression_rule(ctx),
             branches_rule(ctx), readahead_rule(ctx), treecache_rule(ctx), cache_rule(ctx),
             layout_rule(ctx), workers_rule(ctx), rntuple_rule(ctx)]
    recs = [r for r in silence_ttree_rules(ctx, found) if r is not None]
    return sorted(with_run_spread(ctx, recs), key=rank_key)


__all__ = ["Context", "recommend"]
