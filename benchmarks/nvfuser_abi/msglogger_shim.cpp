// The torch-2.10 c10::MessageLogger that nvFuser's torch-2.10 wheel was built against, for running
// that wheel on torch 2.11 (benchmarks only). torch 2.11 replaced the constructor
// MessageLogger(const char*, int, int, bool) with one taking a SourceLocation, and the class grew,
// so the wheel's libnvfuser_codegen.so does not load ("undefined symbol
// _ZN3c1013MessageLoggerC1EPKciib"). patch_nvfuser.py renames the wheel's three references to
// the class (constructor, destructor, stream()) to c10::MsgLoggerV210, a name of the same length,
// which this library defines. The caller's object (sized for the old class, which is far larger
// than one pointer) holds only a pointer to this state, so no layout of torch's is assumed.
// Severities as c10's: 0 info, 1 warning, 2 error, 3 fatal; info is not printed, fatal aborts.
#include <cstdlib>
#include <iostream>
#include <sstream>

namespace c10 {

class MsgLoggerV210 {
 public:
  MsgLoggerV210(const char* file, int line, int severity, bool exit_on_fatal);
  ~MsgLoggerV210() noexcept(false);
  std::stringstream& stream();

 private:
  struct State {
    const char* file;
    int line;
    int severity;
    bool exit_on_fatal;
    std::stringstream text;
  };
  State* state_;
};

MsgLoggerV210::MsgLoggerV210(const char* file, int line, int severity, bool exit_on_fatal)
    : state_(new State{file, line, severity, exit_on_fatal, {}}) {}

std::stringstream& MsgLoggerV210::stream() { return state_->text; }

MsgLoggerV210::~MsgLoggerV210() noexcept(false) {
  static const char kTags[] = "IWEF";
  const int severity = state_->severity < 0 ? 0 : (state_->severity > 3 ? 3 : state_->severity);
  if (severity >= 1) {
    std::cerr << "[nvFuser " << kTags[severity] << " " << state_->file << ":" << state_->line << "] "
              << state_->text.str() << std::endl;
  }
  const bool fatal = severity == 3 && state_->exit_on_fatal;
  delete state_;
  if (fatal) std::abort();
}

}  // namespace c10
