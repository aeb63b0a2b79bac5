"""roofline_lib.multichip.collectives against a brute-force simulation of a ring all-reduce and hand counts."""

import numpy as np
import pytest

from roofline_lib.multichip import collectives as comms


def simulate_ring_allreduce(data):
    """Run a ring all-reduce step by step on n chips' arrays; return (results, elements each chip sent, steps).

    Each chip's array is cut into n shards. Reduce-scatter: at step s chip i sends shard (i - s) mod n
    to chip i + 1, which adds it to its own. After n - 1 steps chip i holds the full sum of shard
    (i + 1) mod n. All-gather: n - 1 more steps pass the finished shards around the ring.
    """
    n = len(data)
    shards = [np.array_split(d.astype(float).copy(), n) for d in data]
    sent = [0] * n
    steps = 0
    for s in range(n - 1):  # reduce-scatter
        outgoing = [(i, (i - s) % n, shards[i][(i - s) % n].copy()) for i in range(n)]
        for i, k, payload in outgoing:
            shards[(i + 1) % n][k] += payload
            sent[i] += payload.size
        steps += 1
    for s in range(n - 1):  # all-gather
        outgoing = [(i, (i + 1 - s) % n, shards[i][(i + 1 - s) % n].copy()) for i in range(n)]
        for i, k, payload in outgoing:
            shards[(i + 1) % n][k] = payload
            sent[i] += payload.size
        steps += 1
    return [np.concatenate(s) for s in shards], sent, steps


@pytest.mark.parametrize("n_chips", [2, 3, 4, 8])
def test_ring_allreduce_matches_simulation(n_chips):
    elements = 24 * n_chips  # divisible, so every shard has the same size
    rng = np.random.default_rng(n_chips)
    data = [rng.random(elements) for _ in range(n_chips)]
    results, sent, steps = simulate_ring_allreduce(data)
    total = np.sum(data, axis=0)
    for r in results:  # the simulation really is an all-reduce
        np.testing.assert_allclose(r, total)
    bytes_per_element = 2
    expected = comms.ring_allreduce_bytes(elements * bytes_per_element, n_chips)
    assert len(sent) == n_chips and all(s * bytes_per_element == pytest.approx(expected) for s in sent)
    assert steps == comms.ring_allreduce_steps(n_chips)
    # 2(N-1)/N of the message, by hand for N = 4: 1.5 x
    if n_chips == 4:
        assert expected == 1.5 * elements * bytes_per_element


def test_one_chip_sends_nothing():
    assert comms.ring_allreduce_bytes(1e6, 1) == 0
    assert comms.ring_allreduce_time(1e6, 1, 1e9, latency=1e-5) == 0


def test_ring_allreduce_time_latency_plus_bandwidth():
    # 8 chips, 64 MB message, 450 GB/s per direction, 5 us per step, by hand:
    # 14 steps * 5 us + 2 * 7/8 * 64e6 / 450e9
    t = comms.ring_allreduce_time(64e6, 8, 450e9, latency=5e-6)
    assert t == pytest.approx(14 * 5e-6 + 1.75 * 64e6 / 450e9)
    assert comms.transfer_time(1e9, 1e9, latency=1.0) == 2.0


def test_vectorised_over_chip_counts():
    t = comms.ring_allreduce_bytes(100.0, np.array([2, 4, 5]))
    np.testing.assert_allclose(t, [100.0, 150.0, 160.0])


def test_tensor_parallel_layouts_by_hand():
    M, N, K, n = 16, 1024, 512, 4
    assert comms.tensor_parallel_matmul_bytes(M, N, K, n, 2, "row") == 2 * 3 / 4 * M * N * 2
    assert comms.tensor_parallel_matmul_bytes(M, N, K, n, 2, "column") == 3 / 4 * M * N * 2
    assert comms.tensor_parallel_matmul_bytes(M, N, K, n, 2, "weight-gathered") == 3 / 4 * K * N * 2
    with pytest.raises(ValueError, match="unknown layout"):
        comms.tensor_parallel_matmul_bytes(M, N, K, n, 2, "diagonal")


