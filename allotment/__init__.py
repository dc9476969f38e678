"""Allotment: an allocation-aware tensor-fusion compiler on xDSL."""

__version__ = "0.1.0"
