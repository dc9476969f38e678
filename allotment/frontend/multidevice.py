"""Device meshes and the part of nvFuser's multidevice API that maps onto `#fusion.sharding`.

nvFuser shards a tensor by giving it a device mesh (`t.set_device_mesh(mesh)`)
and parallelizing one of its loop axes over a mesh axis
(`t.axis(i).parallelize(ParallelType.mesh_x)`), optionally after splitting a
logical dimension so that its outer part has as many entries as the mesh
(`t.outer_split(i, d)`). Both spellings say "logical dimension i is split over
mesh axis 0", which is what `#fusion.sharding<@mesh, [..., [0], ...]>` says.
Anything else (inner splits, thread or block parallel types, parallelizing the
inner part of a split) raises `allotment.UnsupportedError("not supported: ...")`
(a NotImplementedError); a bad argument raises `allotment.ArgumentError`.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

import torch

from allotment.errors import ArgumentError, UnsupportedError


class ParallelType(enum.Enum):
    """nvFuser's parallel types; only the mesh ones map onto a sharding."""

    mesh_x = "mesh_x"
    mesh_y = "mesh_y"
    mesh_z = "mesh_z"
    grid_x = "grid_x"
    grid_y = "grid_y"
    grid_z = "grid_z"
    block_x = "block_x"
    block_y = "block_y"
    block_z = "block_z"
    mma = "mma"
    serial = "serial"
    tma = "tma"
    unroll = "unroll"
    unswitch = "unswitch"
    vectorize = "vectorize"
    stream = "stream"

    def __repr__(self) -> str:
        return f"ParallelType.{self.name}"

    __str__ = __repr__


MESH_AXIS = {ParallelType.mesh_x: 0, ParallelType.mesh_y: 1, ParallelType.mesh_z: 2}


