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

    # NVIDIA/nccl src/graph/tuning.cc: ring LL baseLat 6.6 us, hwLat 0.6 us (NVLink) / 1.0 us (PCI) per step
    t = comms.allreduce_time_on("H100 SXM", "nvlink", 16384, 8)
    assert t == pytest.approx(6.6e-6 + 14 * 0.6e-6 + 1.75 * 16384 / 450e9, rel=1e-12)
    t = comms.allreduce_time_on("A100", "pcie", 1e6, 4)
    assert t == pytest.approx(6.6e-6 + 6 * 1.0e-6 + 1.5 * 1e6 / 32e9, rel=1e-12)
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
    with pytest.raises(ValueError):
        comms.ring_allreduce_bytes(-1, 4)
    with pytest.raises(ValueError):
        comms.ring_allreduce_bytes(10, 2.5)
    with pytest.raises(ValueError):
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
