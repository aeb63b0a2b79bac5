"""roofline_lib.core.catalog: a folder of TOML files looked up by name or alias, reloaded when a file changes."""

import dataclasses
import os

import pytest

from roofline_lib.core.catalog import Catalog, name_key, read_toml


@dataclasses.dataclass
class Item:
    name: str
    aliases: tuple
    size: int


def load(path):
    table = read_toml(path)
    return Item(table["name"], tuple(table.get("aliases", ())), table["size"])


def write(folder, stem, text):
    path = folder / f"{stem}.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("a, b", [("H200-SXM", "h200 sxm"), ("Llama_2.7B", "llama-2-7b"), ("A100 80GB", "a10080gb")])
def test_name_key_ignores_case_spaces_and_punctuation(a, b):
    assert name_key(a) == name_key(b)


def test_names_and_aliases_find_the_item(tmp_path):
    write(tmp_path, "a", 'name = "Chip A"\naliases = ["A"]\nsize = 1\n')
    write(tmp_path, "b", 'name = "Chip B"\nsize = 2\n')
    c = Catalog(tmp_path, load, "chip")
    assert c.names() == ["Chip A", "Chip B"]
    assert c.get("chip-a").size == 1 and c.get("a").size == 1 and c.get("CHIP B").size == 2


def test_unknown_name_lists_close_matches_and_every_name(tmp_path):
    write(tmp_path, "a", 'name = "Chip A"\nsize = 1\n')
    c = Catalog(tmp_path, load, "chip")
    with pytest.raises(ValueError, match=r"unknown chip 'Chip Z'; did you mean 'Chip A'\? Known: Chip A"):
        c.get("Chip Z")
    for bad in ("", "  ", None, 3):
        with pytest.raises(ValueError, match="chip name must be a non-empty string"):
            c.get(bad)


def test_an_alias_used_twice_is_refused(tmp_path):
    write(tmp_path, "a", 'name = "Chip A"\naliases = ["X"]\nsize = 1\n')
    write(tmp_path, "b", 'name = "Chip B"\naliases = ["x"]\nsize = 2\n')
    with pytest.raises(ValueError, match="b.toml: name or alias 'x' is already used by 'Chip A'"):
        Catalog(tmp_path, load, "chip").names()


def test_an_edited_file_is_seen_after_the_recheck_interval(tmp_path):
    path = write(tmp_path, "a", 'name = "Chip A"\nsize = 1\n')
    c = Catalog(tmp_path, load, "chip")
    c.recheck_seconds = 0  # look at the folder on every lookup
    assert c.get("Chip A").size == 1
    path.write_text('name = "Chip A"\nsize = 2\n')
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a later modification time, whatever the clock
    assert c.get("Chip A").size == 2


def test_read_toml_names_a_broken_file(tmp_path):
    with pytest.raises(ValueError, match=r"bad.toml: not valid TOML"):
        read_toml(write(tmp_path, "bad", "name = \n"))
