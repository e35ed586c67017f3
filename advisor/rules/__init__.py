"""The rules: one record per code (:class:`~.rule.Rule`), in modules named by family, each
with the function that makes its recommendation from the rule context (site, dataset,
calibration, fitted model, basket maps, the program's reader).

Every rule returns a :class:`~hep_advisor.findings.recommendation.Recommendation` or ``None``
(it does not apply: its trigger is not met, or the speed-up predicted for it is below
``MIN_SPEEDUP``).  The predicted speed-up always comes from a prediction (a scenario through
the fitted model, or a replay), never from a constant.  Codes are stable; the table of them
is :func:`.registry.table` (``docs/rules.md``).

Beside the calibration's rules three families have inputs of their own: ``reader`` (U001-U006:
the user's own reading code, from a trace), ``remote`` (X001-X003: stream, stage or cache data
behind a link; T001 for ROOT over the link) and ``cluster`` (D001-D003: nodes and workers
under Dask).
"""

from __future__ import annotations

from hep_advisor.findings.recommendation import Recommendation, rank_key
from hep_advisor.rules.context import Context


def recommend(ctx: Context) -> list[Recommendation]:
    """Every calibration rule that applies (the registry's order: a rule may look at those
    found before it), ranked by predicted speed-up, its interval widened by the machine's
    measured run-to-run spread (:mod:`.runspread`)."""
    from hep_advisor.rules.registry import RULES
    from hep_advisor.rules.rntuple import silence_ttree_rules
    from hep_advisor.rules.runspread import with_run_spread

    found: dict[str, Recommendation | None] = {}
    for code, r in RULES.items():
        if r.source == "calibration" and r.check is not None:
            found[code] = r.check(ctx, found)
    recs = [r for r in silence_ttree_rules(ctx, list(found.values())) if r is not None]
    return sorted(with_run_spread(ctx, recs), key=rank_key)


__all__ = ["Context", "recommend"]
