"""Number formats: their names, aliases and storage size in bytes."""

import typing

# Bytes per element as stored in memory. int4 packs two values per byte. The block-scaled formats count their
# scales: NVFP4 is 4-bit E2M1 values with one FP8 (E4M3) scale per 16 (plus one FP32 scale per tensor, a rounding
# error); MXFP4 and MXFP8 (OCP Microscaling) one 8-bit power-of-two (E8M0) scale per 32. "fp4" is FP4 as a compute
# format (the tensor cores' rate), its values alone.
BYTES_PER_ELEMENT = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,  # tf32 is a compute mode; operands are stored as fp32
    "bf16": 2,
    "fp16": 2,
    "fp8": 1,
    "int8": 1,
    "int4": 0.5,
    "fp4": 0.5,
    "nvfp4": 0.5 + 1 / 16,
    "mxfp4": 0.5 + 1 / 32,
    "mxfp8": 1 + 1 / 32,
}
# The tensor-core format a stored format computes in, where the chip has it (fp8 for fp8, fp4 for the FP4 formats).
COMPUTE_FORMAT = {"fp8": "fp8", "mxfp8": "fp8", "nvfp4": "fp4", "mxfp4": "fp4", "fp4": "fp4"}

_ALIASES = {
    "float64": "fp64", "double": "fp64",
    "float32": "fp32", "float": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16", "half": "fp16",
    "float8": "fp8", "e4m3": "fp8", "e5m2": "fp8",
    "e2m1": "fp4", "float4": "fp4",
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
    """Storage size of one element of ``dtype`` in bytes.

    Taught in chapter 02 (notebooks/02_roofline_model.ipynb); also used in chapters 03, 04, 06."""
    return BYTES_PER_ELEMENT[canonical_dtype(dtype)]


__all__ = ["BYTES_PER_ELEMENT", "bytes_per_element", "canonical_dtype", "COMPUTE_FORMAT", "Dtypes"]
