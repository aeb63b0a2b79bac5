"""Input is checked once, at the public boundary: a profiler counts the checks one public call runs.

Every check goes through ``roofline_lib.core.checks`` (the count sees nothing else), and a name is
looked up in a catalog (``Catalog.get``) at most once per call.
"""

import math
import os
import sys

import numpy as np
import pytest

import roofline_lib as rl
from roofline_lib.core import catalog, checks

CHECKS = {getattr(checks, name).__code__: name for name in checks.__all__
          if callable(getattr(checks, name)) and hasattr(getattr(checks, name), "__code__")}


def run_counting(call):
    """(the checks call ran, outermost only, as (check, argument name); the catalog look-ups by name).
    The call runs once before it is counted, so that the data files are loaded (and checked) already."""
    call()
    found, lookups, depth = [], [], [0]

    def profile(frame, event, arg):
        code = frame.f_code
        if code in CHECKS:
            if event == "call":
                if depth[0] == 0:
                    found.append((CHECKS[code], frame.f_locals.get("name")))
                depth[0] += 1
            elif event == "return":
                depth[0] -= 1
        elif code is catalog.Catalog.get.__code__ and event == "call":
            lookups.append(frame.f_locals.get("name"))

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return found, lookups


def test_the_counter_sees_checks_and_lookups():
    found, lookups = run_counting(lambda: rl.matmul(8, 8, 8))
    assert found == [("positive", "M"), ("positive", "N"), ("positive", "K")]
    found, lookups = run_counting(lambda: rl.get_accelerator("A100"))
    assert found == [] and lookups == ["A100"]


def test_a_request_checks_each_argument_once():
    found, lookups = run_counting(lambda: rl.serving.request("llama-2-7b", "A100", batch=1, prompt_len=512,
                                                             output_len=128))
    assert len(found) <= 8, found
    names = [name for _, name in found if name]
    assert len(names) == len(set(names)), f"an argument checked twice: {found}"
    assert {"batch", "prompt_len", "output_len", "n_chips"} <= set(names)
    assert ("dtypes", None) in found  # the three dtypes, once, as one bundle
    assert sorted(lookups) == ["A100", "llama-2-7b"]


def test_a_request_refuses_each_bad_argument():
    # each message names what was wrong: the argument, or the unknown dtype
    for kwargs, message in ((dict(batch=0), "^batch must be finite and > 0"),
                            (dict(prompt_len=1.5), "^prompt_len must be a whole number"),
                            (dict(output_len=math.nan), "^output_len must be finite and > 0"),
                            (dict(n_chips=0), "^n_chips must be finite and > 0"),
                            (dict(weight_dtype="fp5"), "^unknown dtype 'fp5'"),
                            (dict(usable_fraction=1.2), r"^usable_fraction must be a share in \(0, 1\]"),
                            (dict(reserved_bytes=-1), "^reserved_bytes must be finite and >= 0")):
        with pytest.raises(ValueError, match=message):
            rl.serving.request("llama-2-7b", "A100", **{"batch": 1, "prompt_len": 512, "output_len": 128, **kwargs})


@pytest.mark.parametrize("call, most, chips_and_models", [
    (lambda: rl.decode_step("llama-3-8b", 8, 4096), 3, 2),
    (lambda: rl.prefill("llama-3-8b", 1, 512), 3, 2),
    (lambda: rl.parallel.tp_decode_step("llama-2-70b", "H100", batch=1, context=4096, n_chips=8), 6, 2),
    (lambda: rl.serving.continuous("llama-2-7b", "A100", [1, 8], 512, 128), 8, 2),
    (lambda: rl.serving.speculative("llama-2-7b", "A100", 1, 4096, 4, 0.7), 9, 2),  # nine arguments, draft_cost too
    (lambda: rl.llm.max_batch("llama-3-8b", "A100", 8192), 6, 2),
    (lambda: rl.training.train_step("llama-2-7b", "H100", n_chips=64, seq_len=4096, global_batch=256, tp=2), 8, 2),
    (lambda: rl.specs.get_topology("DGX H100"), 0, 0),
    (lambda: rl.serving.disaggregated("llama-2-7b", "H100", "A100", 2.0, 1024, 256, 32), 9, 3),
], ids=["decode_step", "prefill", "tp_decode_step", "continuous", "speculative", "max_batch", "train_step",
        "get_topology", "disaggregated"])
