// Replays recorded calls of a generated host program (allotment.backend.replay).
//
// A table holds, per input signature, what one call of a program did that depends on
// the signature only: the buffers it allocated (sizes, strides, dtype, device), the
// launches it made (Triton's launch callable and its full argument tuple, with the
// slots that hold a device pointer named by where the pointer came from: an input's
// data pointer or an allocation's, plus a byte offset; and the slot of the stream; or a
// torch call, whose tensor arguments are views of inputs or allocations),
// and what it returned (an allocation, an input as it is, a view of an input, or a view
// of an allocation that a torch call returned).
//
// The steps run in the recorded order; besides launches and torch calls, ("alloc", j)
// makes allocation j there (an allocation without such a step is made before the first
// step), ("free", src) drops a source there, and a torch call may bind the tensors it
// returns as allocations (("result", ...) entries: checked against the recorded layout,
// never allocated). So a replay holds a buffer from its first use to its last, as the
// program does. `check_order` refuses a plan whose steps take a source that is not live.
//
// `call_boxed(table, args)` is `call` for AOTAutograd's boxed convention: on a replay it
// takes the list's references and empties it, and a ("free", i) step drops input i (a
// donated one: its storage is freed there, as the program's `del` frees it); `call`
// leaves inputs to its caller. `specs(inputs)` takes a signature before a boxed recording
// frees the inputs; `add` and `refuse` accept it in place of the inputs.
//
// `call(table, inputs)` answers False while the table's hook (a context variable) is set,
// else compares the inputs with each recorded signature (per tensor:
// Python type, dtype, device, layout, sizes, strides, 16-byte alignment of the data
// pointer; per scalar: Python type and value; and the current device), and on a match
// allocates, launches on the current stream and returns the outputs: no Python code
// runs. It returns None when no signature matches (the caller runs the program, and
// may record it), and False when the matching signature was recorded as one that must
// not be replayed, or when an input that the plan writes (an in-place output) shares
// memory with another input of this call (the program then refuses the call as it does
// on its own path: that depends on pointers, not on the signature). An allocation made before the first step that fails
// returns None before any launch (the program then runs and reports the error); one at
// an ("alloc", j) step raises RuntimeError with torch's message (the program fails at the
// same allocation); an exception from a launch propagates.
//
// Nothing here interprets IR or text: the table holds Python objects and integers
// that the recorder derived from one run of the program.

#include <Python.h>

#include <ATen/EmptyTensor.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/as_strided.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/Stream.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {

// PassInt and PassFloat: a scalar parameter that only feeds kernels, passed through: an
// int matches by Triton's specialization class (1, divisibility by 16, 32-bit range) and
// its `bits` range, a float by type only.
enum class Kind { Tensor, Int, Float, Bool, PassInt, PassFloat };

struct InputSpec {
  Kind kind = Kind::Int;
  PyTypeObject* type = nullptr;
  c10::ScalarType dtype = c10::ScalarType::Undefined;
  c10::Device device{c10::kCPU};
  std::vector<int64_t> sizes, strides;
  int residue = 0;  // the data pointer modulo 16 (Triton specializes on its alignment)
  int64_t ivalue = 0;
  double fvalue = 0.0;
  int bits = 64;  // PassInt: the value's range
};

// What a compiled Triton kernel depends on of an int argument (launch.int_class).
int64_t int_class(long long v) {
  return (v == 1 ? 1 : 0) | (v % 16 == 0 ? 2 : 0) | (v >= -(1LL << 31) && v < (1LL << 31) ? 4 : 0);
}

struct Slot {
  Py_ssize_t pos;   // index in the argument tuple
  Py_ssize_t sub;   // index in the tuple at `pos`, or -1
  int src;          // >= 0: input `src`; < 0: allocation `-src - 1`
  int64_t offset;   // bytes from the source's data pointer
};

struct TensorSlot {  // a torch call's tensor argument: a view of an input or an allocation
  Py_ssize_t pos;      // index in the call's values (positional, then keyword)
  int src;             // as Slot::src
  c10::ScalarType dtype;
  std::vector<int64_t> sizes, strides;
  int64_t offset;      // elements from the source's data pointer
};

// A Triton launch made through the CUDA driver (allotment.backend.driver_launch): the
// kernel's parameters as 64-bit words (each value from its lowest byte), its pointer
// parameters patched from this call's sources, its passed scalars converted.
struct DriverSlot {
  size_t param;
  int src;         // pointer: as Slot::src; value: the input's index
  int64_t offset;  // pointer: bytes from the source's data pointer; value: its type code
};

enum { kI32 = 0, kI64 = 1, kU32 = 2, kU64 = 3, kF32 = 4, kF64 = 5, kPtr = 6 };

struct DriverLaunch {
  uint64_t function = 0;
  unsigned grid[3] = {1, 1, 1};
  unsigned block = 0, shared = 0;
  std::vector<uint64_t> words;
  std::vector<DriverSlot> pointers, values;
  PyObject* owner = nullptr;  // owned: what keeps `function` loaded (Triton's CompiledKernel)
};

// The driver functions used, from libcuda (loaded once; `ok` false without it).
using CUres = int;
struct CudaApi {
  bool ok = false;
  CUres (*launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                  void**) = nullptr;
  CUres (*param_info)(void*, size_t, size_t*, size_t*) = nullptr;
  CUres (*error_string)(CUres, const char**) = nullptr;
  CUres (*ctx_get_current)(void**) = nullptr;
  CUres (*ctx_get_device)(int*) = nullptr;
  CUres (*ctx_set_current)(void*) = nullptr;
  CUres (*primary_retain)(void**, int) = nullptr;
  CUres (*device_get)(int*, int) = nullptr;
};

CudaApi load_cuda() {
  CudaApi api;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return api;
  auto sym = [lib](const char* name) { return dlsym(lib, name); };
  api.launch = reinterpret_cast<decltype(api.launch)>(sym("cuLaunchKernel"));
  api.param_info = reinterpret_cast<decltype(api.param_info)>(sym("cuFuncGetParamInfo"));
  api.error_string = reinterpret_cast<decltype(api.error_string)>(sym("cuGetErrorString"));
  api.ctx_get_current = reinterpret_cast<decltype(api.ctx_get_current)>(sym("cuCtxGetCurrent"));
  api.ctx_get_device = reinterpret_cast<decltype(api.ctx_get_device)>(sym("cuCtxGetDevice"));
  api.ctx_set_current = reinterpret_cast<decltype(api.ctx_set_current)>(sym("cuCtxSetCurrent"));
  api.primary_retain = reinterpret_cast<decltype(api.primary_retain)>(sym("cuDevicePrimaryCtxRetain"));
  api.device_get = reinterpret_cast<decltype(api.device_get)>(sym("cuDeviceGet"));
  api.ok = api.launch && api.param_info && api.error_string && api.ctx_get_current && api.ctx_get_device &&
           api.ctx_set_current && api.primary_retain && api.device_get;
  return api;
}

const CudaApi& cuda() {
  static const CudaApi api = load_cuda();
  return api;
}

enum { kRun = 0, kAllocate = 1, kRelease = 2 };

struct Launch {
  PyObject* fn = nullptr;    // owned
  PyObject* tmpl = nullptr;  // owned tuple: a Triton launch's arguments, or a torch call's values
  std::vector<Slot> slots;
  std::vector<Slot> values;  // a passed scalar parameter's slots (src: its index; offset unused)
  Py_ssize_t stream_pos = -1;
  bool torch_call = false;   // fn(*values[:n - len(kwnames)], **dict(zip(kwnames, values[n - len(kwnames):])))
  PyObject* kwnames = nullptr;  // owned tuple of str, or null
  std::vector<TensorSlot> tensors;
  int op = 0;  // a torch call that is one of these, called through ATen: 1 addmm, 2 mm, 3 matmul (out=)
  bool use_driver = false;  // launched through `driver` instead of `fn`
  DriverLaunch driver;
  int action = kRun;  // kAllocate / kRelease: a step on source `target` instead of a call
  int target = 0;     // kAllocate: the allocation; kRelease: a source (as Slot::src)
  std::vector<std::pair<Py_ssize_t, int>> results;  // a torch call's returned tensors that become
                                                   // allocations: (item of the result or -1: the result itself, allocation)
};

enum { kGeneric = 0, kAddmm = 1, kMm = 2, kMatmul = 3 };

struct Alloc {
  std::vector<int64_t> sizes, strides;
  c10::ScalarType dtype;
  c10::Device device{c10::kCPU};
  bool staged = false;  // allocated at its ("alloc", j) step, not before the first step
  bool bound = false;   // not allocated: a tensor a torch call returns (its layout as recorded)
  int64_t offset = 0;   // bound: the returned tensor's storage offset
};

struct Output {
  int kind;  // 0: input `index` itself; 1: allocation `index`; 2: view of input `index`; 3: view of allocation `index`
  int index;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;  // kind 2, 3: storage offset relative to the source's (in elements of `dtype` for 3)
  c10::ScalarType dtype = c10::ScalarType::Undefined;  // kind 3: the view's dtype
};

