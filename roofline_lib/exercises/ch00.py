"""Chapter 00: one demo question that shows how the self-checks answer."""

from ..dtypes import bytes_per_element
from .core import Question

QUESTIONS = [
    Question(
        "00.demo_bytes",
        "How many bytes do one million (1e6) bf16 numbers occupy in memory?",
        lambda: bytes_per_element("bf16") * 1e6,
        unit="byte",
        hint="a bf16 number is 16 bits",
    ),
]
