"""Number formats: their names, aliases and storage size in bytes."""

import typing

# Bytes per element as stored in memory. int4 packs two values per byte.
BYTES_PER_ELEMENT = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,  # tf32 is a compute mode; operands are stored as fp32
    "bf16": 2,
    "fp16": 2,
    "fp8": 1,
    "int8": 1,
    "int4": 0.5,
}

_ALIASES = {
    "float64": "fp64", "double": "fp64",
    "float32": "fp32", "float": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16", "half": "fp16",
    "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8",
}


_KNOWN = {}  # spellings already seen -> canonical name (a lookup is then one dict access)


def canonical_dtype(dtype):
    """Return the canonical name of ``dtype`` ('bf16', 'fp8', ...) or raise ValueError."""
    if type(dtype) is str:
        known = _KNOWN.get(dtype)
        if known is not None:
            return known
    if not isinstance(dtype, str):
        raise ValueError(
            f"dtype must be a string such as 'bf16', got {dtype!r}; "
            f"known dtypes: {', '.join(BYTES_PER_ELEMENT)}"
        )
    key = dtype.strip().lower().replace("_", "").replace("-", "")
    key = _ALIASES.get(key, key)
    if key not in BYTES_PER_ELEMENT:
        raise ValueError(
            f"unknown dtype {dtype!r}; known dtypes: {', '.join(BYTES_PER_ELEMENT)}"
        )
    if type(dtype) is str:
        _KNOWN[dtype] = key
    return key


class Dtypes(typing.NamedTuple):
    """The three number formats of an LLM step, canonical names (``checks.dtypes`` makes one): weights as
    stored, the KV cache as stored, and the compute dtype (whose peak applies; activations are stored in it)."""

    weight: str
    kv: str
    compute: str


def bytes_per_element(dtype):
    """Storage size of one element of ``dtype`` in bytes."""
    return BYTES_PER_ELEMENT[canonical_dtype(dtype)]


__all__ = ["BYTES_PER_ELEMENT", "bytes_per_element", "canonical_dtype", "Dtypes"]
