#include "slurm/view_options.h"

#include <cstdlib>
#include <ctime>
#include <mutex>

namespace berth::slurm {

EnvLookup ProcessEnv() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

ParseExit ExitWith(int code, std::string err, std::string out) {
  ParseExit e;
  e.done = true;
  e.exit_code = code;
  e.err = std::move(err);
  e.out = std::move(out);
  return e;
}

namespace {

// RunGetopt; with `bad_word` null getopt prints its own messages.
std::optional<std::vector<std::string>> Getopt(const std::vector<std::string>& args,
                                               const char* short_options,
                                               const struct option* long_options,
                                               const std::function<bool(int, const char*)>& handle,
                                               std::string* bad_word) {
  // getopt_long's state is the process's: the controller parses squeue's and scancel's lines
  // (POST /v1/views/...) on several connection threads, one at a time here.
  static std::mutex getopt_mu;
  std::lock_guard<std::mutex> lock(getopt_mu);
  // getopt_long permutes argv, so it works on copies.
  std::vector<std::string> copies = args;
  if (copies.empty()) copies.push_back("berth");
  std::vector<char*> argv;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  optind = 0;  // glibc: start over, with its full initialisation
  opterr = bad_word == nullptr ? 1 : 0;
  const int argc = static_cast<int>(copies.size());
  int c;
  while ((c = getopt_long(argc, argv.data(), short_options, long_options, nullptr)) != -1) {
    if (c == '?' || c == ':') {
      if (bad_word != nullptr) *bad_word = argv[optind - 1];
      return std::nullopt;
    }
    if (!handle(c, optarg)) break;
  }
  std::vector<std::string> operands;
  for (int i = optind; i < argc; ++i) operands.emplace_back(argv[i]);
  return operands;
}

}  // namespace

std::optional<std::vector<std::string>> RunGetopt(
    const std::vector<std::string>& args, const char* short_options,
    const struct option* long_options, const std::function<bool(int, const char*)>& handle) {
  return Getopt(args, short_options, long_options, handle, nullptr);
}

std::optional<std::vector<std::string>> RunGetoptQuietly(
    const std::vector<std::string>& args, const char* short_options,
    const struct option* long_options, const std::function<bool(int, const char*)>& handle,
    std::string* bad_word) {
  return Getopt(args, short_options, long_options, handle, bad_word);
}

std::string DateLine() {
  time_t now = std::time(nullptr);
  struct tm tm_local;
  char buf[64] = "";
  if (localtime_r(&now, &tm_local) != nullptr) {
    strftime(buf, sizeof(buf), "%a %b %d %H:%M:%S %Y", &tm_local);
  }
  return std::string(buf) + "\n";
}

int IterationLimit() {
  const char* v = std::getenv("BERTH_ITERATIONS");
  if (v == nullptr) return -1;
  int n = std::atoi(v);
  return n > 0 ? n : -1;
}

}  // namespace berth::slurm