// Input `input` shares its storage with input `base` (a view of one buffer passed twice:
// the q, k and v saved for a backward), its data pointer `delta` bytes from base's: the
// plan names its memory through base's pointer, so a call matches only where both hold.
struct Alias {
  int input;
  int base;
  int64_t delta;
};

struct Plan {
  std::vector<InputSpec> ins;
  std::vector<Alias> aliases;
  long device_index = -1;
  bool replay = false;
  std::vector<Alloc> allocs;
  std::vector<Launch> launches;
  std::vector<Output> outs;
  std::vector<long long> marks;  // callers whose own checks passed this signature (`mark`)
  std::vector<int> written;      // tensor inputs the program writes (in-place outputs)
  std::vector<int64_t> spans;    // per input: the bytes its elements span (0: a scalar or no elements)
  ~Plan() {
    for (auto& l : launches) {
      Py_XDECREF(l.fn);
      Py_XDECREF(l.tmpl);
      Py_XDECREF(l.kwnames);
      Py_XDECREF(l.driver.owner);
    }
  }
};

struct Table {
  std::vector<std::shared_ptr<Plan>> plans;
  size_t max_plans = 64;
  PyObject* get_device = nullptr;  // owned: () -> int
  PyObject* get_stream = nullptr;  // owned: (int) -> int
  PyObject* hook = nullptr;        // owned: a contextvars.ContextVar, or null
  bool native_cuda = false;        // the device and stream from torch's CUDA device guard, not the callables
  ~Table() {
    Py_XDECREF(get_device);
    Py_XDECREF(get_stream);
    Py_XDECREF(hook);
  }
};

const char* kCapsule = "allotment.replay.Table";

Table* table_of(PyObject* capsule) {
  return static_cast<Table*>(PyCapsule_GetPointer(capsule, kCapsule));
}

void destroy_table(PyObject* capsule) {
  delete table_of(capsule);
}

bool int_vector(PyObject* seq, std::vector<int64_t>& out) {
  PyObject* fast = PySequence_Fast(seq, "expected a sequence of ints");
  if (!fast) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  out.resize(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
    if (out[i] == -1 && PyErr_Occurred()) {
      Py_DECREF(fast);
      return false;
    }
  }
  Py_DECREF(fast);
  return true;
}

bool same_ints(c10::IntArrayRef a, const std::vector<int64_t>& b) {
  return a.size() == b.size() && (b.empty() || std::memcmp(a.data(), b.data(), b.size() * sizeof(int64_t)) == 0);
}

// The spec of one input as the recorder saw it; false (with an exception set) if it
// is of a kind that is never replayed.
bool spec_of(PyObject* x, InputSpec& s) {
  s.type = Py_TYPE(x);
  if (THPVariable_Check(x)) {
    const at::Tensor& t = THPVariable_Unpack(x);
    if (t.layout() != c10::kStrided || t.is_nested() || !t.has_storage()) {
      PyErr_SetString(PyExc_ValueError, "replay: only dense tensors with storage are recorded");
      return false;
    }
    s.kind = Kind::Tensor;
    s.dtype = t.scalar_type();
    s.device = t.device();
    s.sizes = t.sizes().vec();
    s.strides = t.strides().vec();
    s.residue = static_cast<int>(reinterpret_cast<uintptr_t>(t.data_ptr()) & 15);
    return true;
  }
  if (PyBool_Check(x)) {
    s.kind = Kind::Bool;
    s.ivalue = x == Py_True;
    return true;
  }
  if (PyLong_CheckExact(x)) {
    int overflow = 0;
    s.kind = Kind::Int;
    s.ivalue = PyLong_AsLongLongAndOverflow(x, &overflow);
    if (overflow) {
      PyErr_SetString(PyExc_ValueError, "replay: an int input does not fit 64 bits");
      return false;
    }
    return true;
  }
  if (PyFloat_CheckExact(x)) {
    s.kind = Kind::Float;
    s.fvalue = PyFloat_AS_DOUBLE(x);
    return true;
  }
  PyErr_Format(PyExc_ValueError, "replay: an input of type %s is not recorded", Py_TYPE(x)->tp_name);
  return false;
}

// `x` (an int) in `*v` if it fits 64 bits; false (and no Python error set) if not.
bool as_int64(PyObject* x, long long* v) {
  int overflow = 0;
  *v = PyLong_AsLongLongAndOverflow(x, &overflow);
  if (overflow || (*v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  return true;
}

// Whether `x` has the recorded spec; its data pointer in `*ptr` for a tensor.
bool matches(const InputSpec& s, PyObject* x, uintptr_t* ptr) {
  if (Py_TYPE(x) != s.type) return false;
  switch (s.kind) {
    case Kind::Tensor: {
      const at::Tensor& t = THPVariable_Unpack(x);
      if (t.scalar_type() != s.dtype || t.device() != s.device || t.layout() != c10::kStrided || t.is_nested() ||
          !t.has_storage())
        return false;
      if (!same_ints(t.sizes(), s.sizes) || !same_ints(t.strides(), s.strides)) return false;
      uintptr_t p = reinterpret_cast<uintptr_t>(t.data_ptr());
      if (static_cast<int>(p & 15) != s.residue) return false;
      *ptr = p;
      return true;
    }
    case Kind::Bool:
      return (x == Py_True) == (s.ivalue != 0);
    case Kind::Int: {
      long long v;
      return as_int64(x, &v) && v == s.ivalue;
    }
    case Kind::Float: {
      double v = PyFloat_AS_DOUBLE(x);
      return std::memcmp(&v, &s.fvalue, sizeof v) == 0;
    }
    case Kind::PassInt: {
      long long v;
      if (!as_int64(x, &v)) return false;
      if (s.bits == 32 && (v < -(1LL << 31) || v >= (1LL << 31))) return false;  // the program's range error
      return int_class(v) == s.ivalue;
    }
    case Kind::PassFloat:
      return true;  // the type matched
  }
  return false;
}

const c10::impl::DeviceGuardImplInterface* cuda_guard() {
  try {
    return c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  } catch (const std::exception&) {
    return nullptr;  // (a torch without CUDA)
  }
}

long current_device(Table* tab) {
  if (tab->native_cuda) {
    try {
      return cuda_guard()->getDevice().index();
    } catch (const std::exception&) {
      tab->native_cuda = false;
    }
  }
  PyObject* r = PyObject_CallNoArgs(tab->get_device);
  if (!r) return -2;
  long d = PyLong_AsLong(r);
  Py_DECREF(r);
  if (d == -1 && PyErr_Occurred()) return -2;
  return d;
}

// new_table(get_device, get_stream, max_plans[, hook[, native_cuda]]) -> capsule. While the
// context variable `hook` holds anything but None, `call` answers False (run the program).
// native_cuda: get_device and get_stream are torch's current CUDA device and current raw
// stream, which are then read from torch's CUDA device guard in C++ (the same values,
// without two Python calls); ignored where torch has no CUDA.
PyObject* new_table(PyObject*, PyObject* args) {
  PyObject *get_device, *get_stream, *hook = Py_None;
  Py_ssize_t max_plans;
  int native_cuda = 0;
  if (!PyArg_ParseTuple(args, "OOn|Op", &get_device, &get_stream, &max_plans, &hook, &native_cuda)) return nullptr;
  if (!PyCallable_Check(get_device) || !PyCallable_Check(get_stream) || max_plans < 1 ||
      (hook != Py_None && !PyContextVar_CheckExact(hook))) {
    PyErr_SetString(PyExc_ValueError, "new_table(get_device, get_stream, max_plans >= 1[, hook: ContextVar])");
    return nullptr;
  }
  auto* tab = new Table();
  Py_INCREF(get_device);
  Py_INCREF(get_stream);
  tab->get_device = get_device;
  tab->get_stream = get_stream;
  if (hook != Py_None) {
    Py_INCREF(hook);
    tab->hook = hook;
  }
  tab->max_plans = static_cast<size_t>(max_plans);
  tab->native_cuda = native_cuda != 0 && cuda_guard() != nullptr;
  PyObject* cap = PyCapsule_New(tab, kCapsule, destroy_table);
  if (!cap) delete tab;
  return cap;
}

const char* kSpecs = "allotment.replay.Specs";

void destroy_specs(PyObject* capsule) {
  delete static_cast<std::vector<InputSpec>*>(PyCapsule_GetPointer(capsule, kSpecs));
}

// specs(inputs) -> the signature of `inputs` (an opaque object that `add` and `refuse` take
// in place of the inputs): a boxed call's recording takes it before the program runs and
// frees the donated inputs, so that the recorder holds no reference to them.
PyObject* specs(PyObject*, PyObject* inputs) {
  if (!PyTuple_Check(inputs)) {
    PyErr_SetString(PyExc_TypeError, "specs(inputs: tuple)");
    return nullptr;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(inputs);
  auto out = std::make_unique<std::vector<InputSpec>>(n);
  try {
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!spec_of(PyTuple_GET_ITEM(inputs, i), (*out)[i])) return nullptr;
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_ValueError, "replay: an input is not recorded (%s)", e.what());
    return nullptr;
  }
  PyObject* cap = PyCapsule_New(out.get(), kSpecs, destroy_specs);
  if (cap) out.release();
  return cap;
}

bool parse_inputs(PyObject* inputs, Plan& plan) {
  if (PyCapsule_IsValid(inputs, kSpecs)) {  // `specs(inputs)`
    plan.ins = *static_cast<std::vector<InputSpec>*>(PyCapsule_GetPointer(inputs, kSpecs));
    return true;
  }
  if (!PyTuple_Check(inputs)) {
    PyErr_SetString(PyExc_TypeError, "inputs must be a tuple (or specs(inputs))");
    return false;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(inputs);
  plan.ins.resize(n);
  try {
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!spec_of(PyTuple_GET_ITEM(inputs, i), plan.ins[i])) return false;
  } catch (const std::exception& e) {
    PyErr_Format(PyExc_ValueError, "replay: an input is not recorded (%s)", e.what());
    return false;
  }
  return true;
}

// Calls `f(a, b)` on each (int, int) pair of the sequence `seq`, in order; false (with a
// Python error) where `seq` is not a sequence (the message `what`), an item is not such a
// pair, or `f` returns false (having set the error), which ends the walk.
template <typename F>
bool for_each_pair(PyObject* seq, const char* what, F&& f) {
  PyObject* fast = PySequence_Fast(seq, what);
  if (!fast) return false;
  bool ok = true;
  for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(fast); ++k) {
    Py_ssize_t a;
    int b;
    ok = PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, k), "ni", &a, &b) && f(a, b);
  }
  Py_DECREF(fast);
  return ok;
}

