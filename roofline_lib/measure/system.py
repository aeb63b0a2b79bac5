"""What the operating system says about this machine: load, memory, cores, caches.

    info = rl.system.probe()      # SystemInfo; info.warnings lists what could not be read

Linux reads /proc and /sys; macOS asks sysctl (through ctypes and the C library); Windows asks
kernel32 (GlobalMemoryStatusEx, GetLogicalProcessorInformation) through ctypes. No compiled
dependency. Where a platform call is missing or fails, the figure falls back to a stated
assumption and the reason goes into ``warnings``: never a crash, never a silent guess.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import os
import pathlib
import sys

SYSFS_CACHE = "/sys/devices/system/cpu/cpu0/cache"
FALLBACK_LLC_BYTES = 32 * 2**20
FALLBACK_MEMORY_BYTES = 4 * 2**30
_SIZE_SCALE = {"K": 2**10, "M": 2**20, "G": 2**30}


def platform_name(platform=None):
    """'linux', 'macos', 'windows' or 'other' for ``sys.platform`` (or the value given)."""
    platform = sys.platform if platform is None else platform
    if platform.startswith("linux"):
        return "linux"
    if platform == "darwin":
        return "macos"
    if platform in ("win32", "cygwin"):
        return "windows"
    return "other"


# ------------------------------------------------------------------ macOS: sysctl through ctypes

def sysctl(name):
    """The integer value of sysctl ``name`` (macOS/BSD), or None where there is no such call or key."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        call = libc.sysctlbyname
    except (OSError, AttributeError, TypeError):
        return None
    value, size = ctypes.c_uint64(0), ctypes.c_size_t(8)
    if call(name.encode(), ctypes.byref(value), ctypes.byref(size), None, ctypes.c_size_t(0)) != 0:
        return None
    return int(value.value) if size.value in (4, 8) else None


# ------------------------------------------------------------------ Windows: kernel32 through ctypes

class _MemoryStatusEx(ctypes.Structure):
    _fields_ = [("dwLength", ctypes.c_uint32), ("dwMemoryLoad", ctypes.c_uint32),
                ("ullTotalPhys", ctypes.c_uint64), ("ullAvailPhys", ctypes.c_uint64),
                ("ullTotalPageFile", ctypes.c_uint64), ("ullAvailPageFile", ctypes.c_uint64),
                ("ullTotalVirtual", ctypes.c_uint64), ("ullAvailVirtual", ctypes.c_uint64),
                ("ullAvailExtendedVirtual", ctypes.c_uint64)]


def windows_memory():
    """(total, available) bytes from GlobalMemoryStatusEx, or None where kernel32 is not there."""
    try:
        kernel32 = ctypes.windll.kernel32  # only exists on Windows
        status = _MemoryStatusEx()
        status.dwLength = ctypes.sizeof(_MemoryStatusEx)
        if not kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            return None
    except (AttributeError, OSError):
        return None
    return int(status.ullTotalPhys), int(status.ullAvailPhys)


# SYSTEM_LOGICAL_PROCESSOR_INFORMATION on 64-bit Windows: ULONG_PTR mask (8), enum relationship (4),
# 4 bytes of padding, then a 16-byte union; for RelationCache (2) the union is CACHE_DESCRIPTOR:
# BYTE level, BYTE associativity, WORD line size, DWORD size, enum type (0 unified, 1 instruction,
# 2 data, 3 trace).
_SLPI_SIZE = 32
_RELATION_CACHE = 2
_CACHE_INSTRUCTION = 1


def parse_logical_processor_information(buffer):
    """{level: bytes} of data/unified caches in a GetLogicalProcessorInformation buffer (64-bit layout)."""
    buffer = bytes(buffer)
    if len(buffer) % _SLPI_SIZE:
        raise ValueError(f"buffer of {len(buffer)} bytes is not a whole number of {_SLPI_SIZE}-byte records")
    sizes = {}
    for offset in range(0, len(buffer), _SLPI_SIZE):
        record = buffer[offset:offset + _SLPI_SIZE]
        relation = int.from_bytes(record[8:12], "little")
        if relation != _RELATION_CACHE:
            continue
        level = record[16]
        size = int.from_bytes(record[20:24], "little")
        kind = int.from_bytes(record[24:28], "little")
        if kind != _CACHE_INSTRUCTION and size > 0:
            sizes[level] = max(sizes.get(level, 0), size)
    return sizes


def windows_caches():
    """{level: bytes} from GetLogicalProcessorInformation, or None where kernel32 is not there."""
    try:
        call = ctypes.windll.kernel32.GetLogicalProcessorInformation
        length = ctypes.c_uint32(0)
        call(None, ctypes.byref(length))  # fails, but says how large the buffer must be
        buffer = ctypes.create_string_buffer(length.value)
        if not length.value or not call(buffer, ctypes.byref(length)):
            return None
    except (AttributeError, OSError):
        return None
    return parse_logical_processor_information(buffer.raw[:length.value - length.value % _SLPI_SIZE])


# ------------------------------------------------------------------ Linux: /proc and /sys

def linux_caches(sysfs=SYSFS_CACHE):
    """{level: bytes} of the unified/data caches cpu0 sees, read from sysfs ({} if unreadable)."""
    sizes = {}
    try:
        indexes = sorted(pathlib.Path(sysfs).glob("index*"))
    except OSError:
        return sizes
    for index in indexes:
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            text = (index / "size").read_text().strip().upper()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes[level] = max(sizes.get(level, 0), int(digits) * _SIZE_SCALE.get(text[-1:], 1))
    return sizes


