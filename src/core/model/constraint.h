// Node feature constraints, as `sbatch --constraint` takes them: "ib", "a100&ib", "v100|a100",
// "[rack1|rack2]" (matching OR: every node of the job has the same one of the alternatives),
// "(a|b)&c", and counts "[a*2&b*4]" (parsed; see Constraint::HasCounts).
#ifndef BERTH_CORE_MODEL_CONSTRAINT_H_
#define BERTH_CORE_MODEL_CONSTRAINT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::core {

// A parsed constraint expression: an immutable tree of AND/OR nodes over feature names.
class Constraint {
 public:
  struct Term;  // defined in constraint.cc

  Constraint() = default;  // the empty constraint: every node satisfies it

  // Parses the expression. Errors name the problem and position, e.g.
  // "unbalanced '[' in constraint 'a&[b|c'", "empty feature name in constraint 'a&&b'".
  static Result<Constraint> Parse(std::string_view text);

  bool empty() const { return root_ == nullptr; }

  // Does a node with these features satisfy the expression? (Matching OR counts as OR here;
  // the allocator enforces the "all nodes alike" rule with MatchingAlternatives.)
  bool Matches(const std::function<bool(std::string_view)>& has_feature) const;

  // For a top-level matching OR "[a|b|c]": the alternatives {"a","b","c"}; otherwise empty.
  const std::vector<std::string>& MatchingAlternatives() const { return matching_; }

  // Every feature name that appears, in order of first appearance, without duplicates.
  std::vector<std::string> FeatureNames() const;

  // Whether "name*N" counts appear (the allocator treats them as plain features).
  bool HasCounts() const { return has_counts_; }

  // The text as given (whitespace removed), which is also how scontrol shows Features=.
  const std::string& text() const { return text_; }

 private:
  std::shared_ptr<const Term> root_;
  std::vector<std::string> matching_;
  std::string text_;
  bool has_counts_ = false;
};

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_CONSTRAINT_H_