// (index, bits) of each scalar parameter passed through: its spec becomes PassInt or PassFloat.
bool parse_passed(PyObject* passed, Plan& plan) {
  if (passed == Py_None) return true;
  return for_each_pair(passed, "passed must be a sequence", [&](Py_ssize_t i, int bits) {
    bool ok = i >= 0 && i < static_cast<Py_ssize_t>(plan.ins.size()) && (bits == 32 || bits == 64);
    InputSpec& s = plan.ins[ok ? i : 0];
    if (ok && s.kind == Kind::Int) {
      s.kind = Kind::PassInt;
      s.ivalue = int_class(s.ivalue);
      s.bits = bits;
    } else if (ok && s.kind == Kind::Float) {
      s.kind = Kind::PassFloat;
    } else {
      PyErr_SetString(PyExc_ValueError, "a passed scalar names no int or float input");
      return false;
    }
    return true;
  });
}

bool parse_device(PyObject* obj, c10::Device& out) {
  if (!THPDevice_Check(obj)) {
    PyErr_SetString(PyExc_TypeError, "expected a torch.device");
    return false;
  }
  out = reinterpret_cast<THPDevice*>(obj)->device;
  return true;
}

// Whether slot `s` names an argument of the launch tuple `tmpl` other than its stream
// (item `pos`, or item `sub` of the tuple there).
bool slot_in(const Slot& s, PyObject* tmpl, Py_ssize_t stream_pos) {
  if (s.pos < 0 || s.pos >= PyTuple_GET_SIZE(tmpl) || s.pos == stream_pos) return false;
  if (s.sub < 0) return true;
  PyObject* inner = PyTuple_GET_ITEM(tmpl, s.pos);
  return PyTuple_Check(inner) && s.sub < PyTuple_GET_SIZE(inner);
}

// A Triton launch's (pos, sub, input index) slots of passed scalar parameters.
bool parse_values(PyObject* values, PyObject* tmpl, Py_ssize_t stream_pos, Plan& plan) {
  PyObject* fv = PySequence_Fast(values, "values must be a sequence");
  if (!fv) return false;
  for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(fv); ++k) {
    Slot s;
    s.offset = 0;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fv, k), "nni", &s.pos, &s.sub, &s.src)) {
      Py_DECREF(fv);
      return false;
    }
    bool ok = slot_in(s, tmpl, stream_pos) && s.src >= 0 && s.src < static_cast<int>(plan.ins.size()) &&
              (plan.ins[s.src].kind == Kind::PassInt || plan.ins[s.src].kind == Kind::PassFloat);
    if (!ok) {
      PyErr_SetString(PyExc_ValueError, "a value slot names no argument or no passed scalar");
      Py_DECREF(fv);
      return false;
    }
    plan.launches.back().values.push_back(s);
  }
  Py_DECREF(fv);
  return true;
}

// ("torch", fn, values, kwnames or None, tensors, op), tensors: (pos, src, dtype, sizes, strides,
// offset). An `op` other than 0 says the call is `fn(a, b[, c], out=d)` of that ATen op, with
// every value a tensor: it is then made through ATen, without Python's argument parsing.
// Whether the kernel binary has exactly these parameter sizes, then at most two 8-byte
// ones (Triton's scratch pointers, passed null): how many those are, or -1.
int check_params(uint64_t function, const std::vector<size_t>& sizes) {
  const CudaApi& api = cuda();
  void* f = reinterpret_cast<void*>(static_cast<uintptr_t>(function));
  size_t offset = 0, size = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (api.param_info(f, i, &offset, &size) != 0 || size != sizes[i]) return -1;
  }
  int extra = 0;
  for (; extra <= 2; ++extra) {
    if (api.param_info(f, sizes.size() + extra, &offset, &size) != 0) return extra;
    if (size != 8) return -1;
  }
  return -1;
}

// A Triton launch's driver descriptor (driver_launch / replay._Planner):
// (function, (gx, gy, gz), block, shared, words, sizes, pointers, values, owner): owner
// keeps the function loaded, and is held. Malformed: false with ValueError. Well-formed
// but not usable here (no libcuda, no function or owner, or the binary's parameters
// differ): true, and the launch keeps Triton's launcher.
bool parse_driver(PyObject* desc, Launch& l, const Plan& plan, Py_ssize_t n_in, Py_ssize_t n_alloc) {
  unsigned long long function;
  unsigned gx, gy, gz, block, shared;
  PyObject *words, *sizes, *pointers, *values, *owner;
  if (!PyArg_ParseTuple(desc, "K(III)IIOOOOO", &function, &gx, &gy, &gz, &block, &shared, &words, &sizes, &pointers,
                        &values, &owner))
    return false;
  DriverLaunch d;
  d.function = function;
  d.grid[0] = gx;
  d.grid[1] = gy;
  d.grid[2] = gz;
  d.block = block;
  d.shared = shared;
  std::vector<int64_t> w, sz;
  if (!int_vector(sizes, sz)) return false;
  PyObject* fw = PySequence_Fast(words, "driver words must be a sequence");
  if (!fw) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fw); ++i) {
    unsigned long long v = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(fw, i));
    if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      Py_DECREF(fw);
      return false;
    }
    d.words.push_back(v);
  }
  Py_DECREF(fw);
  bool ok = d.words.size() == sz.size() && block > 0;
  std::vector<size_t> psizes;
  for (int64_t v : sz) {
    ok = ok && (v == 4 || v == 8);
    psizes.push_back(static_cast<size_t>(v));
  }
  for (int which = 0; ok && which < 2; ++which) {
    PyObject* f = PySequence_Fast(which == 0 ? pointers : values, "driver slots must be a sequence");
    if (!f) return false;
    for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(f); ++k) {
      Py_ssize_t param;
      int src;
      long long offset;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(f, k), "niL", &param, &src, &offset)) {
        Py_DECREF(f);
        return false;
      }
      ok = param >= 0 && static_cast<size_t>(param) < d.words.size();
      if (ok && which == 0) {  // a pointer: 8 bytes, from an input tensor or an allocation
        ok = psizes[param] == 8 && (src >= 0 ? src < n_in && plan.ins[src].kind == Kind::Tensor : -src - 1 < n_alloc);
        d.pointers.push_back({static_cast<size_t>(param), src, offset});
      } else if (ok) {  // a passed scalar: its type code fits the parameter's size
        ok = src >= 0 && src < n_in && (plan.ins[src].kind == Kind::PassInt || plan.ins[src].kind == Kind::PassFloat) &&
             offset >= kI32 && offset <= kF64 &&
             psizes[param] == ((offset == kI32 || offset == kU32 || offset == kF32) ? 4u : 8u) &&
             (plan.ins[src].kind == Kind::PassFloat) == (offset == kF32 || offset == kF64);
        d.values.push_back({static_cast<size_t>(param), src, offset});
      }
    }
    Py_DECREF(f);
  }
  if (!ok) {
    PyErr_SetString(PyExc_ValueError, "a driver launch is malformed");
    return false;
  }
  if (!cuda().ok || d.function == 0 || owner == Py_None) return true;
  int extra = check_params(d.function, psizes);
  if (extra < 0) return true;
  d.words.resize(d.words.size() + extra, 0);
  Py_INCREF(owner);
  d.owner = owner;
  l.driver = std::move(d);
  l.use_driver = true;
  return true;
}

