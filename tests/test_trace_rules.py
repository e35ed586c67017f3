"""Reader rules U002, U003, U004, U006 on synthetic traces: each fires on its pattern, with
its change and argument, and stays silent without it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from test_trace_attribution import BASKETS, BRANCHES, by_branch, interleaved, timed

from hep_advisor.models.attribution import attribute, device_from_trace
from hep_advisor.models.replay import python_buffered, root_getentry, uproot_iterate
from hep_advisor.models.replay.requests import Request
from hep_advisor.rules.reader import TraceFacts
from hep_advisor.rules.reader_changes import (
    branches_rule,
    cache_size_rule,
    reader_rules,
    source_rule,
    threads_rule,
)


def facts(reqs: list[Request], m, *, opens: int = 1, reader: str = "uproot",
          **kw) -> TraceFacts:
    reads = timed(reqs, True, reopen=opens > 1)
    wall = reads[-1].start_s + reads[-1].duration_s + 0.5
    att = attribute(reads, {m.path: m}, {m.path: opens}, wall)
    return TraceFacts(att, (m,), wall, device_from_trace(reads), reader=reader, **kw)


def uproot_stream(m, branches=None, step: int | str = 3000) -> list[Request]:
    return list(python_buffered(uproot_iterate(m, branches, step_size=step), 4096,
                                {m.path: m.file_bytes}))


def test_u002_fires_on_unused_branches_only() -> None:
    m = interleaved(size=40_000)
    reqs = uproot_stream(m)
    f = branches_rule(facts(reqs, m, opens=len(reqs), uses=("b0",)))
    assert f is not None and f.code == "U002"
    assert f.argument == "filter_name" and json.loads(f.value or "") == ["b0"]
    assert "filter_name=['b0']" in f.change
    assert f.speedup_low <= f.predicted_speedup <= f.speedup_high and f.predicted_speedup > 1.05
    # every branch used, nothing named, or only the used ones read: silent
    assert branches_rule(facts(reqs, m, opens=len(reqs),
                               uses=tuple(f"b{i}" for i in range(BRANCHES)))) is None
    assert branches_rule(facts(reqs, m, opens=len(reqs))) is None
    one = uproot_stream(m, ["b0"])
    assert branches_rule(facts(one, m, opens=len(one), uses=("b0",))) is None
    # ROOT: SetBranchStatus, no single argument
    r = branches_rule(facts(root_getentry(m, cache_bytes=0), m, reader="root", uses=("b1",)))
    assert r is not None and "SetBranchStatus" in r.change and r.argument is None


def test_u003_fires_on_one_open_per_request_only() -> None:
    m = interleaved(size=1500)
    reqs = uproot_stream(m, step=PER_STEP)
    reopened = facts(reqs, m, opens=len(reqs))
    # the device model: reopening barely matters to these reads; the measured time in
    # opening and closing the file for every range is what the change saves
    assert source_rule(replace(reopened, open_s=0.0)) is None
    f = source_rule(replace(reopened, open_s=0.3 * reopened.wall_s))
    assert f is not None and f.code == "U003"
    assert f.argument == "handler" and f.value == "uproot.MultithreadedFileSource"
    assert 1.3 < f.predicted_speedup < 1.5 and f.speedup_low == 1.0
    kept = facts(reqs, m, opens=1)  # kept open already
    assert source_rule(replace(kept, open_s=0.3 * kept.wall_s)) is None
    assert source_rule(facts(root_getentry(m, cache_bytes=0), m, reader="root")) is None


PER_STEP = 100


def test_u004_fires_where_decompression_leaves_cores_idle() -> None:
    m = interleaved()
    reqs = uproot_stream(m)
    base = facts(reqs, m, opens=len(reqs))
    wall = base.wall_s
    busy = replace(base, decompression_s=0.5 * wall, cpu_s=0.9 * wall, cores=4)
    f = threads_rule(busy)
    assert f is not None and f.code == "U004" and f.argument == "decompression_executor"
    assert "uproot.ThreadPoolExecutor(max_workers=4)" in f.change
    assert f.speedup_low == 1.0 and f.predicted_speedup > 1.3
    assert any(e.source == "assumed" for e in f.evidence)
    assert threads_rule(replace(busy, cores=1)) is None  # no idle core
    assert threads_rule(replace(busy, cores=2)) is None  # uproot: 1.1 idle cores, too few
    assert threads_rule(replace(busy, cores=2, reader="root", rdataframe=True)) is not None
    assert threads_rule(replace(busy, reader="root")) is None  # GetEntry: measured slower
    assert threads_rule(replace(busy, cpu_s=3.5 * wall)) is None  # cores busy already
    assert threads_rule(replace(busy, decompression_s=0.05 * wall)) is None  # little to share
    root = threads_rule(replace(busy, reader="root", rdataframe=True))
    assert root is not None and root.argument == "EnableImplicitMT" and root.value == "4"
    assert root.predicted_speedup > f.predicted_speedup  # the whole event loop shares


def test_u006_fires_on_a_cache_smaller_than_a_cluster_only() -> None:
    m = by_branch()  # 4 branches x 30 baskets x 40 kB, one cluster of 4.8 MB
    small = facts(root_getentry(m, cache_bytes=256_000), m, reader="root")
    f = cache_size_rule(small)
    assert f is not None and f.code == "U006" and f.argument == "SetCacheSize"
    assert int(f.value or 0) >= BRANCHES * BASKETS * 40_000
    assert "AddBranchToCache" in f.change and f.predicted_speedup > 1.05
    assert cache_size_rule(facts(root_getentry(m, cache_bytes=10_000_000), m,
                                 reader="root")) is None  # holds the cluster already
    assert cache_size_rule(facts(root_getentry(m, cache_bytes=0), m, reader="root")) is None
    assert cache_size_rule(replace(small, reader="uproot")) is None


def test_rules_sorted_and_silent_on_a_good_program() -> None:
    m = by_branch()
    good = facts(root_getentry(m, cache_bytes=10_000_000), m, reader="root")
    assert reader_rules(good) == []
    bad = facts(root_getentry(m, cache_bytes=256_000), m, reader="root")
    found = reader_rules(bad)
    assert [f.code for f in found] == ["U006"]


def test_u001_over_a_link_pays_round_trips() -> None:
    from hep_advisor.models.attribution import link_from_trace
    from hep_advisor.models.replay import Link, uproot_files
    from hep_advisor.probes.trace import TracedRead
    from hep_advisor.rules.reader import step_rule

    m = interleaved()
    url = "root://host:1094//f.root"
    m = replace(m, path=url)
    rtt, bw = 0.02, 12.5
    link = Link(rtt, bw)

    def remote_reads(reqs: list[Request]) -> list[TracedRead]:
        out, t = [], 0.0
        for r in reqs:  # each request one call (keys), or its batch one vector read
            d = link.replay([r]).time_s
            out.append(TracedRead(url, r.offset, r.size, t, d, 1, 0 if r.batch < 0 else
                                  r.batch + 1))
            t += d
        return out

    default = remote_reads(uproot_files([m], step_size="100 MB"))
    lk = link_from_trace(default)
    assert lk is not None and lk.rtt_s == pytest.approx(rtt, rel=0.05)
    wall = default[-1].start_s + default[-1].duration_s + 0.2
    att = attribute(default, {url: m}, {url: 1}, wall)
    f = step_rule(TraceFacts(att, (m,), wall, None, link=lk))
    assert f is not None and f.code == "U001"
    # the key reads' round trips are the pre-pass: BRANCHES x BASKETS of them
    assert f.predicted_speedup > 1.5 and f.speedup_low <= f.predicted_speedup <= f.speedup_high
    assert any(e.name == "round trip seen in the trace" for e in f.evidence)
    assert step_rule(TraceFacts(att, (m,), wall, None)) is None  # neither device nor link
    stepped = remote_reads(uproot_files([m], step_size=3000))
    att2 = attribute(stepped, {url: m}, {url: 1}, wall)
    assert step_rule(TraceFacts(att2, (m,), wall, None, link=lk)) is None
