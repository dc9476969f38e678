"""Makes nvFuser's torch-2.10 wheel load on torch 2.11, for the benchmarks' nvFuser column.

    python3 benchmarks/nvfuser_abi/patch_nvfuser.py NVF_DIR

NVF_DIR is the unpacked wheel (benchmarks/nvfuser_env.sh unpacks it to /tmp/nvf). The
wheel's libnvfuser_codegen.so refers to torch 2.10's `c10::MessageLogger(const char*, int,
int, bool)`, which torch 2.11 no longer has. This renames the library's references to
`c10::MessageLogger` (its constructor, destructor and `stream()`) to `c10::MsgLoggerV210`,
a name of the same length, so the symbol table keeps its layout, and builds
`msglogger_shim.cpp`, which defines that class, into NVF_DIR/libnvf_msglogger_shim.so.
Load it first (LD_PRELOAD). Prints what it did; exits 1 if the library has no such
reference or the build fails. Nothing else of the wheel is changed: any other mismatch
with torch 2.11 still shows as an import error or a wrong result, which the suite checks
against eager.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OLD = b"_ZN3c1013MessageLogger"
NEW = b"_ZN3c1013MsgLoggerV210"
assert len(OLD) == len(NEW)


def patch(lib: Path) -> int:
    data = lib.read_bytes()
    n = data.count(OLD)
    if n:
        lib.write_bytes(data.replace(OLD, NEW))
    return n


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    root = Path(argv[0])
    libs = sorted(root.glob("nvfuser_common/lib/libnvfuser_codegen.so"))
    if not libs:
        print(f"patch_nvfuser: no nvfuser_common/lib/libnvfuser_codegen.so under {root}", file=sys.stderr)
        return 1
    renamed = patch(libs[0])
    if renamed == 0 and NEW not in libs[0].read_bytes():
        print(f"patch_nvfuser: {libs[0]} refers to no c10::MessageLogger: nothing to do", file=sys.stderr)
        return 1
    shim = root / "libnvf_msglogger_shim.so"
    src = Path(__file__).with_name("msglogger_shim.cpp")
    try:
        subprocess.run(["g++", "-O2", "-shared", "-fPIC", "-o", str(shim), str(src)], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"patch_nvfuser: could not build {shim}: {e}", file=sys.stderr)
        return 1
    print(f"patch_nvfuser: renamed {renamed} references in {libs[0].name}; built {shim}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
