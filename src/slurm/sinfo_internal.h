// What sinfo_view.cc and sinfo_fields.cc share: one output line (a record) and the field table.
// Not part of the library's interface.
#ifndef BERTH_SLURM_SINFO_INTERNAL_H_
#define BERTH_SLURM_SINFO_INTERNAL_H_

#include <string>
#include <string_view>
#include <vector>

#include "slurm/sinfo_view.h"

namespace berth::slurm::sinfo_internal {

// One line of sinfo: a partition (null when the format shows none and nodes of several
// partitions share the line) and its nodes.
struct Record {
  const SinfoPartition* part = nullptr;
  std::vector<const SinfoNode*> nodes;
};

// How a field takes part in grouping nodes into records (sinfo's match flags).
enum class Match {
  kNone,       // shown, never splits records (counts, node lists)
  kPartition,  // a partition attribute: records of partitions that differ here stay apart
  kNode,       // a node attribute: nodes that differ here go to different records
  kExact,      // a size: splits records only with -e (otherwise shown as "min+")
};

struct Widths {
  int partition = 0;  // > 0: the computed %P/%R width
  int nodes = 0;      // > 0: the computed %N/%n width
};

struct SinfoField {
  char letter;                          // 0: -O only
  std::vector<std::string_view> names;  // -O names, lower case
  std::string_view header;
  Cell (*value)(const Record& r, int width);  // width: the field's, for %P's "*"
  Match match;
  // For kNode / kExact: the node's attribute compared when grouping; for kPartition: the
  // partition's.
  std::string (*node_key)(const SinfoNode& n) = nullptr;
  std::string (*part_key)(const SinfoPartition& p) = nullptr;
  bool header_cut = true;
};

// The field of a -o letter (percent_form) or -O name; null when unknown.
const SinfoField* FindSinfoField(std::string_view key, bool percent_form);

// Partition names as %P prints them ("batch*" for the default).
std::string PartitionLabel(const SinfoPartition& p, int width);

}  // namespace berth::slurm::sinfo_internal

#endif  // BERTH_SLURM_SINFO_INTERNAL_H_