def meminfo(field, path="/proc/meminfo"):
    """Bytes of ``field`` (MemTotal, MemAvailable) in /proc/meminfo, or None where unreadable."""
    try:
        for line in pathlib.Path(path).read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _sysconf_bytes(pages_name):
    try:
        return os.sysconf(pages_name) * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows), or a name this OS lacks (macOS)
        return None


# ------------------------------------------------------------------ the figures, with their sources

def memory(platform=None):
    """(total bytes, available bytes, warnings)."""
    kind, warnings = platform_name(platform), []
    total = available = None
    if kind == "linux":
        total, available = meminfo("MemTotal"), meminfo("MemAvailable")
    elif kind == "macos":
        total = sysctl("hw.memsize")
        free, page = sysctl("vm.page_free_count"), sysctl("hw.pagesize")
        if free is not None and page:
            # free pages only: macOS keeps reclaimable file cache out of this count, so it is low
            available = free * page
    elif kind == "windows":
        figures = windows_memory()
        if figures:
            total, available = figures
    total = total or _sysconf_bytes("SC_PHYS_PAGES")
    available = available or _sysconf_bytes("SC_AVPHYS_PAGES")
    if total is None:
        total = FALLBACK_MEMORY_BYTES
        warnings.append(f"could not read the memory size on this platform ({sys.platform}); assuming "
                        f"{total / 2**30:.0f} GiB")
    if available is None:
        available = total // 2
        warnings.append(f"could not read the available memory on this platform ({sys.platform}); assuming "
                        f"half of the total ({available / 2**30:.1f} GiB)")
    return int(total), int(min(available, total)), warnings


def load_average():
    """(1-minute load average or None, warnings). Windows has no load average."""
    try:
        return float(os.getloadavg()[0]), []
    except (AttributeError, OSError):
        return None, [f"no load average on this platform ({sys.platform}): whether other programs were "
                      "busy during the measurement is not known; close them, and compare repeated runs"]


def cores(platform=None):
    """(cores this process may run on, warnings). On Apple silicon the note says how many are performance cores."""
    try:
        return len(os.sched_getaffinity(0)), []
    except (AttributeError, OSError):
        pass
    warnings = []
    count = os.cpu_count()
    if count is None:
        count = 1
        warnings.append("the number of cores is unknown on this platform; assuming 1")
    if platform_name(platform) == "macos":
        performance = sysctl("hw.perflevel0.physicalcpu")
        efficiency = sysctl("hw.perflevel1.physicalcpu")
        if performance and efficiency:
            warnings.append(f"{performance} performance and {efficiency} efficiency cores: threads on the "
                            "efficiency cores are slower, so all-core figures mix the two kinds")
    return count, warnings


def caches(platform=None, sysfs=SYSFS_CACHE):
    """({level: bytes} of data/unified caches, where they came from) ({} where nothing could be read)."""
    kind = platform_name(platform)
    if kind == "linux":
        return linux_caches(sysfs), f"sysfs ({sysfs})"
    if kind == "macos":
        sizes = {}
        # Apple silicon reports per performance level (hw.perflevel0 = performance cores); Intel Macs
        # report hw.l2cachesize / hw.l3cachesize. Apple silicon has no L3 (its system-level cache is
        # not reported).
        for level in (1, 2, 3):
            names = ("l1dcachesize",) if level == 1 else (f"l{level}cachesize",)
            for name in names:
                value = sysctl(f"hw.perflevel0.{name}") or sysctl(f"hw.{name}")
                if value:
                    sizes[level] = value
        return sizes, "sysctl hw.perflevel0.* / hw.l*cachesize"
    if kind == "windows":
        return windows_caches() or {}, "GetLogicalProcessorInformation"
    return {}, f"no cache probe for platform {sys.platform!r}"


def last_level_cache(platform=None, sysfs=SYSFS_CACHE):
    """(bytes, where the figure came from, warnings): the highest cache level, or a stated fallback."""
    sizes, source = caches(platform, sysfs)
    if sizes:
        level = max(sizes)
        return sizes[level], f"L{level} from {source}", []
    note = (f"could not read cache sizes ({source}); assuming a {FALLBACK_LLC_BYTES // 2**20} MiB last-level "
            "cache (pass llc_bytes= to override)")
    return FALLBACK_LLC_BYTES, "assumed", [note]


@dataclasses.dataclass(frozen=True)
class SystemInfo:
    """What the operating system says about this machine: platform, load, memory (bytes), cores, caches, and a warning
    for each figure it could not read."""

    platform: str  # linux | macos | windows | other
    load_average: object  # 1-minute load, or None where the platform has none
    total_memory: int  # bytes
    available_memory: int  # bytes
    cores: int
    caches: dict  # level -> bytes
    llc_bytes: int
    llc_source: str
    warnings: tuple = ()


def probe(platform=None):
    """Everything above in one SystemInfo, with every fallback's reason in ``warnings``."""
    load, w_load = load_average()
    total, available, w_mem = memory(platform)
    count, w_cores = cores(platform)
    sizes, _ = caches(platform)
    llc, llc_source, w_llc = last_level_cache(platform)
    return SystemInfo(platform_name(platform), load, total, available, count, sizes, int(llc), llc_source,
                      tuple(w_load + w_mem + w_cores + w_llc))


__all__ = [
    "caches", "cores", "FALLBACK_LLC_BYTES", "FALLBACK_MEMORY_BYTES", "last_level_cache", "linux_caches",
    "load_average", "meminfo", "memory", "parse_logical_processor_information", "platform_name", "probe", "sysctl",
    "SYSFS_CACHE", "SystemInfo", "windows_caches", "windows_memory",
]
