"""``python -m testbench.remote``: check the emulated link's accuracy, or serve a directory.

    python -m testbench.remote --check                   # can it run here?
    python -m testbench.remote --measure 1:1000 20:100 80:20   # RTT_MS:MBIT links, figures
    python -m testbench.remote --serve DIR --rtt-ms 20 --mbit 100 [--xcache]  # until Ctrl-C
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import sys
import time
from collections.abc import Sequence

from .bench import availability, cleanup_stale, remote_bench


def _link(text: str) -> tuple[float, float]:
    rtt, _, rate = text.partition(":")
    return float(rtt), float(rate)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbench.remote", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="say whether it can run here")
    action.add_argument("--measure", nargs="+", type=_link, metavar="RTT_MS:MBIT",
                        help="set each link in turn; print the measured round trip and rates")
    action.add_argument("--serve", metavar="DIR", help="serve DIR (readable by nobody)")
    parser.add_argument("--rtt-ms", type=float, default=20.0)
    parser.add_argument("--mbit", type=float, default=100.0, help="0: not shaped")
    parser.add_argument("--xcache", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="--measure: transfers per link")
    args = parser.parse_args(argv)

    if args.check:
        ok, reason = availability()
        print(reason if ok else f"unavailable: {reason}")
        return 0 if ok else 1

    def on_term(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    cleanup_stale()
    if args.serve:
        with remote_bench(args.rtt_ms, args.mbit or None, xcache=args.xcache,
                          data_dir=args.serve) as bench:
            print(bench, flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 130
    with remote_bench(args.measure[0][0], args.measure[0][1], http=False) as bench:
        for rtt_ms, mbit in args.measure:
            bench.set_rate(mbit)
            bench.set_rtt(rtt_ms)
            rtts = bench.rtt_samples(30)
            nbytes = int(mbit * 1e6 / 8)  # 1 s of traffic
            down = [bench.measure_bandwidth(nbytes) for _ in range(args.repeat)]
            up = [bench.measure_bandwidth(nbytes, upload=True) for _ in range(args.repeat)]
            out = {
                "set": {"rtt_ms": rtt_ms, "mbit": mbit},
                "rtt_ms": {"median": round(statistics.median(rtts), 3),
                           "min": round(min(rtts), 3), "max": round(max(rtts), 3)},
                "down_mbit": [round(v, 1) for v in down],
                "up_mbit": [round(v, 1) for v in up],
                "base_rtt_ms": round(bench.base_rtt_ms, 3),
                "delay_ms": round(bench.delay_s * 1e3, 3),
            }
            print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