bool parse_torch_call(PyObject* entry, Plan& plan, Py_ssize_t n_in, Py_ssize_t n_alloc) {
  const char* tag;
  PyObject *fn, *values, *kwnames, *tensors, *results = Py_None;
  int op;
  if (!PyArg_ParseTuple(entry, "sOO!OOi|O", &tag, &fn, &PyTuple_Type, &values, &kwnames, &tensors, &op, &results))
    return false;
  Py_ssize_t n = PyTuple_GET_SIZE(values);
  if (std::strcmp(tag, "torch") != 0 || !PyCallable_Check(fn) ||
      (kwnames != Py_None && (!PyTuple_Check(kwnames) || PyTuple_GET_SIZE(kwnames) > n)) ||
      (op != kGeneric && (op < kAddmm || op > kMatmul || n != (op == kAddmm ? 4 : 3) ||
                          PySequence_Size(tensors) != n || kwnames == Py_None || PyTuple_GET_SIZE(kwnames) != 1))) {
    PyErr_SetString(PyExc_ValueError, "a torch call is (\"torch\", fn, values, kwnames, tensors, op)");
    return false;
  }
  Launch l;
  l.torch_call = true;
  l.op = op;
  Py_INCREF(fn);
  Py_INCREF(values);
  l.fn = fn;
  l.tmpl = values;
  if (kwnames != Py_None) {
    Py_INCREF(kwnames);
    l.kwnames = kwnames;
  }
  plan.launches.push_back(l);  // owns the references from here on
  PyObject* ft = PySequence_Fast(tensors, "tensors must be a sequence");
  if (!ft) return false;
  for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(ft); ++k) {
    TensorSlot ts;
    PyObject *dtype, *sizes, *strides;
    long long offset;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(ft, k), "niOOOL", &ts.pos, &ts.src, &dtype, &sizes, &strides,
                          &offset)) {
      Py_DECREF(ft);
      return false;
    }
    ts.offset = offset;
    bool ok = THPDtype_Check(dtype) && int_vector(sizes, ts.sizes) && int_vector(strides, ts.strides) &&
              ts.sizes.size() == ts.strides.size() && ts.pos >= 0 && ts.pos < n &&
              (ts.src >= 0 ? ts.src < n_in && plan.ins[ts.src].kind == Kind::Tensor : -ts.src - 1 < n_alloc);
    if (!ok) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a torch call's tensor names no source");
      Py_DECREF(ft);
      return false;
    }
    ts.dtype = reinterpret_cast<THPDtype*>(dtype)->scalar_type;
    plan.launches.back().tensors.push_back(std::move(ts));
  }
  Py_DECREF(ft);
  if (results == Py_None) return true;
  if (op != kGeneric) {
    PyErr_SetString(PyExc_ValueError, "an ATen out= call binds no results");
    return false;
  }
  return for_each_pair(results, "results must be a sequence", [&](Py_ssize_t item, int j) {
    if (item < -1 || j < 0 || j >= n_alloc || !plan.allocs[j].bound) {
      PyErr_SetString(PyExc_ValueError, "a torch call's result names no bound allocation");
      return false;
    }
    plan.launches.back().results.emplace_back(item, j);
    return true;
  });
}

// ("alloc", j): allocation j is made here; ("free", src): the source (as Slot::src) is
// dropped here (an input only where the executor owns the call's references: `call_boxed`).
bool parse_step(PyObject* entry, const char* tag, Plan& plan, Py_ssize_t n_in, Py_ssize_t n_alloc) {
  const char* t;
  int target;
  if (!PyArg_ParseTuple(entry, "si", &t, &target)) return false;
  Launch l;
  bool ok;
  if (std::strcmp(tag, "alloc") == 0) {
    l.action = kAllocate;
    ok = target >= 0 && target < n_alloc && !plan.allocs[target].bound && !plan.allocs[target].staged;
    if (ok) plan.allocs[target].staged = true;
  } else {
    l.action = kRelease;
    ok = target >= 0 ? target < n_in && plan.ins[target].kind == Kind::Tensor : -target - 1 < n_alloc;
  }
  if (!ok) {
    PyErr_Format(PyExc_ValueError, "a %s step names no source it can take", tag);
    return false;
  }
  l.target = target;
  plan.launches.push_back(l);
  return true;
}

// Whether every step of the plan takes only sources that are live there: an input until
// its ("free", i) step, an allocation from its ("alloc", j) step (from the start if it has
// none) or from the torch call that returns it (a bound one) until its ("free", -j - 1);
// each bound allocation bound once; the outputs' sources live at the end. Else ValueError.
bool check_order(const Plan& plan) {
  const size_t n_alloc = plan.allocs.size();
  std::vector<char> in_live(plan.ins.size(), 1), state(n_alloc, 0);  // state: 0 not yet, 1 live, 2 freed
  for (size_t j = 0; j < n_alloc; ++j) state[j] = plan.allocs[j].staged || plan.allocs[j].bound ? 0 : 1;
  auto live = [&](int src) { return src >= 0 ? in_live[src] != 0 : state[-src - 1] == 1; };
  size_t k = 0;
  auto fail = [&](const char* what) {
    PyErr_Format(PyExc_ValueError, "a plan's step %zu %s", k, what);
    return false;
  };
  for (; k < plan.launches.size(); ++k) {
    const Launch& l = plan.launches[k];
    if (l.action == kAllocate) {  // (once: `parse_step`)
      state[l.target] = 1;
      continue;
    }
    if (l.action == kRelease) {
      if (!live(l.target)) return fail("frees a source that is not live");
      if (l.target >= 0) in_live[l.target] = 0;
      else state[-l.target - 1] = 2;
      continue;
    }
    for (const auto& s : l.slots)
      if (!live(s.src)) return fail("launches on a source that is not live");
    for (const auto& p : l.driver.pointers)
      if (!live(p.src)) return fail("launches on a source that is not live");
    for (const auto& ts : l.tensors)
      if (!live(ts.src)) return fail("calls torch on a source that is not live");
    for (const auto& r : l.results) {
      if (state[r.second] != 0) return fail("binds an allocation twice");
      state[r.second] = 1;
    }
  }
  for (const auto& o : plan.outs) {
    if ((o.kind == 0 || o.kind == 2) ? !in_live[o.index] : state[o.index] != 1) {
      PyErr_SetString(PyExc_ValueError, "an output's source is not live at the end of the plan");
      return false;
    }
  }
  return true;
}

