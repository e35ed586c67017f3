"""The decompressors uproot itself uses, one ROOT compression block at a time
(``uproot.compression._decompress_ZLIB`` and friends, so a switch of
``uproot.compression._DecompressZLIB.library`` to ``isal`` or ``deflate`` is measured too).
For LZ4 the XXH64 checksum of each block is verified, as uproot (and ROOT) do when reading."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .rootblocks import Block

Decoder = Callable[[Block], int]


def decoder(algorithm: str) -> tuple[Decoder, str]:
    """A function decompressing one block (returning the bytes produced) through uproot's own
    decompressor for ``algorithm``, and the library behind it."""
    import cramjam
    import uproot.compression as uc

    if algorithm == "ZLIB":
        z = uc._decompress_ZLIB
        lib = str(getattr(type(z), "library", "zlib"))

        def dz(b: Block) -> int:
            return len(z.decompress(b.data, b.uncompressed_bytes))

        return dz, "zlib (stdlib)" if lib == "zlib" else lib
    if algorithm == "LZMA":
        x = uc._decompress_LZMA
        lib = "cramjam.xz" if getattr(cramjam, "xz", None) is not None else "lzma (stdlib)"

        def dx(b: Block) -> int:
            return len(x.decompress(b.data, b.uncompressed_bytes))

        return dx, lib
    if algorithm == "LZ4":
        import xxhash

        l4 = uc._decompress_LZ4

        def dl(b: Block) -> int:
            if xxhash.xxh64(b.data).intdigest() != b.checksum:
                raise ValueError("LZ4 block checksum mismatch")
            return len(l4.decompress(b.data, b.uncompressed_bytes))

        return dl, "cramjam.lz4 + xxhash"
    if algorithm == "ZSTD":
        zs = uc._decompress_ZSTD

        def dzs(b: Block) -> int:
            return len(zs.decompress(b.data, b.uncompressed_bytes))

        return dzs, "cramjam.zstd"
    raise ValueError(f"no decompressor for {algorithm}")


def inflater(algorithm: str) -> Callable[[Block], bytes]:
    """A function returning the bytes one block decompresses to (uproot's decompressor)."""
    import uproot.compression as uc

    codecs = {"ZLIB": uc._decompress_ZLIB, "LZMA": uc._decompress_LZMA,
              "LZ4": uc._decompress_LZ4, "ZSTD": uc._decompress_ZSTD}
    if algorithm not in codecs:
        raise ValueError(f"no decompressor for {algorithm}")
    codec = codecs[algorithm]

    def inflate(b: Block) -> bytes:
        return bytes(codec.decompress(b.data, b.uncompressed_bytes))

    return inflate


def decompress_all(blocks: Iterable[Block], decode: Decoder) -> int:
    """Decompress every block; return the bytes produced."""
    total = 0
    for b in blocks:
        total += decode(b)
    return total