def test_public_calls_check_each_argument_once(call, most, chips_and_models):
    found, lookups = run_counting(call)
    names = [name for _, name in found if name]
    assert len(found) <= most and len(names) == len(set(names)), found
    assert len(lookups) == len(set(lookups)) <= chips_and_models, lookups  # each chip and model once


def test_topologies_are_read_once_and_again_when_the_file_changes(tmp_path, monkeypatch):
    from roofline_lib.core.catalog import CachedFile
    from roofline_lib.specs import topologies

    path = tmp_path / "topologies.toml"
    path.write_text(topologies.TOPOLOGY_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    cached = CachedFile(path, topologies._parse)
    cached.recheck_seconds = 0  # look at the file's time at every call, as a reader's next cell would
    monkeypatch.setattr(topologies, "_FILE", cached)
    first = rl.specs.get_topology("DGX H100")
    _, found = _counting_all(lambda: rl.specs.get_topology("DGX H100"))
    assert found == [] and rl.specs.get_topology("dgx h100") is first  # kept: no check runs again
    # a reader's edit is seen: once the file changes (a new modification time), it is read and checked again
    path.write_text(path.read_text(encoding="utf-8").replace('name = "DGX H100"', 'name = "DGX H100 (edited)"'),
                    encoding="utf-8")
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    _, found = _counting_all(lambda: rl.specs.get_topology("DGX H100 (edited)"))
    assert found and set(found) == {"figure_problem"}
    with pytest.raises(ValueError, match="unknown topology 'DGX H100'"):
        rl.specs.get_topology("DGX H100")


# ---------------------------------------------------------------- the Workload a learner builds

@pytest.mark.parametrize("kwargs, words", [
    (dict(flops=1e9, bytes=0), "bytes of 'k' must be finite and > 0"),
    (dict(flops="1e9", bytes=1e6), "flops of 'k' must be a non-negative number"),
    (dict(flops=math.nan, bytes=1e6), "flops of 'k' must be finite and >= 0"),
    (dict(flops=-1, bytes=1e6), "flops of 'k' must be finite and >= 0"),
    (dict(flops=1e9, bytes=[1e6, math.inf]), "bytes of 'k' must be finite and > 0, got inf"),
    (dict(flops=1e9, bytes=1e6, dtype="fp5"), "unknown dtype 'fp5'"),
])
def test_workload_refuses_what_is_not_a_size(kwargs, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        rl.Workload("k", **kwargs)


def test_workload_keeps_what_is_valid():
    w = rl.Workload("k", flops=0, bytes=[1e6, 2e6], dtype="BF16")
    assert w.dtype == "bf16" and list(w.bytes) == [1e6, 2e6] and w.flops == 0
    assert rl.estimate(rl.Workload("k", flops=2e12, bytes=1e9), "H200").lower == pytest.approx(
        max(2e12 / rl.get_accelerator("H200").peak_flops("bf16"), 1e9 / rl.get_accelerator("H200").mem_bandwidth))
    assert np.all(np.isfinite(rl.Workload("k", flops=1, bytes=1).intensity))


# ---------------------------------------------------------------- data files: checked once, when read

def _counting_all(call):
    found = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in CHECKS:
            found.append(CHECKS[frame.f_code])

    sys.setprofile(profile)
    try:
        result = call()
    finally:
        sys.setprofile(None)
    return result, found


def test_a_data_file_is_checked_by_its_loader_alone():
    from roofline_lib.specs import hardware, models

    for load, path in ((hardware.load_accelerator, hardware.ACCELERATOR_DIR / "h200-sxm.toml"),
                       (models.load_model, models.MODEL_DIR / "llama-3-8b.toml")):
        item, found = _counting_all(lambda: load(path))  # noqa: B023 - called at once
        assert found and set(found) == {"figure_problem"}, found  # the loader's checks; the constructor's not again
        assert item.name
    # a figure given to the constructor directly is still checked there
    with pytest.raises(ValueError, match="mem_bandwidth"):
        rl.Accelerator(name="x", vendor="y", peak_flops_by_dtype={"bf16": 1e15}, mem_bandwidth=-1.0,
                       mem_capacity=1e9, mem_capacity_label="1 GB")

