"""What nccl-tests reports, and published all-reduce figures beside NCCL's model.

nccl-tests prints two bandwidths for a collective of S bytes that took t seconds on n GPUs (NVIDIA/nccl-tests
doc/PERFORMANCE.md): the **algorithm bandwidth** S / t, and the **bus bandwidth**, the algorithm bandwidth times
the share of the message each GPU's links must carry (2(n-1)/n for an all-reduce, (n-1)/n for a reduce-scatter,
an all-gather or an all-to-all, 1 for a broadcast or a reduce), so that it compares with one GPU's link whatever n.

    >>> import roofline_lib as rl
    >>> algbw, busbw = rl.comms.bus_bandwidth(1e9, 4e-3, 8)    # 1 GB all-reduced over 8 GPUs in 4 ms
    >>> round(algbw / 1e9), round(busbw / 1e9)
    (250, 438)
"""

from __future__ import annotations

import dataclasses

from ..core.catalog import DATA_DIR, Entry, read_records
from ..core.checks import positive

BUS_FACTORS = {"all_reduce": lambda n: 2 * (n - 1) / n, "reduce_scatter": lambda n: (n - 1) / n,
               "all_gather": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n,
               "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0}
MEASURED_FILE = DATA_DIR / "collectives-measured.toml"


def bus_bandwidth(message_bytes, seconds, n_gpus, collective="all_reduce"):
    """(algorithm bandwidth, bus bandwidth) in byte/s, as nccl-tests computes them.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    if collective not in BUS_FACTORS:
        raise ValueError(f"collective must be one of {', '.join(BUS_FACTORS)}; got {collective!r}")
    message_bytes, seconds = positive("message_bytes", message_bytes), positive("seconds", seconds)
    n = positive("n_gpus", n_gpus, integer=True)
    algbw = message_bytes / seconds
    return algbw, algbw * BUS_FACTORS[collective](n)


@dataclasses.dataclass(frozen=True)
class CollectiveFigure:
    """A published all-reduce figure: its system, message size, bandwidths (byte/s, 0 where not given) or time
    (s, 0 where not given), and whether it was measured or is what a maintainer says a run reaches. A record may
    name its own source; otherwise the file's holds."""

    id: str
    topology: str
    n_gpus: int
    collective: str
    algorithm: str
    message_bytes: float
    busbw: float
    algbw: float
    kind: str
    quote: str
    source: str
    notes: str = ""
    seconds: float = 0.0


def published_collectives(path=MEASURED_FILE):
    """The figures of ``data/collectives-measured.toml``; ValueError naming the record and field that is wrong.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb)."""
    path, source, records = read_records(path)
    out = []
    for r in records:
        entry = Entry(r, f"{path.name} (record {r.get('id', '?')!r})")
        entry.require(("id", "topology", "n_gpus", "collective", "algorithm", "message_bytes", "kind", "quote"))
        if r["collective"] not in BUS_FACTORS:
            entry.fail("collective", f"must be one of {', '.join(BUS_FACTORS)}; got {r['collective']!r}")
        if r["kind"] not in ("measured", "expected"):
            entry.fail("kind", f"must be 'measured' or 'expected'; got {r['kind']!r}")
        if not {"busbw_GBps", "algbw_GBps", "time_us"} & set(r):
            entry.fail("busbw_GBps", "or algbw_GBps or time_us is needed: the figure itself")
        bw = {k: entry.figure(f"{k}_GBps", r[f"{k}_GBps"]) * 1e9 if f"{k}_GBps" in r else 0.0
              for k in ("busbw", "algbw")}
        out.append(CollectiveFigure(
            id=str(r["id"]), topology=str(r["topology"]), n_gpus=entry.figure("n_gpus", r["n_gpus"], integer=True),
            collective=r["collective"], algorithm=str(r["algorithm"]),
            message_bytes=float(entry.figure("message_bytes", r["message_bytes"])), busbw=bw["busbw"],
            algbw=bw["algbw"], kind=r["kind"], quote=str(r["quote"]).strip(),
            source=str(r.get("source", source)).strip(), notes=str(r.get("notes", "")),
            seconds=entry.figure("time_us", r["time_us"]) * 1e-6 if "time_us" in r else 0.0))
    return out


__all__ = ["BUS_FACTORS", "bus_bandwidth", "CollectiveFigure", "MEASURED_FILE", "published_collectives"]
