"""The driver: what runs a fusion, above the backend that generates its program.

`compiler.compile` parses or clones a fusion and returns an `Executable`
(`runtime`) or, for a sharded fusion, a `DistributedExecutable`
(`distributed`); `runtime` also holds the program caches (in memory, on disk)
and loads generated programs, with replay where the native executor is built.
"""