bool parse_plan(PyObject* allocs, PyObject* launches, PyObject* outs, Plan& plan) {
  Py_ssize_t n_in = static_cast<Py_ssize_t>(plan.ins.size());
  PyObject* fa = PySequence_Fast(allocs, "allocs must be a sequence");
  if (!fa) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fa); ++i) {
    PyObject *sizes, *strides, *dtype, *device;
    PyObject* entry = PySequence_Fast_GET_ITEM(fa, i);
    Alloc a;
    bool parsed;
    if (PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) == 6) {  // ("result", sizes, strides, dtype, device, offset)
      const char* tag;
      long long offset;
      parsed = PyArg_ParseTuple(entry, "sOOOOL", &tag, &sizes, &strides, &dtype, &device, &offset);
      if (parsed && std::strcmp(tag, "result") != 0) {
        PyErr_SetString(PyExc_ValueError, "a bound allocation is (\"result\", sizes, strides, dtype, device, offset)");
        parsed = false;
      }
      a.bound = true;
      a.offset = offset;
    } else {
      parsed = PyArg_ParseTuple(entry, "OOOO", &sizes, &strides, &dtype, &device);
    }
    if (!parsed) {
      Py_DECREF(fa);
      return false;
    }
    if (!THPDtype_Check(dtype)) {
      PyErr_SetString(PyExc_TypeError, "an allocation's dtype must be a torch.dtype");
      Py_DECREF(fa);
      return false;
    }
    a.dtype = reinterpret_cast<THPDtype*>(dtype)->scalar_type;
    if (!int_vector(sizes, a.sizes) || !int_vector(strides, a.strides) || !parse_device(device, a.device) ||
        a.sizes.size() != a.strides.size()) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "an allocation's sizes and strides differ in rank");
      Py_DECREF(fa);
      return false;
    }
    plan.allocs.push_back(std::move(a));
  }
  Py_DECREF(fa);
  Py_ssize_t n_alloc = static_cast<Py_ssize_t>(plan.allocs.size());

  PyObject* fl = PySequence_Fast(launches, "launches must be a sequence");
  if (!fl) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fl); ++i) {
    PyObject* entry = PySequence_Fast_GET_ITEM(fl, i);
    if (PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) > 0 && PyUnicode_Check(PyTuple_GET_ITEM(entry, 0))) {
      const char* tag = PyUnicode_AsUTF8(PyTuple_GET_ITEM(entry, 0));
      if (!tag) {
        Py_DECREF(fl);
        return false;
      }
      bool ok = std::strcmp(tag, "alloc") == 0 || std::strcmp(tag, "free") == 0
                    ? parse_step(entry, tag, plan, n_in, n_alloc)
                    : parse_torch_call(entry, plan, n_in, n_alloc);
      if (!ok) {
        Py_DECREF(fl);
        return false;
      }
      continue;
    }
    PyObject *fn, *tmpl, *slots, *values = Py_None, *driver = Py_None;
    Py_ssize_t stream_pos;
    if (!PyArg_ParseTuple(entry, "OO!On|OO", &fn, &PyTuple_Type, &tmpl, &slots, &stream_pos, &values, &driver)) {
      Py_DECREF(fl);
      return false;
    }
    Launch l;
    Py_INCREF(fn);
    Py_INCREF(tmpl);
    l.fn = fn;
    l.tmpl = tmpl;
    l.stream_pos = stream_pos;
    plan.launches.push_back(l);  // owns the references from here on
    Py_ssize_t size = PyTuple_GET_SIZE(tmpl);
    if (stream_pos < 0 || stream_pos >= size) {
      PyErr_SetString(PyExc_ValueError, "a launch's stream slot is outside its arguments");
      Py_DECREF(fl);
      return false;
    }
    PyObject* fs = PySequence_Fast(slots, "slots must be a sequence");
    if (!fs) {
      Py_DECREF(fl);
      return false;
    }
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(fs); ++k) {
      Slot s;
      long long offset;
      if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fs, k), "nniL", &s.pos, &s.sub, &s.src, &offset)) {
        Py_DECREF(fs);
        Py_DECREF(fl);
        return false;
      }
      s.offset = offset;
      bool ok = slot_in(s, tmpl, stream_pos) && (s.src >= 0 ? s.src < n_in : -s.src - 1 < n_alloc);
      if (ok && s.src >= 0) ok = plan.ins[s.src].kind == Kind::Tensor;
      if (!ok) {
        PyErr_SetString(PyExc_ValueError, "a launch slot names no argument or no source");
        Py_DECREF(fs);
        Py_DECREF(fl);
        return false;
      }
      plan.launches.back().slots.push_back(s);
    }
    Py_DECREF(fs);
    if (values != Py_None && !parse_values(values, tmpl, stream_pos, plan)) {
      Py_DECREF(fl);
      return false;
    }
    if (driver != Py_None && !parse_driver(driver, plan.launches.back(), plan, n_in, n_alloc)) {
      Py_DECREF(fl);
      return false;
    }
  }
  Py_DECREF(fl);

  PyObject* fo = PySequence_Fast(outs, "outs must be a sequence");
  if (!fo) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fo); ++i) {
    Output o;
    PyObject *sizes = nullptr, *strides = nullptr;
    long long offset = 0;
    PyObject* dtype = nullptr;
    if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fo, i), "ii|OOLO", &o.kind, &o.index, &sizes, &strides, &offset,
                          &dtype)) {
      Py_DECREF(fo);
      return false;
    }
    o.offset = offset;
    bool ok = (o.kind == 0 || o.kind == 2) ? (o.index >= 0 && o.index < n_in && plan.ins[o.index].kind == Kind::Tensor)
                                           : ((o.kind == 1 || o.kind == 3) && o.index >= 0 && o.index < n_alloc);
    if (ok && (o.kind == 2 || o.kind == 3)) {
      ok = sizes && strides && int_vector(sizes, o.sizes) && int_vector(strides, o.strides) &&
           o.sizes.size() == o.strides.size();
    }
    if (ok && o.kind == 3) {
      ok = dtype && THPDtype_Check(dtype);
      if (ok) o.dtype = reinterpret_cast<THPDtype*>(dtype)->scalar_type;
    }
    if (!ok) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "an output names no input or allocation");
      Py_DECREF(fo);
      return false;
    }
    plan.outs.push_back(std::move(o));
  }
  Py_DECREF(fo);
  return check_order(plan);
}

void insert(Table* tab, std::shared_ptr<Plan> plan) {
  if (tab->plans.size() >= tab->max_plans) tab->plans.pop_back();  // the least recently matched
  tab->plans.insert(tab->plans.begin(), std::move(plan));
}

// The bytes from a tensor's data pointer that its elements span (sizes and strides are
// the signature's): 0 without elements.
int64_t span_bytes(const InputSpec& s) {
  int64_t last = 0;
  for (size_t d = 0; d < s.sizes.size(); ++d) {
    if (s.sizes[d] == 0) return 0;
    last += (s.sizes[d] - 1) * s.strides[d];
  }
  return (last + 1) * static_cast<int64_t>(c10::elementSize(s.dtype));
}

// The inputs a plan writes (in-place outputs) and every tensor input's span: a replay then
// checks that no written input shares memory with another input (`overlapping`).
bool parse_written(PyObject* written, Plan& plan) {
  if (written == Py_None) return true;
  std::vector<int64_t> idx;
  if (!int_vector(written, idx)) return false;
  for (int64_t i : idx) {
    if (i < 0 || i >= static_cast<int64_t>(plan.ins.size()) || plan.ins[i].kind != Kind::Tensor) {
      PyErr_SetString(PyExc_ValueError, "a written input names no tensor input");
      return false;
    }
    plan.written.push_back(static_cast<int>(i));
  }
  if (!plan.written.empty()) {
    plan.spans.resize(plan.ins.size(), 0);
    for (size_t i = 0; i < plan.ins.size(); ++i)
      if (plan.ins[i].kind == Kind::Tensor) plan.spans[i] = span_bytes(plan.ins[i]);
  }
  return true;
}

// Whether an input the plan writes shares memory with another tensor input of this call
// (data pointers `ptrs`): such a call is not replayed; the program runs and refuses it
// (`host_runtime.check_in_place`). A written input that overlaps itself is a matter of
// its sizes and strides, which the signature fixes: the recorded call passed that check.
bool overlapping(const Plan& plan, const std::vector<uintptr_t>& ptrs) {
  for (int w : plan.written) {
    uintptr_t lo = ptrs[w], hi = lo + static_cast<uintptr_t>(plan.spans[w]);
    if (lo == hi) continue;
    for (size_t j = 0; j < plan.ins.size(); ++j) {
      if (static_cast<int>(j) == w || plan.ins[j].kind != Kind::Tensor || plan.spans[j] == 0) continue;
      if (plan.ins[j].device != plan.ins[w].device) continue;
      uintptr_t jlo = ptrs[j], jhi = jlo + static_cast<uintptr_t>(plan.spans[j]);
      if (jlo < hi && lo < jhi) return true;
    }
  }
  return false;
}

// The (input, base, delta) triples of `add`'s `aliases` (`Alias`): tensor inputs, each
// input named once, no base itself an alias.
bool parse_aliases(PyObject* aliases, Plan& plan) {
  if (aliases == Py_None) return true;
  PyObject* fa = PySequence_Fast(aliases, "aliases must be a sequence");
  if (!fa) return false;
  const int n = static_cast<int>(plan.ins.size());
  std::vector<char> named(n, 0);
  bool ok = true;
  for (Py_ssize_t k = 0; ok && k < PySequence_Fast_GET_SIZE(fa); ++k) {
    Alias a;
    long long delta;
    ok = PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fa, k), "iiL", &a.input, &a.base, &delta) != 0;
    a.delta = delta;
    ok = ok && a.input >= 0 && a.input < n && a.base >= 0 && a.base < n && a.input != a.base &&
         plan.ins[a.input].kind == Kind::Tensor && plan.ins[a.base].kind == Kind::Tensor && !named[a.input];
    if (ok) {
      named[a.input] = 1;
      plan.aliases.push_back(a);
    }
  }
  for (const Alias& a : plan.aliases) ok = ok && !named[a.base];
  Py_DECREF(fa);
  if (!ok && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "an alias names no tensor input, or a base that is an alias");
  return ok;
}

// add(table, inputs, device_index, allocs, launches, outs[, passed[, written[, aliases]]]): a
// replayable signature; `written`: the tensor inputs that the program writes (in-place
// outputs); `aliases`: the inputs that share another's storage (`Alias`).
PyObject* add(PyObject*, PyObject* args) {
  PyObject *cap, *inputs, *allocs, *launches, *outs, *passed = Py_None, *written = Py_None, *aliases = Py_None;
  long device_index;
  if (!PyArg_ParseTuple(args, "OOlOOO|OOO", &cap, &inputs, &device_index, &allocs, &launches, &outs, &passed,
                        &written, &aliases))
    return nullptr;
  Table* tab = table_of(cap);
  if (!tab) return nullptr;
  auto plan = std::make_shared<Plan>();
  plan->device_index = device_index;
  plan->replay = true;
  if (!parse_inputs(inputs, *plan) || !parse_passed(passed, *plan) || !parse_plan(allocs, launches, outs, *plan) ||
      !parse_written(written, *plan) || !parse_aliases(aliases, *plan))
    return nullptr;
  insert(tab, std::move(plan));
  Py_RETURN_NONE;
}