def test_weight_gathered_crossover_is_where_bytes_are_equal():
    # a Llama-2-70B layer: hidden 8192, 64 query heads and 8 kv heads of 128, MLP 28672 (config.json)
    hidden, ffn, kv = 8192, 28672, 8 * 128
    layer = hidden * hidden * 2 + hidden * kv * 2 + 3 * hidden * ffn
    assert layer == 855_638_016
    t = comms.weight_gathered_crossover_tokens(layer, hidden)
    assert t == pytest.approx(26_112)
    for n in (2, 8):
        assert comms.megatron_layer_bytes(t, hidden, n) == pytest.approx(comms.weight_gathered_layer_bytes(layer, n))
        assert comms.megatron_layer_bytes(2 * t, hidden, n) > comms.weight_gathered_layer_bytes(layer, n)


def test_nccl_latency_model_by_hand():
    import roofline_lib as rl

    # NVIDIA/nccl src/graph/tuning.cc: 16 kB on 8 GPUs is cheapest as a ring with LL: baseLat 6.6 us, hwLat
    # 0.6 us per step over NVLink, at LL's half of NCCL's 20.6 GB/s per 25 GB/s H100 link (0.824 x 450 GB/s),
    # times the ring's n / 2(n - 1)
    t = comms.allreduce_time_on("H100 SXM", "nvlink", 16384, 8)
    assert t == pytest.approx(6.6e-6 + 14 * 0.6e-6 + 16384 / (0.5 * 0.824 * 450e9 * 8 / 14), rel=1e-12)
    assert comms.nccl_link_share("A100", "nvlink") == pytest.approx(0.8)
    # 1 MB on 4 A100s over PCIe Gen4 (32 GB/s per direction, NCCL's 24): no LL128 over PCIe; the ring's Simple wins,
    # 8.4 us + 6 x 5.7 us + 1 MB / (24 GB/s x 4/6) = 105.1 us (ring LL 137.6 us, tree Simple 213 us)
    t = comms.allreduce_time_on("A100", "pcie", 1e6, 4)
    assert t == pytest.approx(8.4e-6 + 6 * 5.7e-6 + 1e6 / (0.75 * 32e9 * 4 / 6), rel=1e-12)
    assert comms.allreduce_time_on("A100", "nvlink", 1e6, 1) == 0
    assert comms.send_time_on("H100", "pcie", 64e9) == pytest.approx(6.6e-6 + 1e-6 + 1.0, rel=1e-12)
    assert comms.alltoall_bytes(800, 8) == 700
    assert comms.alltoall_time_on("H100", "nvlink", 800, 8) == pytest.approx(6.6e-6 + 7 * 0.6e-6 + 700 / 450e9)
    assert comms.link_bandwidth(rl.get_accelerator("H100 SXM"), "interconnect") == 450e9


def test_unknown_link_or_missing_figure_is_refused():
    with pytest.raises(ValueError, match="unknown link 'infiniband'.*'nvlink'.*'pcie'"):
        comms.link_bandwidth("H100", "infiniband")
    with pytest.raises(ValueError, match="A10 has no nvlink figure.*pcie"):
        comms.link_bandwidth("A10", "nvlink")


def test_bad_input():
    with pytest.raises(ValueError, match=r"total_bytes must be finite and > 0, got -1"):
        comms.ring_allreduce_bytes(-1, 4)
    with pytest.raises(ValueError, match=r"n_chips must be a whole number, got 2\.5"):
        comms.ring_allreduce_bytes(10, 2.5)
    with pytest.raises(ValueError, match=r"latency \(s\) must be finite and >= 0, got -1"):
        comms.transfer_time(10, 1e9, latency=-1)


def test_link_figures_against_the_standards():
    import roofline_lib as rl

    # PCIe x16, per direction: Gen4 16 GT/s x 16 lanes / 8 bits = 32 GB/s, Gen5 twice that (raw rate, as the
    # datasheets quote it); the library stores both directions added
    assert rl.get_accelerator("A100 80GB SXM4").host_link_bandwidth == 2 * 16e9 * 16 / 8
    assert rl.get_accelerator("H100 SXM").host_link_bandwidth == 2 * 32e9 * 16 / 8
    # NVLink: 25 GB/s per direction per link; A100 has 12 links (NVLink3), H100 18 (NVLink4)
    assert rl.get_accelerator("A100 80GB SXM4").interconnect_bandwidth_per_direction == 12 * 25e9
    assert rl.get_accelerator("H100 SXM").interconnect_bandwidth_per_direction == 18 * 25e9
    assert rl.get_accelerator("H100 SXM").interconnect_bandwidth == 2 * 18 * 25e9


