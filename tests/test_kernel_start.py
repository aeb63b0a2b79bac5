"""The grader's worker starts a kernel once more when the first dies before it answers: jupyter_client picks
free ports for a kernel and the kernel binds them a second later, so another process starting a kernel at the
same moment (the grader runs two at a time; the suite runs in parallel) can take one, and that kernel dies."""

import asyncio

from roofline_lib.teach import kernel, worker


def test_a_kernel_that_dies_at_start_is_started_once_more(tmp_path, monkeypatch):
    start, tries = kernel.Kernel.start, []

    async def dies_first(self, on_started=None):
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("Kernel died before replying to kernel_info")
        await start(self, on_started)

    monkeypatch.setattr(kernel.Kernel, "start", dies_first)
    events = []
    job = {"skip": [], "scratch": str(tmp_path), "memory_mb": 0, "seconds": 120, "cell_timeout": 60,
           "notebook_timeout": 120}
    asyncio.run(worker.run_cells([("code", "x = 6 * 7")], [], job, lambda event, **f: events.append((event, f))))
    assert len(tries) == 2
    assert [e for e, _ in events if e in ("busy", "idle", "problem", "not_run", "note")] == ["busy", "idle"], events