// refuse(table, inputs, device_index): a signature whose calls always run the program.
PyObject* refuse(PyObject*, PyObject* args) {
  PyObject *cap, *inputs;
  long device_index;
  if (!PyArg_ParseTuple(args, "OOl", &cap, &inputs, &device_index)) return nullptr;
  Table* tab = table_of(cap);
  if (!tab) return nullptr;
  auto plan = std::make_shared<Plan>();
  plan->device_index = device_index;
  if (!parse_inputs(inputs, *plan)) return nullptr;
  insert(tab, std::move(plan));
  Py_RETURN_NONE;
}

PyObject* size(PyObject*, PyObject* cap) {
  Table* tab = table_of(cap);
  if (!tab) return nullptr;
  Py_ssize_t replayable = 0;
  for (auto& p : tab->plans) replayable += p->replay;
  return Py_BuildValue("nn", static_cast<Py_ssize_t>(tab->plans.size()), replayable);
}

// driver_launches(table) -> how many recorded Triton launches go through the CUDA driver.
PyObject* driver_launches(PyObject*, PyObject* cap) {
  Table* tab = table_of(cap);
  if (!tab) return nullptr;
  Py_ssize_t n = 0;
  for (auto& p : tab->plans)
    for (auto& l : p->launches) n += l.use_driver;
  return PyLong_FromSsize_t(n);
}

PyObject* clear(PyObject*, PyObject* cap) {
  Table* tab = table_of(cap);
  if (!tab) return nullptr;
  tab->plans.clear();
  Py_RETURN_NONE;
}

// A CUDA buffer straight from torch's CUDA allocator (what `at::empty_strided` does for
// CUDA, without the dispatcher: about a quarter less host time an allocation on the H200
// machine); any other device through `at::empty_strided`.
at::Tensor allocate(const Alloc& a) {
  if (a.device.is_cuda()) {
    c10::DeviceGuard guard(a.device);
    return at::detail::empty_strided_generic(a.sizes, a.strides, c10::GetAllocator(c10::DeviceType::CUDA),
                                             c10::DispatchKeySet(c10::DispatchKey::CUDA), a.dtype);
  }
  return at::empty_strided(a.sizes, a.strides, at::TensorOptions().dtype(a.dtype).device(a.device));
}

// Puts `obj` (a new reference, stolen; null: failure) at the slot's place in `targs`, a
// fresh copy of `tmpl` (a nested tuple is copied at its first slot).
bool set_slot(PyObject* targs, PyObject* tmpl, const Slot& s, PyObject* obj) {
  if (!obj) return false;
  if (s.sub < 0) {
    Py_DECREF(PyTuple_GET_ITEM(targs, s.pos));
    PyTuple_SET_ITEM(targs, s.pos, obj);
    return true;
  }
  PyObject* inner = PyTuple_GET_ITEM(targs, s.pos);
  if (inner == PyTuple_GET_ITEM(tmpl, s.pos)) {  // first slot in it: a copy of its own
    // (a new tuple: PyTuple_GetSlice of a whole tuple returns the tuple itself, and writing
    // into it would change the template, a tuple other code may share)
    Py_ssize_t size = PyTuple_GET_SIZE(inner);
    PyObject* copy = PyTuple_New(size);
    if (!copy) {
      Py_DECREF(obj);
      return false;
    }
    for (Py_ssize_t i = 0; i < size; ++i) {
      PyObject* item = PyTuple_GET_ITEM(inner, i);
      Py_INCREF(item);
      PyTuple_SET_ITEM(copy, i, item);
    }
    Py_DECREF(inner);
    PyTuple_SET_ITEM(targs, s.pos, copy);
    inner = copy;
  }
  Py_DECREF(PyTuple_GET_ITEM(inner, s.sub));
  PyTuple_SET_ITEM(inner, s.sub, obj);
  return true;
}

PyObject* pointer(uintptr_t base, int64_t offset) {
  return PyLong_FromUnsignedLongLong(static_cast<unsigned long long>(base + offset));
}

// A torch call's tensor argument over this call's source (the offset is from the source's
// data pointer: an allocation's storage offset is 0, a bound result's its own).
at::Tensor view_of(const TensorSlot& ts, PyObject* inputs, const std::vector<at::Tensor>& bufs) {
  at::Tensor base = ts.src >= 0 ? THPVariable_Unpack(PyTuple_GET_ITEM(inputs, ts.src)) : bufs[-ts.src - 1];
  if (base.scalar_type() != ts.dtype) base = base.view(ts.dtype);
  return at::as_strided(base, ts.sizes, ts.strides, base.storage_offset() + ts.offset);
}

// Runs a recorded torch call with its tensor arguments viewed afresh over this call's
// inputs and allocations: its result (a new reference; None for an ATen out= op), or null
// with an exception set if it raised.
PyObject* run_torch_call(const Launch& l, PyObject* inputs, const std::vector<at::Tensor>& bufs) {
  Py_ssize_t n = PyTuple_GET_SIZE(l.tmpl);
  std::vector<PyObject*> values(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    values[i] = PyTuple_GET_ITEM(l.tmpl, i);
    Py_INCREF(values[i]);
  }
  bool ok = true;
  if (l.op != kGeneric) {  // every value a tensor, in order: ATen's out= op itself
    for (PyObject* v : values) Py_DECREF(v);
    try {
      std::vector<at::Tensor> t(n);
      for (const auto& ts : l.tensors) t[ts.pos] = view_of(ts, inputs, bufs);
      if (l.op == kAddmm) at::addmm_out(t[3], t[0], t[1], t[2]);
      else if (l.op == kMm) at::mm_out(t[2], t[0], t[1]);
      else at::matmul_out(t[2], t[0], t[1]);
    } catch (const std::exception& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
      return nullptr;
    }
    Py_RETURN_NONE;
  }
  try {
    for (const auto& ts : l.tensors) {
      PyObject* obj = THPVariable_Wrap(view_of(ts, inputs, bufs));
      if (!obj) {
        ok = false;
        break;
      }
      Py_DECREF(values[ts.pos]);
      values[ts.pos] = obj;
    }
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    ok = false;
  }
  PyObject* r = nullptr;
  if (ok) {
    Py_ssize_t nkw = l.kwnames ? PyTuple_GET_SIZE(l.kwnames) : 0;
    r = PyObject_Vectorcall(l.fn, values.data(), static_cast<size_t>(n - nkw), l.kwnames);
  }
  for (PyObject* v : values) Py_DECREF(v);
  return r;
}

// Makes the tensors a torch call returned (`r`) the allocations it binds, each checked
// against the layout recorded (a functional ATen op returns the same layout for the same
// signature; one that does not is an error, and the plan is not replayed again); false
// with an exception set otherwise.
bool bind_results(const Launch& l, PyObject* r, Plan& plan, std::vector<at::Tensor>& bufs,
                  std::vector<uintptr_t>& bptrs) {
  for (const auto& [item, j] : l.results) {
    PyObject* x = r;
    if (item >= 0) {
      x = (PyTuple_Check(r) || PyList_Check(r)) && item < PySequence_Fast_GET_SIZE(r)
              ? PySequence_Fast_GET_ITEM(r, item)
              : nullptr;
    }
    const Alloc& a = plan.allocs[j];
    bool same = x && THPVariable_Check(x);
    if (same) {
      const at::Tensor& t = THPVariable_Unpack(x);
      same = t.defined() && t.layout() == c10::kStrided && t.has_storage() && t.scalar_type() == a.dtype &&
             t.device() == a.device && same_ints(t.sizes(), a.sizes) && same_ints(t.strides(), a.strides) &&
             t.storage_offset() == a.offset;
      if (same) {
        bufs[j] = t;
        bptrs[j] = reinterpret_cast<uintptr_t>(t.data_ptr());
      }
    }
    if (!same) {
      plan.replay = false;  // later calls with this signature run the program
      PyErr_Format(PyExc_RuntimeError,
                   "replay: %R returned a tensor of another layout than when its call was recorded (result %zd)", l.fn,
                   item);
      return false;
    }
  }
  return true;
}

// Makes the primary context of CUDA device `device` current in this thread unless a
// context of that device is (as Triton's launcher does before it launches).
bool ensure_context(long device) {
  const CudaApi& api = cuda();
  void* ctx = nullptr;
  int current = -1, handle = -1;
  if (api.device_get(&handle, static_cast<int>(device)) != 0) return false;
  if (api.ctx_get_current(&ctx) == 0 && ctx && api.ctx_get_device(&current) == 0 && current == handle) return true;
  return api.primary_retain(&ctx, handle) == 0 && api.ctx_set_current(ctx) == 0;
}

