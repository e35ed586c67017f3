"""ROOT over ``root://``: is the first file read in a process dearer once, or each new file?

    flock /tmp/hep-bench.lock python -m benchmarks.lab.check_root_first_read

On ``bench_remote_predict.py``'s dataset ``c`` behind an emulated 1 ms, 1 Gbit/s link
(``testbench.remote``), a fresh ROOT process with the bench's warm-up (a failed open that logs
in, ROOT's set-up on a local copy: ``bench_remote_predict.ROOT_READER``) opens and reads
(``GetEntry`` loop, default TTreeCache) a sequence of files, each timed: ``A A B A C`` (a file
again, then new ones) and ``B C D E F`` (new files only), with every branch and with 10 of the
100; three processes each.  Prints the milliseconds per file.  The remote model charges the
client's first open and read beyond the later ones once per process (``ClientTerms.process_s``);
this tells whether a new file pays it again.  Nothing is left behind.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


def main() -> int:
    from benchmarks.validation.bench_remote_predict import root_file_times, write_datasets
    from testbench.remote import cleanup_stale, remote_bench

    cleanup_stale()
    work = Path(tempfile.mkdtemp(prefix="hep-check-first-", dir="/var/tmp"))
    work.chmod(0o755)
    try:
        data = write_datasets(work, ["c"])["c"]
        with remote_bench(1.0, 1000, data_dir=work) as bench:
            u = [bench.root_url(f"c/{f.name}") for f in data]
            seqs = {"A A B A C": [u[0], u[0], u[1], u[0], u[2]],
                    "B C D E F": [u[1], u[2], u[3], u[4], u[5]]}
            for sub in (None, [f"b{i}" for i in range(10)]):
                for name, seq in seqs.items():
                    for _ in range(3):
                        times = root_file_times(seq, sub, True,
                                                bench.root_url("no-such-file.root"),
                                                str(data[0]))
                        print("10%" if sub else "all", name,
                              ", ".join(f"{x * 1e3:.1f}" for x in times), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