def test_nccl_on_topologies_by_hand():
    # DGX H100, 4 MiB on 8 GPUs: NVLS wins, 25 us + bytes / (476 GB/s of NVLS bus bandwidth x 8/14)
    m = 4 * 2**20
    c = comms.nccl_allreduce(m, 8, "DGX H100")
    assert (c.algorithm, c.protocol) == ("nvls", "Simple")
    assert c.seconds == pytest.approx(25e-6 + m / (476e9 * 8 / 14), rel=1e-12)
    # without NVLS (an A100 box) the same message takes LL128's ring: 14 + 14 x 1.9 us + m / (0.92 x 240 GB/s x 8/14)
    a = comms.nccl_allreduce(m, 8, "HGX A100 8-GPU")
    assert (a.algorithm, a.protocol) == ("ring", "LL128")
    assert a.seconds == pytest.approx((14 + 14 * 1.9) * 1e-6 + m / (0.92 * 240e9 * 8 / 14), rel=1e-12)
    # two DGX H100s: 16 GPUs, the NIC (50 GB/s, 48 through its PCIe link) is the bus; a ring's 2 x 1 steps cross
    # nodes; Simple's latency x 1.4 (the ring's plateau); a tree's LL at .92/3.8 of the bus, capped at 39 GB/s,
    # halved, and x 0.7 (treeCorrectionFactor for LL at log2(4 MiB / 64) = 16)
    two = comms.nccl_allreduce(m, 16, "DGX H100").options
    ring_simple = 1.4 * (8.4 + (30 - 2) * 3.4 + 2 * 14.0) * 1e-6 + m / (0.96 * 50e9 * 16 / 30)
    assert two["ring", "Simple"] == pytest.approx(ring_simple, rel=1e-12)
    tree_ll = (6.8 + 2 * (7 * 0.6 + 1 * 5.0)) * 1e-6 + m / (min(48e9 * 0.92 / 3.8, 39e9) * 0.5 * 0.7)
    assert two["tree", "LL"] == pytest.approx(tree_ll, rel=1e-12)
    assert ("nvls", "Simple") not in two
    assert comms.nccl_allreduce(m, 1, "DGX H100").seconds == 0


def test_nccl_refuses_what_a_topology_cannot_hold():
    with pytest.raises(ValueError, match="no scale-out NIC; at most 8"):
        comms.nccl_allreduce(1e6, 16, "8 x PCIe Gen5 GPUs, two sockets")
    with pytest.raises(ValueError, match="whole nodes of 8"):
        comms.nccl_allreduce(1e6, 12, "DGX H100")
    with pytest.raises(ValueError, match="unknown topology"):
        comms.nccl_allreduce(1e6, 8, "DGX Z100")


def test_custom_allreduce_one_and_two_shot_by_hand():
    # vLLM's switch: one-shot below 256 KB on 8 GPUs (512 KB up to 4); one-shot reads every peer's whole buffer
    assert comms.custom_allreduce_time(16384, 8, 450e9) == pytest.approx(5.8e-6 + 7 * 16384 / 450e9)
    assert comms.custom_allreduce_time(400 * 1024, 4, 450e9) == pytest.approx(5.8e-6 + 3 * 400 * 1024 / 450e9)
    two = 2 * 5.8e-6 + 2 * 7 / 8 * 400 * 1024 / 450e9
    assert comms.custom_allreduce_time(400 * 1024, 8, 450e9) == pytest.approx(two)
    with pytest.raises(ValueError, match="runs on 2, 4, 6, 8 GPUs, not 3"):
        comms.custom_allreduce_time(1e3, 3, 450e9)


def test_every_topology_figure_has_a_source():
    import roofline_lib as rl
    from roofline_lib.specs import topologies

    for name in rl.list_topologies():
        t = rl.get_topology(name)
        assert t.bus_bandwidth > 0 and "bus_bandwidth_GBps" in t.sources
        assert t.nic_bandwidth is None or "nic_GBps" in t.sources
    raw = {"name": "x", "chip": "H100", "gpus_per_node": 8, "scale_up": "s", "link": "nvlink",
           "bus_bandwidth_GBps": 100, "nic_GBps": 50, "sources": {"bus_bandwidth_GBps": "a datasheet"}}
    with pytest.raises(ValueError, match="'nic_GBps' has no entry in \\[topology.sources\\]"):
        topologies._topology(raw)
    with pytest.raises(ValueError, match="'link' must be one of nvlink, pcie"):
        topologies._topology(dict(raw, link="infiniband"))