// Launches a driver launch with this call's pointers, passed scalars and stream; false
// with RuntimeError set if the driver refused.
bool launch_driver(const DriverLaunch& d, PyObject* inputs, const std::vector<uintptr_t>& ptrs,
                   const std::vector<uintptr_t>& bptrs, uint64_t stream, long device) {
  if (static_cast<uint64_t>(d.grid[0]) * d.grid[1] * d.grid[2] == 0) return true;  // (as Triton: nothing to run)
  const size_t n = d.words.size();
  uint64_t small[64];
  void* small_params[64];
  std::vector<uint64_t> big;
  std::vector<void*> big_params;
  uint64_t* w = small;
  void** params = small_params;
  if (n > 64) {
    big.resize(n);
    big_params.resize(n);
    w = big.data();
    params = big_params.data();
  }
  std::memcpy(w, d.words.data(), n * sizeof(uint64_t));
  for (const auto& p : d.pointers) w[p.param] = (p.src >= 0 ? ptrs[p.src] : bptrs[-p.src - 1]) + p.offset;
  for (const auto& v : d.values) {
    PyObject* x = PyTuple_GET_ITEM(inputs, v.src);
    uint64_t bits = 0;
    if (v.offset == kF32 || v.offset == kF64) {
      double value = PyFloat_AsDouble(x);
      if (value == -1.0 && PyErr_Occurred()) return false;
      if (v.offset == kF32) {
        float f = static_cast<float>(value);
        std::memcpy(&bits, &f, sizeof f);
      } else {
        std::memcpy(&bits, &value, sizeof value);
      }
    } else {
      long long value = PyLong_AsLongLong(x);  // (its class was matched: it fits the parameter)
      if (value == -1 && PyErr_Occurred()) return false;
      if (v.offset == kI32 || v.offset == kU32) {
        uint32_t u = static_cast<uint32_t>(value);
        bits = u;
      } else {
        bits = static_cast<uint64_t>(value);
      }
    }
    w[v.param] = bits;
  }
  for (size_t i = 0; i < n; ++i) params[i] = &w[i];
  const CudaApi& api = cuda();
  CUres res = ensure_context(device) ? 0 : 1;
  if (res == 0) {
    res = api.launch(reinterpret_cast<void*>(static_cast<uintptr_t>(d.function)), d.grid[0], d.grid[1], d.grid[2],
                     d.block, 1, 1, d.shared, reinterpret_cast<void*>(static_cast<uintptr_t>(stream)), params, nullptr);
  }
  if (res != 0) {
    const char* what = nullptr;
    if (api.error_string(res, &what) != 0 || !what) what = "unknown error";
    PyErr_Format(PyExc_RuntimeError, "Triton Error [CUDA]: %s (a replayed kernel launch)", what);
    return false;
  }
  return true;
}

// Whether each input the plan names through another's pointer (`aliases`) shares that
// input's storage at the recorded distance in this call too (`inputs` already matched).
bool aliases_hold(const Plan& p, PyObject* inputs, const std::vector<uintptr_t>& ptrs) {
  for (const Alias& a : p.aliases) {
    if (static_cast<int64_t>(ptrs[a.input] - ptrs[a.base]) != a.delta) return false;
    const at::Tensor& x = THPVariable_Unpack(PyTuple_GET_ITEM(inputs, a.input));
    const at::Tensor& b = THPVariable_Unpack(PyTuple_GET_ITEM(inputs, a.base));
    if (x.storage().unsafeGetStorageImpl() != b.storage().unsafeGetStorageImpl()) return false;
  }
  return true;
}

// The plan whose signature `inputs` has (each tensor's data pointer in `ptrs`), moved one
// place toward the front; null if none.
std::shared_ptr<Plan> find_plan(Table* tab, PyObject* inputs, long device, std::vector<uintptr_t>& ptrs) {
  Py_ssize_t n = PyTuple_GET_SIZE(inputs);
  try {
    for (size_t k = 0; k < tab->plans.size(); ++k) {
      std::shared_ptr<Plan> p = tab->plans[k];
      if (static_cast<Py_ssize_t>(p->ins.size()) != n || p->device_index != device) continue;
      bool ok = true;
      for (Py_ssize_t i = 0; ok && i < n; ++i) ok = matches(p->ins[i], PyTuple_GET_ITEM(inputs, i), &ptrs[i]);
      if (ok) ok = aliases_hold(*p, inputs, ptrs);
      if (ok) {
        if (k > 0) std::swap(tab->plans[k], tab->plans[k - 1]);  // often matched moves to the front
        return p;
      }
    }
  } catch (const std::exception&) {
    // a tensor torch cannot describe here: the program runs and reports it
  }
  return nullptr;
}

// mark(table, inputs, token) -> bool: notes that the caller `token` checked this signature
// itself, so that `call(table, inputs, token)` replays it; False if no replayable plan has it.
PyObject* mark(PyObject*, PyObject* args) {
  PyObject *cap, *inputs;
  long long token;
  if (!PyArg_ParseTuple(args, "OO!L", &cap, &PyTuple_Type, &inputs, &token)) return nullptr;
  Table* tab = table_of(cap);
  if (!tab) return nullptr;
  long device = current_device(tab);
  if (device == -2) return nullptr;
  std::vector<uintptr_t> ptrs(PyTuple_GET_SIZE(inputs), 0);
  std::shared_ptr<Plan> plan = find_plan(tab, inputs, device, ptrs);
  if (!plan || !plan->replay) Py_RETURN_FALSE;
  if (std::find(plan->marks.begin(), plan->marks.end(), token) == plan->marks.end()) {
    if (plan->marks.size() >= 16) plan->marks.erase(plan->marks.begin());
    plan->marks.push_back(token);
  }
  Py_RETURN_TRUE;
}

// The stream to launch on: from torch's CUDA guard where the table may, else `get_stream`.
PyObject* current_stream(Table* tab, long device) {
  if (tab->native_cuda) {
    try {
      void* handle =
          cuda_guard()->getStream(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(device)))
              .native_handle();
      return PyLong_FromUnsignedLongLong(reinterpret_cast<uintptr_t>(handle));
    } catch (const std::exception&) {
      tab->native_cuda = false;  // (a torch whose streams have no native handle: the callables from now on)
    }
  }
  PyObject* dev_obj = PyLong_FromLong(device);
  if (!dev_obj) return nullptr;
  PyObject* stream = PyObject_CallOneArg(tab->get_stream, dev_obj);
  Py_DECREF(dev_obj);
  return stream;
}

// Launches a recorded Triton launch through Triton's launcher; false with an exception set.
bool launch_triton(const Launch& l, PyObject* inputs, const std::vector<uintptr_t>& ptrs,
                   const std::vector<uintptr_t>& bptrs, PyObject* stream) {
  Py_ssize_t size = PyTuple_GET_SIZE(l.tmpl);
  PyObject* targs = PyTuple_New(size);
  if (!targs) return false;
  for (Py_ssize_t i = 0; i < size; ++i) {
    PyObject* item = PyTuple_GET_ITEM(l.tmpl, i);
    Py_INCREF(item);
    PyTuple_SET_ITEM(targs, i, item);
  }
  for (const auto& s : l.slots) {
    if (!set_slot(targs, l.tmpl, s, pointer(s.src >= 0 ? ptrs[s.src] : bptrs[-s.src - 1], s.offset))) {
      Py_DECREF(targs);
      return false;
    }
  }
  for (const auto& s : l.values) {
    PyObject* v = PyTuple_GET_ITEM(inputs, s.src);
    Py_INCREF(v);
    if (!set_slot(targs, l.tmpl, s, v)) {
      Py_DECREF(targs);
      return false;
    }
  }
  Py_DECREF(PyTuple_GET_ITEM(targs, l.stream_pos));
  Py_INCREF(stream);
  PyTuple_SET_ITEM(targs, l.stream_pos, stream);
  PyObject* r = PyObject_Call(l.fn, targs, nullptr);
  Py_DECREF(targs);
  if (!r) return false;
  Py_DECREF(r);
  return true;
}

