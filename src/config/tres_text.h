// Slurm's TRES lists in configuration: limits as sacctmgr takes them (GrpTRES=, MaxTRESPerUser=,
// ...), PriorityWeightTRES= and TRESBillingWeights=. TRES names are "type" or "type/name"
// ("cpu", "mem", "node", "gres/gpu", "license/matlab"); the type is matched in any case.
//
// Thread safety: all functions are pure.
#ifndef BERTH_CONFIG_TRES_TEXT_H_
#define BERTH_CONFIG_TRES_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/config.h"
#include "core/model/resources.h"

namespace berth::config {

// Normalises a TRES name: the type part lower-cased, the name after '/' kept ("GRES/gpu" ->
// "gres/gpu").
std::string NormalizeTresName(std::string_view name);

// "cpu=N,mem=SIZE,node=N,gres/gpu=N": N an integer >= 0, SIZE a memory size ("64G"); -1 clears
// a limit, as in sacctmgr. Other TRES are errors: berth limits only these four.
Result<core::TresLimits> ParseTresLimits(std::string_view text);
// The same list applied onto `limits`: only the TRES it names change (sacctmgr's modify ... set
// GrpTRES=cpu=8 keeps a gres/gpu limit). On an error `limits` is unchanged.
Status MergeTresLimits(std::string_view text, core::TresLimits& limits);

// PriorityWeightTRES: "CPU=1000,Mem=2000,GRES/gpu=3000" -> {{"cpu",1000},{"mem",2000},
// {"gres/gpu",3000}} (names normalised; integer weights >= 0).
Result<std::vector<core::NamedCount>> ParseTresWeights(std::string_view text);

// TRESBillingWeights: "CPU=1.0,Mem=0.25G,GRES/gpu=2.0". As in Slurm, once the key is given only
// the listed TRES are billed, so the three weights of `fs` are first set to zero. A memory weight
// is per MiB unless it ends in G (per GiB), M (per MiB) or T (per TiB). TRES that berth does not
// bill ("node", "license/x", typed GPUs...) are appended to `ignored` (normalised names).
Status ParseBillingWeights(std::string_view text, core::FairshareConfig& fs,
                           std::vector<std::string>& ignored);

}  // namespace berth::config

#endif  // BERTH_CONFIG_TRES_TEXT_H_
