"""How long the baskets a program read take to decompress: timed here on a sample of them.

The program's CPU time holds its decompression and its own work together; this splits them.
Up to ``sample`` of the baskets it read (spread over them) are read again from the file (now
cached) and decompressed with uproot's own decompressors, timed; the seconds per compressed
byte, times the compressed bytes it read, is its decompression time (derived from that
measurement: ROOT's decompressors run the same libraries, at a similar speed).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..readtests.decoders import decoder
from ..readtests.rootblocks import parse_basket, split_blocks


def _fetch(path: str, spans: Sequence[tuple[int, int]]) -> list[bytes]:
    """The bytes of ``spans`` (seek, nbytes): a local file read directly, a URL through
    uproot's default source (one request of several ranges)."""
    if "://" not in path:
        out = []
        with open(path, "rb") as fh:
            for seek, nbytes in spans:
                fh.seek(seek)
                out.append(fh.read(nbytes))
        return out
    import queue

    import uproot  # a heavy import, only for a remote file

    try:
        with uproot.open(path) as f:
            chunks = f.file.source.chunks([(s, s + n) for s, n in spans], queue.Queue())
            return [bytes(c.raw_data) for c in chunks]
    except Exception as e:  # the server gone, a timeout: not timed, said by the caller
        raise OSError(str(e)) from None


def decompression_s_per_byte(path: str, baskets: Sequence[tuple[int, int]],
                             sample: int = 64, repeat: int = 3, keyed: bool = True
                             ) -> float | None:
    """Seconds per on-disk byte to decompress the baskets ``(seek, nbytes)`` of ``path``
    (best of ``repeat`` passes over a sample); None when none could be read.  ``keyed``:
    False for an RNTuple's pages, which are compressed blocks without a key (a page stored
    uncompressed costs nothing)."""
    if not baskets:
        return None
    step = max(len(baskets) // sample, 1)
    chosen = list(baskets)[::step][:sample]
    work = []
    stored = 0
    try:
        raws = _fetch(path, chosen)
    except OSError:
        return None
    for raw in raws:
        try:
            payload = parse_basket(raw)[2] if keyed else raw
            split = split_blocks(payload)
        except ValueError:
            continue
        stored += len(raw)
        if split is not None:
            work.append((decoder(split[0])[0], split[1]))
    if stored == 0:
        return None
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for decode, blocks in work:
            for b in blocks:
                decode(b)
        best = min(best, time.perf_counter() - t0)
    return best / stored
