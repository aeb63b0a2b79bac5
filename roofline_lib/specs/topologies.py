"""Topologies: how the GPUs of one node are wired (NVSwitch, PCIe switches, a rack-scale NVLink domain) and what
links nodes together, as data (``data/topologies.toml``), every figure with its source.

    >>> import roofline_lib as rl
    >>> t = rl.specs.get_topology("DGX H100")
    >>> t.bus_bandwidth, t.gpus_per_node, t.nic_bandwidth  # byte/s per GPU and direction; GPUs; byte/s or None
    (370800000000.0, 8, 50000000000.0)

``multichip.collectives.nccl_allreduce`` times an all-reduce on one by NCCL's own cost model.
"""

from __future__ import annotations

import dataclasses

from ..core.catalog import DATA_DIR, CachedFile, Entry, read_toml
from .hardware import get_accelerator

TOPOLOGY_FILE = DATA_DIR / "topologies.toml"
LINK_KINDS = ("nvlink", "pcie")


@dataclasses.dataclass(frozen=True)
class Topology:
    """One multi-GPU system. Bandwidths in byte/s, per GPU and per direction."""

    name: str
    chip: str
    gpus_per_node: int
    scale_up: str
    link: str  # "nvlink" or "pcie": which of NCCL's latency rows the node's links use
    bus_bandwidth: float  # NCCL's bus bandwidth inside a node (its link figure, or a measured large all-reduce's)
    nvls_bus_bandwidth: float | None = None  # NVLS's bus bandwidth (the switch reduces); None: no NVLS
    ll_max_bandwidth: float | None = None  # NCCL's cap on its LL protocol's bus bandwidth, one node
    nic_bandwidth: float | None = None  # the scale-out NIC per GPU; None: not given (one node only)
    aliases: tuple = ()
    sources: dict = dataclasses.field(default_factory=dict)


def _topology(raw):
    entry = Entry(raw, f"{TOPOLOGY_FILE.name} (topology {raw.get('name', '?')!r})")
    entry.require(("name", "chip", "gpus_per_node", "scale_up", "link", "bus_bandwidth_GBps", "sources"))
    if raw["link"] not in LINK_KINDS:
        entry.fail("link", f"must be one of {', '.join(LINK_KINDS)}; got {raw['link']!r}")
    try:
        chip = get_accelerator(raw["chip"]).name
    except ValueError as exc:
        entry.fail("chip", f"is not known: {exc}")
    sources = raw["sources"]
    for field in ("bus_bandwidth_GBps", "nvls_bus_GBps", "nccl_ll_max_GBps", "nic_GBps"):
        if field in raw and field not in sources:
            entry.fail(field, "has no entry in [topology.sources]: every figure carries its source")

    def gbps(field):
        return entry.figure(field, raw[field]) * 1e9 if field in raw else None

    gpus = entry.figure("gpus_per_node", raw["gpus_per_node"], integer=True)
    return Topology(name=raw["name"], chip=chip, gpus_per_node=gpus, scale_up=raw["scale_up"], link=raw["link"],
                    bus_bandwidth=gbps("bus_bandwidth_GBps"), nvls_bus_bandwidth=gbps("nvls_bus_GBps"),
                    ll_max_bandwidth=gbps("nccl_ll_max_GBps"), nic_bandwidth=gbps("nic_GBps"),
                    aliases=tuple(raw.get("aliases", ())), sources=dict(sources))


def _parse(path):
    """{lower-case name or alias: Topology} of every topology in the file, each checked."""
    found = {}
    for raw in read_toml(path).get("topology", []):
        t = _topology(raw)
        for label in (t.name, *t.aliases):
            key = label.strip().lower()
            if key in found and found[key].name != t.name:
                raise ValueError(f"{path.name}: name or alias {label!r} is already used by {found[key].name!r}")
            found[key] = t
    return found


# read and checked once, again when the file changes (as the chips' and models' catalogs are)
_FILE = CachedFile(TOPOLOGY_FILE, _parse)


def list_topologies():
    """Names of the topologies in ``data/topologies.toml``."""
    return list(dict.fromkeys(t.name for t in _FILE.value().values()))


def get_topology(name):
    """A ``Topology`` by name or alias (case-insensitive); a Topology passes through.

    Taught in chapter 09 (notebooks/09_communication_bound.ipynb); also used in chapters 13, 14."""
    if isinstance(name, Topology):
        return name
    found = _FILE.value().get(str(name).strip().lower())
    if found is None:
        raise ValueError(f"unknown topology {name!r}; known: {', '.join(list_topologies())}")
    return found


__all__ = ["get_topology", "LINK_KINDS", "list_topologies", "Topology", "TOPOLOGY_FILE"]
