// scontrol's command line (Slurm 22.05 src/scontrol/scontrol.c: _set_options): the options
// anywhere among the words, and the flag words that may stand among the command's words.
#include <getopt.h>

#include "slurm/scontrol.h"

namespace berth::slurm {
namespace {

const struct option kLongOptions[] = {{"all", no_argument, nullptr, 'a'},
                                      {"details", no_argument, nullptr, 'd'},
                                      {"help", no_argument, nullptr, 'h'},
                                      {"oneliner", no_argument, nullptr, 'o'},
                                      {"quiet", no_argument, nullptr, 'Q'},
                                      {"verbose", no_argument, nullptr, 'v'},
                                      {"version", no_argument, nullptr, 'V'},
                                      {"usage", no_argument, nullptr, 'u'},
                                      {nullptr, 0, nullptr, 0}};
// As Slurm's scontrol (getopt_long without '+'): options anywhere among the words, permuted
// ("scontrol show jobid -dd 12"); a value such as "TimeLimit=-30" is one word that does not start
// with '-'. -d given twice is -d (22.05 prints nothing more: checked against slurmctld 22.05).
constexpr const char* kShortOptions = "adhoQvV";

constexpr const char* kUsage = R"(Usage: scontrol [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -a or --all: equivalent to "all" command
     -d or --details: equivalent to "details" command
     -h or --help: equivalent to "help" command
     -o or --oneliner: equivalent to "oneliner" command
     -Q or --quiet: equivalent to "quiet" command

    Valid <COMMAND> values are:
     create <SPECIFICATIONS>  create a new reservation (operators):
                              reservation [ReservationName=] StartTime= EndTime=|Duration=
                              Nodes=|NodeCnt= Users=|Accounts= [Flags=MAINT,IGNORE_JOBS,
                              DAILY,WEEKLY] [PartitionName=]
     delete <SPECIFICATIONS>  delete the reservation ReservationName=<name> (operators)
     hold <job_list>          prevent specified job from starting (operator hold)
     release <job_list>       permit specified job to start
     requeue <job_id>         re-queue a batch job
     show <ENTITY> [<ID>]     display state of identified entity, default is all records:
                              job, node, partition, reservation, config, hostnames,
                              hostlist, hostlistsorted
     uhold <job_list>         place user hold on specified job
     update <SPECIFICATIONS>  update job, node or reservation configuration:
                              JobId=<id> TimeLimit= TimeMin= Nice= Partition= NumNodes=
                              Features= QOS= Account= Comment= Reservation=
                              NodeName=<list> State=DRAIN|RESUME|DOWN|UNDRAIN Reason=
                              ReservationName=<name> StartTime= EndTime= Duration= Nodes=
                              NodeCnt= Users= Accounts= Flags= PartitionName=
)";

// Applies one option; a result when scontrol stops there (help, version).
std::optional<ScontrolParse> ApplyOption(int c, ScontrolOptions& o) {
  switch (c) {
    case 'd':
      o.details = true;
      break;
    case 'o':
      o.one_liner = true;
      break;
    case 'Q':
      o.quiet = true;
      break;
    case 'h':
    case 'u':
      return StopWith<ScontrolParse>(0, "", kUsage);
    case 'V':
      return StopWith<ScontrolParse>(0, "", ScontrolVersion());
    default:  // -a and -v: no effect
      break;
  }
  return std::nullopt;
}

}  // namespace

std::string ScontrolUsage() {
  return kUsage;
}

std::string ScontrolVersion() {
  return "slurm 22.05.8 (berth)\n";
}

ScontrolParse ParseScontrolArgs(const std::vector<std::string>& args) {
  ScontrolParse result;
  ScontrolOptions& o = result.options;
  std::optional<ScontrolParse> stop;
  std::string bad_word;
  std::optional<std::vector<std::string>> words = RunGetoptQuietly(
      args, kShortOptions, kLongOptions,
      [&](int c, const char*) {
        stop = ApplyOption(c, o);
        return !stop;
      },
      &bad_word);
  if (!words) {
    return StopWith<ScontrolParse>(1, "scontrol: unrecognized option '" + bad_word +
                                          "'\nTry \"scontrol --help\" for more information\n");
  }
  if (stop) return *stop;
  // Flags given as words ("scontrol -o show job" and "scontrol show -o job" both work).
  for (const std::string& w : *words) {
    if (w == "-o" || w == "--oneliner" || w == "oneliner") {
      o.one_liner = true;
    } else if (w == "-d" || w == "--details" || w == "details") {
      o.details = true;
    } else {
      result.words.push_back(w);
    }
  }
  if (result.words.empty()) return StopWith<ScontrolParse>(1, kUsage);
  return result;
}

}  // namespace berth::slurm
