import matplotlib

# Tests draw figures off-screen; notebooks choose their own backend.
matplotlib.use("Agg")

# The suite runs in parallel (pytest-xdist; pyproject.toml's addopts: -n auto --dist loadfile). Each file
# goes whole to one worker: nbval runs one notebook's cells in order in one kernel, and a module's fixtures
# are built once. Files are handed out in collection order (--no-loadscope-reorder), so the slowest go
# first: started last, one of them would keep a worker busy long after the others ran out of work.
SLOWEST_FIRST = [  # about 100, 90 and 35 s on one core of a 2-core machine; the rest take under 20 s each
    "tests/test_browser.py", "tests/test_student.py", "tests/test_grade_hostile.py",
]


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}

    def slowness(item):
        try:
            return rank.get(item.path.relative_to(config.rootpath).as_posix(), len(rank))
        except ValueError:  # outside the repository
            return len(rank)

    items.sort(key=slowness)  # stable: within a file, and a notebook's cells, the order stays
