// sstat's options, rows and layout (Slurm 22.05: src/sstat/options.c, sstat.c, print.c).
#include "slurm/sstat_view.h"

#include <charconv>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/hostlist.h"
#include "common/strings.h"
#include "slurm/sacct_view.h"

namespace berth::slurm {
namespace {

using nlohmann::json;

enum Kind { kText, kNumber };
struct FieldInfo {
  const char* name;
  int width;
  Kind kind;
};

// Slurm 22.05's sstat fields, in its order (a -o name picks the first it prefixes).
const FieldInfo kFields[] = {
    {"AveCPU", 10, kText},
    {"AveCPUFreq", 10, kText},
    {"AveDiskRead", 12, kText},
    {"AveDiskWrite", 12, kText},
    {"AvePages", 10, kText},
    {"AveRSS", 10, kText},
    {"AveVMSize", 10, kText},
    {"ConsumedEnergy", 14, kText},
    {"ConsumedEnergyRaw", 17, kNumber},
    {"JobID", -12, kText},
    {"MaxDiskRead", 12, kText},
    {"MaxDiskReadNode", 15, kText},
    {"MaxDiskReadTask", 15, kNumber},
    {"MaxDiskWrite", 12, kText},
    {"MaxDiskWriteNode", 16, kText},
    {"MaxDiskWriteTask", 16, kNumber},
    {"MaxPages", 8, kText},
    {"MaxPagesNode", 12, kText},
    {"MaxPagesTask", 14, kNumber},
    {"MaxRSS", 10, kText},
    {"MaxRSSNode", 10, kText},
    {"MaxRSSTask", 10, kNumber},
    {"MaxVMSize", 10, kText},
    {"MaxVMSizeNode", 14, kText},
    {"MaxVMSizeTask", 14, kNumber},
    {"MinCPU", 10, kText},
    {"MinCPUNode", 10, kText},
    {"MinCPUTask", 10, kNumber},
    {"Nodelist", 20, kText},
    {"NTasks", 8, kNumber},
    {"Pids", 20, kText},
    {"ReqCPUFreq", 10, kText},
    {"ReqCPUFreqMin", 13, kText},
    {"ReqCPUFreqMax", 13, kText},
    {"ReqCPUFreqGov", 13, kText},
    {"TRESUsageInAve", 14, kText},
    {"TRESUsageInMax", 14, kText},
    {"TRESUsageInMaxNode", 18, kText},
    {"TRESUsageInMaxTask", 18, kText},
    {"TRESUsageInMin", 14, kText},
    {"TRESUsageInMinNode", 18, kText},
    {"TRESUsageInMinTask", 18, kText},
    {"TRESUsageInTot", 14, kText},
    {"TRESUsageOutAve", 15, kText},
    {"TRESUsageOutMax", 15, kText},
    {"TRESUsageOutMaxNode", 19, kText},
    {"TRESUsageOutMaxTask", 19, kText},
    {"TRESUsageOutMin", 15, kText},
    {"TRESUsageOutMinNode", 19, kText},
    {"TRESUsageOutMinTask", 19, kText},
    {"TRESUsageOutTot", 15, kText},
};

constexpr const char* kDefaultFields =
    "jobid,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,maxrsstask,averss,"
    "maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu,ntasks,"
    "avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,consumedenergy,maxdiskread,"
    "maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,"
    "avediskwrite,tresusageinave,tresusageinmax,tresusageinmaxn,tresusageinmaxt,tresusageinmin,"
    "tresusageinminn,tresusageinmint,tresusageintot,tresusageoutave,tresusageoutmax,"
    "tresusageoutmaxn,tresusageoutmaxt,tresusageoutmin,tresusageoutminn,tresusageoutmint,"
    "tresusageouttot";

const FieldInfo* FindField(const std::string& name) {
  for (const FieldInfo& f : kFields) {
    if (ToLower(f.name) == ToLower(name)) return &f;
  }
  return nullptr;
}

constexpr int kHelp = 0x100;
constexpr int kNoConvert = 0x101;

const struct option kLongOptions[] = {
    {"allsteps", no_argument, nullptr, 'a'},
    {"helpformat", no_argument, nullptr, 'e'},
    {"help", no_argument, nullptr, 'h'},
    {"jobs", required_argument, nullptr, 'j'},
    {"noconvert", no_argument, nullptr, kNoConvert},
    {"noheader", no_argument, nullptr, 'n'},
    {"fields", required_argument, nullptr, 'o'},
    {"format", required_argument, nullptr, 'o'},
    {"pidformat", no_argument, nullptr, 'i'},
    {"parsable", no_argument, nullptr, 'p'},
    {"parsable2", no_argument, nullptr, 'P'},
    {"usage", no_argument, nullptr, 'U'},
    {"verbose", no_argument, nullptr, 'v'},
    {"version", no_argument, nullptr, 'V'},
    {"long-help", no_argument, nullptr, kHelp},
    {nullptr, 0, nullptr, 0},
};
constexpr const char* kShortOptions = "aehij:no:pPUvV";

constexpr const char* kUsageText =
    "Usage: sstat [options] -j <job(.stepid)>\n"
    "\tUse --help for a list of options\n";

constexpr const char* kHelpText =
    "sstat [<OPTION>] -j <job(.stepid)>\n"
    "    Valid <OPTION> values are:\n"
    "     -a, --allsteps:\n"
    "\t           Print all steps for the given job(s) when no step is\n"
    "\t           specified.\n"
    "     -e, --helpformat:\n"
    "\t           Print a list of fields that can be specified with the\n"
    "\t           '--format' option\n"
    "     -h, --help:   Print this description of use.\n"
    "     -i, --pidformat:\n"
    "\t           Predefined format to list the pids running for each\n"
    "\t           job step.  (JobId,Nodes,Pids)\n"
    "     -j, --jobs:\n"
    "\t           Format is <job(.step)>. Stat this job step\n"
    "\t           or comma-separated list of job steps. This option is\n"
    "\t           required.  The step portion will default to the lowest\n"
    "\t           numbered (not batch, extern, etc) step running if not\n"
    "\t           specified, unless the --allsteps flag is set where not\n"
    "\t           specifying a step will result in all running steps\n"
    "\t           to be displayed.\n"
    "     --noconvert:\n"
    "\t           Don't convert units from their original type\n"
    "\t           (e.g. 2048M won't be converted to 2G).\n"
    "     -n, --noheader:\n"
    "\t           No header will be added to the beginning of output.\n"
    "\t           The default is to print a header.\n"
    "     -o, --format:\n"
    "\t           Comma separated list of fields.\n"
    "\t           (use \"--helpformat\" for a list of available fields).\n"
    "     -p, --parsable: output will be '|' delimited with a '|' at the end\n"
    "     -P, --parsable2: output will be '|' delimited without a '|' at the end\n"
    "     --usage:  Display brief usage message.\n"
    "     -v, --verbose:\n"
    "\t           Primarily for debugging purposes, report the state of\n"
    "\t           various variables during processing.\n"
    "     -V, --version: Print version.\n\n";

std::string HelpFormat() {
  std::string out;
  int i = 0;
  for (const FieldInfo& f : kFields) {
    if ((i & 3) != 0) {
      out += " ";
    } else if (i != 0) {
      out += "\n";
    }
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%-19s", f.name);
    out += buf;
    ++i;
  }
  return out + "\n";
}

std::optional<uint32_t> Whole(std::string_view s) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<SstatJobId> ParseJobId(const std::string& text) {
  SstatJobId id;
  const size_t dot = text.find('.');
  std::optional<uint32_t> job = Whole(std::string_view(text).substr(0, dot));
  if (!job || *job == 0) return std::nullopt;
  id.job = *job;
  if (dot == std::string::npos) return id;
  const std::string step = text.substr(dot + 1);
  if (ToLower(step) == "batch") {
    id.step = SstatJobId::Step::kBatch;
    return id;
  }
  std::optional<uint32_t> n = Whole(step);
  if (!n) return std::nullopt;
  id.step = SstatJobId::Step::kNumber;
  id.step_id = *n;
  return id;
}

struct Parser {
  SstatParse result;
  SstatOptions& o = result.options;
  std::optional<ParseExit> stop;
  std::string fields, jobs;

