"""What the demo datasets hold, and their values.

Values compress like real event data, not like noise: momenta and angles are quantised floats
(detector resolution), multiplicities and flags are small integers, and collections are jagged
with Poisson multiplicities.  Every chunk is reproducible from its seed, so the merged file holds
exactly the events of the small files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOAT = "float32"
INT = "int32"


@dataclass(frozen=True)
class Collection:
    """A jagged collection: ``counter`` holds the multiplicity, each field one value per item.

    Branches are named ``{name}_{field}`` and the counter ``n{name}``, as uproot names them."""

    name: str
    mean_multiplicity: float
    fields: tuple[tuple[str, str], ...]

    @property
    def counter(self) -> str:
        return f"n{self.name}"


@dataclass(frozen=True)
class TreeSpec:
    name: str
    scalars: tuple[tuple[str, str], ...]
    collections: tuple[Collection, ...] = ()

    @property
    def branch_names(self) -> tuple[str, ...]:
        names = [n for n, _ in self.scalars]
        for c in self.collections:
            names.append(c.counter)
            names.extend(f"{c.name}_{f}" for f, _ in c.fields)
        return tuple(names)

    @property
    def n_branches(self) -> int:
        return len(self.branch_names)


@dataclass
class Chunk:
    """``entries`` events: scalar columns, and per collection its counts and field contents."""

    entries: int
    scalars: dict[str, np.ndarray]
    collections: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]


#: Shapes of the named physics columns (index into the cases of ``_value``); other columns get
#: a shape from a hash of their name.
NAMED_SHAPES = {
    "pt": 0, "E": 1, "px": 3, "py": 3, "pz": 4, "eta": 3, "phi": 2, "m": 9, "vx": 4, "vy": 4,
    "vz": 3, "weight": 5, "x1": 2, "x2": 2,
    "charge": 4, "pdgId": 8, "status": 6, "mother": 9, "nDaughters": 1, "process": 7,
}


def _value(rng: np.random.Generator, name: str, dtype: str, n: int) -> np.ndarray:
    """A plausible, compressible column of ``n`` values (its shape depends on its name)."""
    h = NAMED_SHAPES.get(name, sum(name.encode()) % 10)
    if dtype == INT:
        if h < 4:  # hit counts, multiplicities
            return rng.poisson(1 + h, n).astype(np.int32)
        if h < 6:  # charge-like
            return rng.choice(np.array([-1, 1], dtype=np.int32), n)
        if h < 8:  # status flags: mostly one value
            return np.where(rng.random(n) < 0.9, 1, rng.integers(0, 64, n)).astype(np.int32)
        return rng.integers(0, 1 << (4 + h), n, dtype=np.int32)  # detector ids
    if h < 2:  # transverse momentum-like: exponential, 10 MeV resolution
        return np.round(rng.exponential(5.0 + h, n), 2).astype(np.float32)
    if h < 3:  # angle-like: uniform, 1 mrad resolution
        return np.round(rng.uniform(-np.pi, np.pi, n), 3).astype(np.float32)
    if h < 5:  # residual-like: narrow normal, coarse
        return np.round(rng.normal(0.0, 0.5 + h, n), 1).astype(np.float32)
    if h < 8:  # calibration/quality words: mostly a default value
        v = np.round(rng.normal(1.0, 0.1, n), 2).astype(np.float32)
        return np.where(rng.random(n) < 0.8, np.float32(0.0), v)
    return np.round(rng.normal(100.0, 15.0, n), 0).astype(np.float32)  # ADC-like


def make_chunk(spec: TreeSpec, entries: int, seed: int) -> Chunk:
    rng = np.random.default_rng(seed)
    scalars = {name: _value(rng, name, dt, entries) for name, dt in spec.scalars}
    collections = {}
    for c in spec.collections:
        counts = rng.poisson(c.mean_multiplicity, entries).astype(np.int32)
        total = int(counts.sum())
        fields = {f: _value(rng, f"{c.name}_{f}", dt, total) for f, dt in c.fields}
        collections[c.name] = (counts, fields)
    return Chunk(entries=entries, scalars=scalars, collections=collections)


def _fields(prefix: str, n_float: int, n_int: int) -> tuple[tuple[str, str], ...]:
    return tuple((f"{prefix}{i}", FLOAT) for i in range(n_float)) + tuple(
        (f"{prefix}i{i}", INT) for i in range(n_int)
    )


#: An ESD-like tree: 205 branches (16 event-level values, 3 collections of 62 fields plus their
#: counters).  The GSI study's ESD files had 406; uproot's tree writing time grows with the square
#: of the branch count, so the demo keeps to about half that.
ESD = TreeSpec(
    name="esdTree",
    scalars=_fields("ev", 12, 4),
    collections=(
        Collection("Trk", 30.0, _fields("t", 50, 12)),
        Collection("Calo", 50.0, _fields("c", 50, 12)),
        Collection("V0", 5.0, _fields("v", 50, 12)),
    ),
)

#: A flat, Pythia-like tree of 20 per-event values.
FLAT = TreeSpec(
    name="pythia",
    scalars=(
        ("px", FLOAT), ("py", FLOAT), ("pz", FLOAT), ("E", FLOAT), ("pt", FLOAT), ("eta", FLOAT),
        ("phi", FLOAT), ("m", FLOAT), ("vx", FLOAT), ("vy", FLOAT), ("vz", FLOAT),
        ("weight", FLOAT), ("x1", FLOAT), ("x2", FLOAT),
        ("pdgId", INT), ("charge", INT), ("status", INT), ("mother", INT), ("nDaughters", INT),
        ("process", INT),
    ),
)