// The plan's outputs over this call's inputs and allocations.
PyObject* outputs_of(const Plan& plan, PyObject* inputs, const std::vector<at::Tensor>& bufs) {
  Py_ssize_t n_out = static_cast<Py_ssize_t>(plan.outs.size());
  PyObject* result = PyTuple_New(n_out);
  if (!result) return nullptr;
  std::vector<PyObject*> wrapped(bufs.size(), nullptr);  // borrowed from `result`
  try {
    for (Py_ssize_t i = 0; i < n_out; ++i) {
      const Output& o = plan.outs[i];
      PyObject* obj;
      if (o.kind == 0) {
        obj = PyTuple_GET_ITEM(inputs, o.index);
        Py_INCREF(obj);
      } else if (o.kind == 1) {
        if (wrapped[o.index]) {
          obj = wrapped[o.index];
          Py_INCREF(obj);
        } else {
          obj = wrapped[o.index] = THPVariable_Wrap(bufs[o.index]);
        }
      } else if (o.kind == 2) {
        const at::Tensor& t = THPVariable_Unpack(PyTuple_GET_ITEM(inputs, o.index));
        obj = THPVariable_Wrap(at::as_strided(t, o.sizes, o.strides, t.storage_offset() + o.offset));
      } else {
        at::Tensor base = bufs[o.index];
        if (base.scalar_type() != o.dtype) base = base.view(o.dtype);
        obj = THPVariable_Wrap(at::as_strided(base, o.sizes, o.strides, base.storage_offset() + o.offset));
      }
      if (!obj) {
        Py_DECREF(result);
        return nullptr;
      }
      PyTuple_SET_ITEM(result, i, obj);
    }
  } catch (const std::exception& e) {
    Py_DECREF(result);
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
  return result;
}

// Replays `plan` on `inputs` (data pointers `ptrs`): the outputs, None where an allocation
// made before the first step failed (the program then runs and reports it), or null with
// an exception set. `owned`: `inputs` is the executor's own tuple (`call_boxed`), whose
// donated items the plan's ("free", i) steps drop (else those steps do nothing).
PyObject* replay(Table* tab, Plan& plan, PyObject* inputs, const std::vector<uintptr_t>& ptrs, long device,
                 bool owned) {
  const size_t n_alloc = plan.allocs.size();
  std::vector<at::Tensor> bufs(n_alloc);
  std::vector<uintptr_t> bptrs(n_alloc, 0);
  try {
    for (size_t j = 0; j < n_alloc; ++j) {
      const Alloc& a = plan.allocs[j];
      if (a.staged || a.bound) continue;
      bufs[j] = allocate(a);
      bptrs[j] = reinterpret_cast<uintptr_t>(bufs[j].data_ptr());
    }
  } catch (const std::exception&) {
    Py_RETURN_NONE;  // the program runs instead, and reports the failure as it does
  }

  PyObject* stream = current_stream(tab, device);
  if (!stream) return nullptr;
  uint64_t stream_value = PyLong_Check(stream) ? PyLong_AsUnsignedLongLong(stream) : 0;
  if (stream_value == static_cast<uint64_t>(-1) && PyErr_Occurred()) PyErr_Clear();  // (used by driver launches only)

  bool ok = true;
  for (const auto& l : plan.launches) {
    if (l.action == kAllocate) {
      try {
        bufs[l.target] = allocate(plan.allocs[l.target]);
        bptrs[l.target] = reinterpret_cast<uintptr_t>(bufs[l.target].data_ptr());
      } catch (const std::exception& e) {  // (the program fails at the same allocation)
        PyErr_SetString(PyExc_RuntimeError, e.what());
        ok = false;
      }
    } else if (l.action == kRelease) {
      if (l.target < 0) {
        bufs[-l.target - 1] = at::Tensor();
      } else if (owned) {
        PyObject* x = PyTuple_GET_ITEM(inputs, l.target);
        Py_INCREF(Py_None);
        PyTuple_SET_ITEM(inputs, l.target, Py_None);
        Py_DECREF(x);
      }
    } else if (l.torch_call) {
      PyObject* r = run_torch_call(l, inputs, bufs);
      ok = r != nullptr && bind_results(l, r, plan, bufs, bptrs);
      Py_XDECREF(r);
    } else if (l.use_driver) {
      ok = launch_driver(l.driver, inputs, ptrs, bptrs, stream_value, device);
    } else {
      ok = launch_triton(l, inputs, ptrs, bptrs, stream);
    }
    if (!ok) break;
  }
  Py_DECREF(stream);
  if (!ok) return nullptr;
  return outputs_of(plan, inputs, bufs);
}

// 1 while the table's hook (a context variable) holds anything but None (`call` and
// `call_boxed` then answer False), 0 if not or without a hook, -1 with a Python error.
int hooked(const Table& tab) {
  if (!tab.hook) return 0;
  PyObject* value = nullptr;
  if (PyContextVar_Get(tab.hook, Py_None, &value) < 0) return -1;
  bool set = value != Py_None;
  Py_DECREF(value);
  return set ? 1 : 0;
}

// call(table, inputs[, token]) -> tuple of outputs | None (no signature, or one `token` did
// not mark) | False (refused, or inputs that share memory with one the plan writes)
PyObject* call(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 2 || nargs > 3 || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "call(table, inputs: tuple[, token: int])");
    return nullptr;
  }
  Table* tab = table_of(args[0]);
  if (!tab) return nullptr;
  PyObject* inputs = args[1];
  Py_ssize_t n = PyTuple_GET_SIZE(inputs);
  if (tab->plans.empty()) Py_RETURN_NONE;
  int hook = hooked(*tab);
  if (hook < 0) return nullptr;
  if (hook) Py_RETURN_FALSE;
  long device = current_device(tab);
  if (device == -2) return nullptr;

  std::vector<uintptr_t> ptrs(n, 0);
  std::shared_ptr<Plan> plan = find_plan(tab, inputs, device, ptrs);
  if (!plan) Py_RETURN_NONE;
  if (!plan->replay) Py_RETURN_FALSE;
  if (nargs == 3) {  // a caller that takes only signatures it marked
    long long token = PyLong_AsLongLong(args[2]);
    if (token == -1 && PyErr_Occurred()) return nullptr;
    if (std::find(plan->marks.begin(), plan->marks.end(), token) == plan->marks.end()) Py_RETURN_NONE;
  }
  if (!plan->written.empty() && overlapping(*plan, ptrs)) Py_RETURN_FALSE;  // the program refuses it
  return replay(tab, *plan, inputs, ptrs, device, false);
}

// call_boxed(table, args: list) -> tuple of outputs | None | False, as `call` on
// tuple(args); on a replay (a tuple, or an exception from it) it has emptied `args` and
// holds the only references it had, dropping each donated input at its ("free", i) step
// (AOTAutograd's boxed calling convention); on None or False `args` is left as it was.
PyObject* call_boxed(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyList_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "call_boxed(table, args: list)");
    return nullptr;
  }
  Table* tab = table_of(args[0]);
  if (!tab) return nullptr;
  if (tab->plans.empty()) Py_RETURN_NONE;
  int hook = hooked(*tab);
  if (hook < 0) return nullptr;
  if (hook) Py_RETURN_FALSE;
  long device = current_device(tab);
  if (device == -2) return nullptr;
  PyObject* inputs = PyList_AsTuple(args[1]);  // a tuple of our own: its items are ours to drop
  if (!inputs) return nullptr;
  std::vector<uintptr_t> ptrs(PyTuple_GET_SIZE(inputs), 0);
  std::shared_ptr<Plan> plan = find_plan(tab, inputs, device, ptrs);
  PyObject* answer = nullptr;
  if (!plan) answer = Py_None;
  else if (!plan->replay || (!plan->written.empty() && overlapping(*plan, ptrs))) answer = Py_False;
  if (answer) {
    Py_DECREF(inputs);
    Py_INCREF(answer);
    return answer;
  }
  if (PyList_SetSlice(args[1], 0, PyList_GET_SIZE(args[1]), nullptr) < 0) {
    Py_DECREF(inputs);
    return nullptr;
  }
  PyObject* r = replay(tab, *plan, inputs, ptrs, device, true);
  if (r == Py_None) {  // an allocation failed before the first step: the caller runs the program
    Py_DECREF(r);
    r = nullptr;
    if (PyList_SetSlice(args[1], 0, 0, inputs) < 0) {
      Py_DECREF(inputs);
      return nullptr;
    }
    Py_DECREF(inputs);
    Py_RETURN_NONE;
  }
  Py_DECREF(inputs);  // what the plan did not drop (inputs not donated, or returned)
  return r;
}

PyMethodDef kMethods[] = {
    {"new_table", new_table, METH_VARARGS,
     "new_table(get_device, get_stream, max_plans[, hook[, native_cuda]]) -> table"},
    {"add", add, METH_VARARGS, "add(table, inputs, device, allocs, launches, outs[, passed[, written]])"},
    {"refuse", refuse, METH_VARARGS, "refuse(table, inputs, device)"},
    {"call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(call)), METH_FASTCALL,
     "call(table, inputs[, token]) -> outputs | None | False"},
    {"call_boxed", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(call_boxed)), METH_FASTCALL,
     "call_boxed(table, args: list) -> outputs | None | False"},
    {"specs", specs, METH_O, "specs(inputs) -> the inputs' signature, for add and refuse"},
    {"mark", mark, METH_VARARGS, "mark(table, inputs, token) -> bool"},
    {"size", size, METH_O, "size(table) -> (signatures, replayable)"},
    {"clear", clear, METH_O, "clear(table)"},
    {"driver_launches", driver_launches, METH_O, "driver_launches(table) -> launches made through the CUDA driver"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "_allot_replay", "Replays recorded calls of generated host programs.",
                       -1, kMethods};

}  // namespace

PyMODINIT_FUNC PyInit__allot_replay() {
  return PyModule_Create(&kModule);
}
