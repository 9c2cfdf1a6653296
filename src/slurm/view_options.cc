#include "slurm/view_options.h"

#include <cctype>
#include <cstdlib>
#include <ctime>

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

std::optional<std::vector<std::string>> RunGetopt(
    const std::vector<std::string>& args, const char* short_options,
    const struct option* long_options, const std::function<bool(int, const char*)>& handle) {
  // getopt_long permutes argv, so it works on copies.
  std::vector<std::string> copies = args;
  if (copies.empty()) copies.push_back("berth");
  std::vector<char*> argv;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  optind = 0;  // glibc: start over, with its full initialisation
  opterr = 1;
  const int argc = static_cast<int>(copies.size());
  int c;
  while ((c = getopt_long(argc, argv.data(), short_options, long_options, nullptr)) != -1) {
    if (c == '?' || c == ':') return std::nullopt;
    if (!handle(c, optarg)) break;
  }
  std::vector<std::string> operands;
  for (int i = optind; i < argc; ++i) operands.emplace_back(argv[i]);
  return operands;
}

std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    if (comma > pos) out.emplace_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

std::string LowerAscii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
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