class DeviceMesh:
    """An n-D grid of device ids (`nvfuser.DeviceMesh`): a list or tensor of ids."""

    def __init__(self, devices: Sequence[int] | torch.Tensor):
        if isinstance(devices, torch.Tensor):
            if devices.is_meta or devices.layout != torch.strided or devices.is_nested:
                raise ArgumentError(f"DeviceMesh: devices must be a dense tensor of device ids, got {devices!r}")
            if devices.dtype.is_floating_point or devices.dtype.is_complex:
                raise ArgumentError(f"DeviceMesh: devices must be integers, got {devices.dtype}")
            shape = list(devices.shape) or [1]
            ids = [int(i) for i in devices.flatten().tolist()]
        else:
            if isinstance(devices, (str, bytes)) or not isinstance(devices, Sequence):
                raise ArgumentError(
                    f"DeviceMesh: devices must be a list or tensor of device ids, got "
                    f"{type(devices).__name__}"
                )
            ids = []
            for d in devices:
                if isinstance(d, bool) or not isinstance(d, int):
                    raise ArgumentError(f"DeviceMesh: device ids must be ints, got {d!r}")
                ids.append(d)
            shape = [len(ids)]
        if not ids:
            raise ArgumentError("DeviceMesh: the mesh needs at least one device")
        if len(set(ids)) != len(ids) or min(ids) < 0:
            raise ArgumentError(f"DeviceMesh: device ids {ids} must be distinct and non-negative")
        self._ids = ids
        self._shape = shape

    @property
    def size(self) -> int:
        return len(self._ids)

    @property
    def shape(self) -> list[int]:
        return list(self._shape)

    @property
    def devices(self) -> list[int]:
        return list(self._ids)

    def _key(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return tuple(self._shape), tuple(self._ids)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeviceMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"DeviceMesh(shape={self._shape}, devices={self._ids})"

    def shard_tensor(self, tensor: torch.Tensor, axis: int, device_id: int) -> torch.Tensor:
        """The slice of `tensor` along `axis` that device `device_id` holds (even split)."""
        if len(self._shape) != 1:
            raise UnsupportedError("not supported: shard_tensor on a multi-dimensional mesh")
        if not isinstance(tensor, torch.Tensor):
            raise ArgumentError(f"shard_tensor: argument 'tensor' must be a torch.Tensor, got {type(tensor).__name__}")
        if isinstance(axis, bool) or not isinstance(axis, int) or not -tensor.dim() <= axis < tensor.dim():
            raise ArgumentError(
                f"shard_tensor: argument 'axis' must be a dimension of the rank-{tensor.dim()} tensor, got {axis!r}"
            )
        if device_id not in self._ids:
            raise ArgumentError(f"device {device_id} is not in {self!r}")
        n = self.size
        if tensor.shape[axis] % n:
            raise ArgumentError(
                f"extent {tensor.shape[axis]} of dimension {axis} does not divide over {n} devices"
            )
        return tensor.chunk(n, axis)[self._ids.index(device_id)].contiguous()


@dataclass
class LoopAxis:
    """One loop axis of a tensor: a whole logical dimension, or a part of a split one."""

    logical: int
    part: str = "whole"  # "whole", "outer", "inner"
    factor: int | None = None
    parallel: ParallelType | None = None


@dataclass
class TensorSharding:
    """The mesh and loop axes recorded for one tensor handle."""

    rank: int
    mesh: DeviceMesh | None = None
    loops: list[LoopAxis] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.loops:
            self.loops = [LoopAxis(d) for d in range(self.rank)]

    def loop(self, axis: int, what: str) -> LoopAxis:
        n = len(self.loops)
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise ArgumentError(f"{what}: axis must be an int, got {axis!r}")
        if not -n <= axis < n:
            raise ArgumentError(f"{what}: axis {axis} is out of range for {n} loop axes")
        return self.loops[axis % n]

    def outer_split(self, axis: int, factor: int) -> None:
        if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
            raise ArgumentError(f"outer_split: factor must be a positive int, got {factor!r}")
        loop = self.loop(axis, "outer_split")
        if loop.part != "whole" or loop.parallel is not None:
            raise UnsupportedError(
                "not supported: splitting an axis that is already split or parallelized"
            )
        i = self.loops.index(loop)
        self.loops[i : i + 1] = [
            LoopAxis(loop.logical, "outer", factor),
            LoopAxis(loop.logical, "inner", factor),
        ]

    def split_axes(self) -> list[list[int]]:
        """Mesh axes per logical dimension (the `#fusion.sharding` split axes)."""
        dims: list[list[int]] = [[] for _ in range(self.rank)]
        for loop in self.loops:
            if loop.parallel is None or loop.parallel is ParallelType.serial:
                continue
            axis = MESH_AXIS[loop.parallel]
            if self.mesh is not None and axis >= len(self.mesh.shape):
                raise ArgumentError(
                    f"{loop.parallel!r} names mesh axis {axis}, but {self.mesh!r} has "
                    f"{len(self.mesh.shape)} axes"
                )
            if loop.part == "outer" and self.mesh is not None:
                if loop.factor != self.mesh.shape[axis]:
                    raise UnsupportedError(
                        f"not supported: an outer split by {loop.factor} parallelized over a "
                        f"mesh axis of {self.mesh.shape[axis]} devices (they must be equal)"
                    )
            dims[loop.logical].append(axis)
        return dims

    def shards(self, dim: int) -> int:
        """How many shards logical dimension `dim` is split into."""
        if self.mesh is None:
            return 1
        return prod(self.mesh.shape[a] for a in self.split_axes()[dim])


class IterDomain:
    """A loop axis handle (`t.axis(i)`), for `parallelize`."""

    def __init__(self, sharding: TensorSharding, loop: LoopAxis, check_open: object):
        self._sharding = sharding
        self._loop = loop
        self._check_open = check_open

    def parallelize(self, parallel_type: ParallelType) -> None:
        self._check_open("parallelize")  # type: ignore[operator]
        if not isinstance(parallel_type, ParallelType):
            raise ArgumentError(
                f"parallelize: parallel_type must be a ParallelType, got {parallel_type!r}"
            )
        if parallel_type is ParallelType.serial:
            self._loop.parallel = None
            return
        if parallel_type not in MESH_AXIS:
            raise UnsupportedError(f"not supported: parallelize with {parallel_type!r}")
        if self._loop.part == "inner":
            raise UnsupportedError(
                "not supported: parallelizing the inner part of a split over a mesh"
            )
        self._loop.parallel = parallel_type

    def is_device_dim(self) -> bool:
        return self._loop.parallel in MESH_AXIS

    def __repr__(self) -> str:
        part = "" if self._loop.part == "whole" else f" ({self._loop.part} of a split)"
        par = f", {self._loop.parallel!r}" if self._loop.parallel else ""
        return f"IterDomain(dim={self._loop.logical}{part}{par})"
