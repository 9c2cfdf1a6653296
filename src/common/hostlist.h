// Slurm hostlist expressions: "gpu[001-004,007],cpu01" <-> {gpu001, ..., gpu004, gpu007, cpu01}.
//
// Follows Slurm 22.05's src/common/hostlist.c (one-dimensional clusters):
//  * Expand() is what `scontrol show hostnames EXPR` prints, in that order, duplicates kept.
//  * Compress() is what `scontrol show hostlist` and squeue's NODELIST print for names in the
//    given order; CompressSorted() is `scontrol show hostlistsorted`; CompressUnique() is what
//    slurmctld stores for ReqNodeList=/ExcNodeList= (sorted, duplicates dropped).
//
// Expression syntax (as Slurm parses it; berth allows at most 64 bracket groups in one name):
//  * Hosts are separated by ',', ' ', '\t' (and, in berth, '\n' and '\r'); a ',' inside
//    brackets separates ranges, not hosts.
//  * A bracket holds a comma list of "N" or "LO-HI" (decimal, LO <= HI). The zero padding is the
//    width of LO as written: "n[01-10]" -> n01..n10, "n[1-10]" -> n1..n10, "n[001-5]" ->
//    n001..n005.
//  * A name may hold several bracket groups, but nothing may follow the last ']' (Slurm rejects
//    "node[1-2]-ib"). With three or more groups Slurm's loop order is kept: the last group varies
//    fastest, then the groups before it from left to right ("a[1-2]b[3-4]c[5-6]" gives
//    a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 ...).
//
// Thread safety: all functions are pure.
#ifndef BERTH_COMMON_HOSTLIST_H_
#define BERTH_COMMON_HOSTLIST_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::hostlist {

// Slurm's MAX_RANGE: one "LO-HI" may name at most this many hosts.
inline constexpr size_t kMaxHostsPerRange = size_t{64} * 1024;
// berth's cap on the whole expansion (Slurm has none; it runs out of memory instead).
inline constexpr size_t kMaxHosts = 1'000'000;

// Expands a hostlist expression into host names, in Slurm's order, duplicates kept. An empty or
// all-separator expression gives an empty list. Errors (kInvalidArgument) name the bad part:
// unbalanced or nested brackets, text after the last ']', a range that is empty, not decimal,
// reversed ("5-2") or too long, or more than kMaxHosts names in all.
Result<std::vector<std::string>> Expand(std::string_view expr);

// The ranged form of `names` in the given order, as `scontrol show hostlist` prints it: runs of
// names with the same prefix and numeric suffixes that ascend by one (and compatible zero
// padding) merge into "prefix[lo-hi]"; consecutive ranges with the same prefix share one bracket
// ("n[1-3,7]"); names without a numeric suffix stand alone; duplicates stay ("n[1,1]").
// Empty names are skipped. Compress({}) is "".
std::string Compress(const std::vector<std::string>& names);

// Like Compress, after Slurm's hostlist_sort(): ranges ordered by prefix (natural order: "n2"
// before "n10"), then suffix; overlapping ranges are split, duplicates kept.
std::string CompressSorted(const std::vector<std::string>& names);

// Like Compress, after Slurm's hostlist_uniq(): sorted as CompressSorted, duplicates dropped.
// This is how slurmctld shows ReqNodeList=/ExcNodeList= ("cnode[212,213,240]" ->
// "cnode[212-213,240]").
std::string CompressUnique(const std::vector<std::string>& names);

}  // namespace berth::hostlist

#endif  // BERTH_COMMON_HOSTLIST_H_
