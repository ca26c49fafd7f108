"""A CUDA block shape (SPEC §2.2), and the error of a shape or grid that cannot be mapped.

Its own module: the pseudo-warps (``warps``), their order (``warp_order``), the options of a
prediction and the command line all name a block, none of them needs the others for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import CGPredictError

__all__ = ["Block", "MappingError", "check_block_size"]


class MappingError(CGPredictError, ValueError):
    """A block shape that is not one, or a region that cannot be mapped to the requested grid
    (a ValueError too, as it was before it joined the CGPredictError hierarchy)."""

    exit_code = 2


@dataclass(frozen=True)
class Block:
    """A CUDA block shape, x fastest."""

    x: int
    y: int = 1

    @property
    def threads(self) -> int:
        return self.x * self.y

    @classmethod
    def parse(cls, text: str) -> Block:
        parts = text.lower().split("x")
        try:
            dims = [int(p) for p in parts]
        except ValueError:
            raise MappingError(f"block shape {text!r}: want XxY, e.g. 32x8") from None
        if len(dims) not in (1, 2) or min(dims) < 1:
            raise MappingError(f"block shape {text!r}: want positive XxY, e.g. 32x8")
        return cls(dims[0], dims[1] if len(dims) == 2 else 1)

    def __str__(self) -> str:
        return f"{self.x}x{self.y}"


def check_block_size(block: Block, max_threads: int, device_name: str) -> None:
    """Refuse a block of more threads than the device allows (one line, exit code 2)."""
    if block.threads > max_threads:
        raise MappingError(
            f"block {block} has {block.threads} threads; {device_name} allows "
            f"at most {max_threads} per block"
        )
