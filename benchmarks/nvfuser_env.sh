# Sourced by skeptic_session.sh on the GPU machine, from the repository root: makes real
# nvFuser (`import nvfuser_direct`) importable from the packed wheel carried in
# .nvf/nvf.tar.xz (nvfuser-cu130-torch210 with its bundled libnvrtc and libcupti left
# out: the machine's own CUDA 13 ones are linked under the names the wheel expects).
# Prints one line: whether it imports, or the import error (the wheel is built for
# torch 2.10; the GPU machine has 2.11: nvfuser_abi/patch_nvfuser.py bridges the one C++
# symbol that is missing there, and any other mismatch is still a finding).
if [ -f .nvf/nvf.tar.xz ]; then
  mkdir -p /tmp/nvf && tar xJf .nvf/nvf.tar.xz -C /tmp/nvf
  _l=$(ls -d /tmp/nvf/nvfuser_*.libs 2>/dev/null | head -1)
  _site=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))')
  _find() {  # the machine's library NAME*: torch's site-packages and CUDA first, then the disk
    local hit
    hit=$(find $_site /usr/local/cuda* -name "$1*" -not -path '/tmp/nvf/*' 2>/dev/null | grep -v builtins | head -1)
    [ -n "$hit" ] || hit=$(timeout 60 find / -xdev -name "$1*" -not -path '/tmp/nvf/*' 2>/dev/null | grep -v builtins | head -1)
    echo "$hit"
  }
  _nvrtc=$(_find libnvrtc.so.13)
  _cupti=$(_find libcupti.so.13)
  if [ -n "$_l" ]; then
    # the names nvfuser_direct's extension was linked against (its NEEDED entries)
    [ -n "$_nvrtc" ] && ln -sf "$_nvrtc" "$_l/libnvrtc-a49e67e8.so.13.0.88"
    [ -n "$_cupti" ] && ln -sf "$_cupti" "$_l/libcupti-e2f9ed86.so.2025.3.1"
  fi
  # the wheel is built for torch 2.10; on torch 2.11 its one missing symbol (c10::MessageLogger's
  # old constructor) is supplied by a shim (benchmarks/nvfuser_abi/patch_nvfuser.py says how);
  # built here with g++, or the prebuilt .nvf/libnvf_msglogger_shim.so where g++ is missing
  if python3 benchmarks/nvfuser_abi/patch_nvfuser.py /tmp/nvf || { [ -f .nvf/libnvf_msglogger_shim.so ] \
      && cp .nvf/libnvf_msglogger_shim.so /tmp/nvf/ && echo "nvfuser shim: the prebuilt one"; }; then
    export LD_PRELOAD="/tmp/nvf/libnvf_msglogger_shim.so${LD_PRELOAD:+:$LD_PRELOAD}"
  fi
  _tl=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
  export LD_LIBRARY_PATH="$_tl:$_l:${LD_LIBRARY_PATH:-}" PYTHONPATH="${PYTHONPATH:-}:/tmp/nvf"
  echo "nvrtc: ${_nvrtc:-not found}; cupti: ${_cupti:-not found}"
  python3 -c 'import torch, nvfuser_direct; print("nvfuser_direct imports:", nvfuser_direct.__file__)' 2>&1 | tail -1
  unset _l _nvrtc _cupti _tl _site
  unset -f _find
else
  echo "no .nvf/nvf.tar.xz (carry .nvf): the nvFuser column will record that nvfuser_direct does not import"
fi