def test_bus_bandwidth_as_nccl_tests_computes_it():
    # doc/PERFORMANCE.md: algbw = S / t; an all-reduce's busbw = algbw x 2(n - 1)/n, an all-gather's x (n - 1)/n
    algbw, busbw = comms.bus_bandwidth(8e9, 0.1, 8)
    assert algbw == pytest.approx(80e9) and busbw == pytest.approx(80e9 * 14 / 8)
    assert comms.bus_bandwidth(8e9, 0.1, 8, "all_gather")[1] == pytest.approx(70e9)
    assert comms.bus_bandwidth(8e9, 0.1, 8, "broadcast")[1] == pytest.approx(80e9)
    with pytest.raises(ValueError, match="collective must be one of"):
        comms.bus_bandwidth(1e6, 1e-3, 8, "allreduce")
    with pytest.raises(ValueError):
        comms.bus_bandwidth(1e6, 0, 8)


def test_published_collective_figures_beside_the_model():
    figures = {f.id: f for f in comms.published_collectives()}
    assert len(figures) >= 4 and all(f.source and f.quote for f in figures.values())
    # the maintainers' figures: 370 GB/s of bus bandwidth with rings, ~480 (algbw ~275) with NVLS; 480 x 8/14 = 274
    assert figures["h100x8-allreduce-ring-busbw"].busbw == 370e9
    peak = figures["h100x8-allreduce-nvls-peak"]
    assert peak.busbw * 8 / 14 == pytest.approx(peak.algbw, rel=0.01)
    # NCCL's model on a DGX H100 at the measured 4 GiB lands within 3 % of the measured 476 GB/s bus bandwidth
    run = figures["h100x8-allreduce-single-node-measured"]
    t = comms.nccl_allreduce(run.message_bytes, 8, "DGX H100").seconds
    assert comms.bus_bandwidth(run.message_bytes, t, 8)[1] == pytest.approx(run.busbw, rel=0.03)


def test_published_collectives_refuses_a_record_without_its_figure(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('source = "s"\n[[record]]\nid = "x"\ntopology = "DGX H100"\nn_gpus = 8\ncollective = "all_reduce"\n'
                   'algorithm = "ring"\nmessage_bytes = 1e9\nkind = "measured"\nquote = "q"\n')
    with pytest.raises(ValueError, match="busbw_GBps"):
        comms.published_collectives(bad)


def test_engine_kernel_times_read_with_their_own_source_and_sizes_in_bytes():
    figures = [f for f in comms.published_collectives() if f.seconds]
    assert len(figures) == 12 and all("sglang pull request #2904" in f.source for f in figures)
    # the PR's sizes count float32 values: 4 bytes each, so its largest, 1048576, is 4 MiB (batch 256's message)
    assert sorted({f.message_bytes for f in figures}) == [4 * v for v in (512, 4096, 32768, 262144, 524288, 1048576)]
    for f in figures:
        assert str(int(f.message_bytes) // 4) in f.quote and f"{f.seconds * 1e3:.4f}" in f.quote
        # an all-reduce cannot carry more than the wire: bus bandwidth below one direction of an H100's NVLink,
        # 450 GB/s (were the sizes bytes x 4 too large, the 4 MiB figure would read 868 GB/s)
        assert comms.bus_bandwidth(f.message_bytes, f.seconds, 8)[1] < 450e9


def test_a_record_may_give_a_time_and_its_own_source(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('source = "file"\n[[record]]\nid = "x"\ntopology = "DGX H100"\nn_gpus = 8\n'
                    'collective = "all_reduce"\nalgorithm = "one-shot"\nmessage_bytes = 16384\ntime_us = 5.7\n'
                    'kind = "measured"\nquote = "q"\nsource = "its own"\n')
    (f,) = comms.published_collectives(path)
    assert (f.seconds, f.busbw, f.algbw, f.source) == (pytest.approx(5.7e-6), 0.0, 0.0, "its own")
    with pytest.raises(ValueError, match="time_us"):
        comms.published_collectives(path.write_text(path.read_text().replace("5.7", "-1")) and path)