  bool Option(int c, const char* arg) {
    const std::string value = arg != nullptr ? arg : "";
    switch (c) {
      case 'a':
        o.all_steps = true;
        break;
      case 'e':
        stop = ExitWith(0, "", HelpFormat());
        return false;
      case 'h':
      case kHelp:
        stop = ExitWith(0, "", kHelpText);
        return false;
      case 'i':
        fields += "jobid,nodelist,pids,";
        break;
      case 'j':
        jobs += value + ",";
        break;
      case 'n':
        o.no_header = true;
        break;
      case 'o':
        fields += value + ",";
        break;
      case 'p':
        o.parsable = 1;
        break;
      case 'P':
        o.parsable = 2;
        break;
      case 'U':
        stop = ExitWith(0, "", kUsageText);
        return false;
      case 'V':
        stop = ExitWith(0, "", "slurm 22.05.8 (berth)\n");
        return false;
      default:  // -v, --noconvert
        break;
    }
    return true;
  }

  bool Finish(const std::vector<std::string>& operands) {
    for (const std::string& op : operands) jobs += op + ",";
    for (const std::string& item : SplitNonEmpty(jobs)) {
      std::optional<SstatJobId> id = ParseJobId(item);
      if (!id) {
        stop = ExitWith(1, "sstat: error: Invalid job id: " + item + "\n");
        return false;
      }
      o.jobs.push_back(*id);
    }
    for (std::string name : SplitNonEmpty(fields.empty() ? kDefaultFields : fields)) {
      int width = 0;
      bool width_given = false;
      if (size_t pct = name.find('%'); pct != std::string::npos) {
        width = std::atoi(name.c_str() + pct + 1);
        width_given = true;
        name.resize(pct);
      }
      const FieldInfo* found = nullptr;
      for (const FieldInfo& f : kFields) {
        const std::string fname = f.name;
        if (name.size() <= fname.size() && ToLower(fname.substr(0, name.size())) == ToLower(name)) {
          found = &f;
          break;
        }
      }
      if (found == nullptr) {
        stop = ExitWith(1, "sstat: error: Invalid field requested: \"" + name + "\"\n");
        return false;
      }
      o.fields.push_back({found->name, width_given ? width : found->width});
    }
    if (o.jobs.empty()) {
      stop = ExitWith(1, "sstat: error: You didn't give me any jobs to stat.\n");
      return false;
    }
    return true;
  }
};

std::string Justify(const std::string& s, int width) {
  const size_t w = static_cast<size_t>(std::abs(width));
  if (s.size() >= w) return s;
  std::string pad(w - s.size(), ' ');
  return width < 0 ? s + pad : pad + s;
}

std::string Fit(const std::string& value, const SstatField& f) {
  const FieldInfo* info = FindField(f.name);
  const int abs_width = std::abs(f.width);
  if (info != nullptr && info->kind == kNumber)
    return Justify(value.empty() ? " " : value, f.width);
  std::string v = value.empty() ? " " : value;
  if (static_cast<int>(v.size()) > abs_width && abs_width > 0) {
    v.resize(static_cast<size_t>(abs_width));
    v.back() = '+';
  }
  return Justify(v, f.width);
}

// The JOB.batch row: the job's cgroup as the agent measured it.
std::string BatchValue(const std::string& f, const SstatJob& j) {
  if (f == "JobID") return std::to_string(j.id) + ".batch";
  if (f == "NTasks") return "1";
  if (f == "Nodelist") return j.batch_node;
  if (!j.measured) return "";
  const std::string cpu = SacctCpuTime(j.cpu_seconds);
  if (f == "AveCPU" || f == "MinCPU") return cpu;
  if (f == "AveRSS") return SstatMemory(j.memory_bytes);
  if (f == "MaxRSS") return SstatMemory(j.max_memory_bytes);
  if (f == "MaxRSSNode" || f == "MinCPUNode") return j.batch_node;
  if (f == "MaxRSSTask" || f == "MinCPUTask") return "0";
  if (f == "TRESUsageInAve") return "cpu=" + cpu + ",mem=" + SstatMemory(j.memory_bytes);
  if (f == "TRESUsageInMax") return "cpu=" + cpu + ",mem=" + SstatMemory(j.max_memory_bytes);
  if (f == "TRESUsageInMin") return "cpu=" + cpu + ",mem=" + SstatMemory(j.memory_bytes);
  if (f == "TRESUsageInTot") return "cpu=" + cpu + ",mem=" + SstatMemory(j.memory_bytes);
  if (f == "TRESUsageInMaxNode" || f == "TRESUsageInMinNode") {
    return "cpu=" + j.batch_node + ",mem=" + j.batch_node;
  }
  if (f == "TRESUsageInMaxTask" || f == "TRESUsageInMinTask") return "cpu=0,mem=0";
  return "";
}

// A running srun step's row: berth knows its tasks and nodes, not its own usage.
std::string StepValue(const std::string& f, const SstatJob& j, const api::StepRecord& s) {
  if (f == "JobID") return std::to_string(j.id) + "." + std::to_string(s.id);
  if (f == "NTasks") return std::to_string(s.ntasks);
  if (f == "Nodelist") return s.nodes;
  return "";
}

}  // namespace

std::string SstatMemory(int64_t bytes) {
  int64_t kib = bytes / 1024;
  if (kib <= 0) return "0";
  static const char kUnits[] = {'K', 'M', 'G', 'T', 'P'};
  int unit = 0;
  while (kib % 1024 == 0 && unit < 4) {
    kib /= 1024;
    ++unit;
  }
  return std::to_string(kib) + kUnits[unit];
}

SstatParse ParseSstatArgs(const std::vector<std::string>& args) {
  Parser p;
  std::optional<std::vector<std::string>> operands = RunGetopt(
      args, kShortOptions, kLongOptions, [&](int c, const char* v) { return p.Option(c, v); });
  if (!operands) p.stop = ExitWith(1, kUsageText);
  if (!p.stop) p.Finish(*operands);
  if (p.stop) p.result.exit = *p.stop;
  return p.result;
}

Result<std::vector<SstatJob>> SstatJobsFromJson(const json& jobs, const json& usage) {
  if (!jobs.is_object() || !jobs.contains("jobs") || !jobs.at("jobs").is_array()) {
    return Status::InvalidArgument("the controller's job list has no \"jobs\"");
  }
  if (!usage.is_object() || !usage.contains("jobs") || !usage.at("jobs").is_array()) {
    return Status::InvalidArgument("the controller's usage answer has no \"jobs\"");
  }
  std::vector<SstatJob> out;
  for (const json& r : jobs.at("jobs")) {
    if (!r.is_object() || !r.contains("id") || !r.at("id").is_number_integer() ||
        r.at("id").get<int64_t>() <= 0) {
      return Status::InvalidArgument("a job record without an id");
    }
    SstatJob j;
    j.id = r.at("id").get<uint32_t>();
    j.running = r.value("state", std::string()) == "RUNNING";
    if (r.contains("allocation") && r.at("allocation").contains("nodes") &&
        r.at("allocation").at("nodes").is_array()) {
      std::vector<std::string> names;
      for (const json& n : r.at("allocation").at("nodes")) {
        if (n.is_object()) names.push_back(n.value("node", std::string()));
      }
      if (!names.empty()) j.batch_node = names.front();
      j.nodes = hostlist::CompressSorted(names);
    }
    if (r.contains("steps") && r.at("steps").is_array()) {
      for (const json& s : r.at("steps")) {
        Result<api::StepRecord> step = api::DecodeStepRecord(s);
        if (step.ok() && step->state == "RUNNING") j.steps.push_back(*step);
      }
    }
    out.push_back(std::move(j));
  }
  for (const json& u : usage.at("jobs")) {
    if (!u.is_object()) continue;
    const uint32_t id = u.value("job_id", 0u);
    for (SstatJob& j : out) {
      if (j.id != id) continue;
      j.measured = true;
      j.cpu_seconds = u.value("cpu_seconds", 0.0);
      j.memory_bytes = u.value("memory_bytes", int64_t{0});
      j.max_memory_bytes = u.value("max_memory_bytes", int64_t{0});
      if (j.batch_node.empty()) j.batch_node = u.value("node", std::string());
    }
  }
  return out;
}

SstatOutput RenderSstat(const SstatOptions& o, const std::vector<SstatJob>& jobs) {
  SstatOutput r;
  const bool parsable = o.parsable != 0;
  auto line = [&](const std::function<std::string(const std::string&)>& value) {
    std::string s;
    for (size_t i = 0; i < o.fields.size(); ++i) {
      const SstatField& f = o.fields[i];
      if (!parsable) {
        s += Fit(value(f.name), f) + " ";
      } else {
        s += value(f.name);
        if (!(o.parsable == 2 && i + 1 == o.fields.size())) s += "|";
      }
    }
    return s + "\n";
  };
  if (!o.no_header) {
    std::string head;
    for (size_t i = 0; i < o.fields.size(); ++i) {
      const SstatField& f = o.fields[i];
      if (!parsable) {
        head += Justify(f.name.substr(0, static_cast<size_t>(std::abs(f.width))), f.width) + " ";
      } else {
        head += f.name;
        if (!(o.parsable == 2 && i + 1 == o.fields.size())) head += "|";
      }
    }
    r.out += head + "\n";
    if (!parsable) {
      for (const SstatField& f : o.fields) r.out += std::string(std::abs(f.width), '-') + " ";
      r.out += "\n";
    }
  }
  for (const SstatJobId& id : o.jobs) {
    const SstatJob* j = nullptr;
    for (const SstatJob& c : jobs) {
      if (c.id == id.job) j = &c;
    }
    if (j == nullptr) {
      r.err += "sstat: error: couldn't get steps for job " + std::to_string(id.job) + "\n";
      continue;
    }
    if (!j->running) {
      r.err += "sstat: error: no steps running for job " + std::to_string(id.job) + "\n";
      continue;
    }
    auto batch = [&] { r.out += line([&](const std::string& f) { return BatchValue(f, *j); }); };
    auto step = [&](const api::StepRecord& s) {
      r.out += line([&](const std::string& f) { return StepValue(f, *j, s); });
    };
    switch (id.step) {
      case SstatJobId::Step::kBatch:
        batch();
        break;
      case SstatJobId::Step::kNumber:
        for (const api::StepRecord& s : j->steps) {
          if (s.id == id.step_id) step(s);
        }
        break;
      case SstatJobId::Step::kDefault:
        batch();
        if (o.all_steps) {
          for (const api::StepRecord& s : j->steps) step(s);
        }
        break;
    }
  }
  return r;
}

}  // namespace berth::slurm
