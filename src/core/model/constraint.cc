// Syntax as in `man sbatch` (Slurm 22.05) --constraint and slurmctld's build_feature_list():
//   name            a node feature; [A-Za-z0-9] and "_-.:+/=@%^~#!" (berth's choice: Slurm takes
//                   any character that is not an operator)
//   name*N          at least N nodes with the feature (N >= 1)
//   a&b  a|b        AND, OR
//   [a|b|c]         matching OR: all nodes get the same alternative
//   [a*2&b*4]       multiple counts
//   (a|b)&c         grouping; "(a&b)*4" counts a group
// Slurm applies '&' and '|' strictly from left to right, without precedence (its feature
// bitmaps are combined in list order), so "a|b&c" means "(a|b)&c". berth does the same.
// Like Slurm, berth rejects nested parentheses and brackets; it also rejects brackets inside
// parentheses, counts combined with '|', and ',' (not an operator).
#include "core/model/constraint.h"

#include <algorithm>

#include "common/strings.h"

namespace berth::core {

struct Constraint::Term {
  enum class Kind : uint8_t { kFeature, kGroup };
  Kind kind = Kind::kFeature;
  std::string name;            // kFeature
  std::vector<Term> children;  // kGroup: operands, in order
  std::vector<char> ops;       // kGroup: '&' or '|' between children (size children - 1)
  bool brackets = false;       // kGroup written as [...]
  int32_t count = 0;           // "*N"; 0 = none

  bool Eval(const std::function<bool(std::string_view)>& has_feature) const {
    if (kind == Kind::kFeature) return has_feature(name);
    bool acc = children[0].Eval(has_feature);
    for (size_t i = 1; i < children.size(); ++i) {
      acc = ops[i - 1] == '&' ? (acc && children[i].Eval(has_feature))
                              : (acc || children[i].Eval(has_feature));
    }
    return acc;
  }
};

namespace {

constexpr int32_t kMaxCount = 1'000'000;

bool IsFeatureChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("_-.:+/=@%^~#!").find(c) != std::string_view::npos;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Result<Constraint::Term> Run() {
    BERTH_ASSIGN_OR_RETURN(Constraint::Term root, ParseExpr(/*in_paren=*/false,
                                                            /*in_brackets=*/false));
    if (pos_ < s_.size()) {
      if (s_[pos_] == ',') return Error("',' is not a constraint operator (use '&' or '|')");
      if (s_[pos_] == ')') return Error("unbalanced ')'");
      if (s_[pos_] == ']') return Error("unbalanced ']'");
      return Error("unexpected " + Quote(s_.substr(pos_, 1)));
    }
    if (has_counts_ && has_or_) return Error("counts ('*N') cannot be combined with '|'");
    return root;
  }

  bool has_counts() const { return has_counts_; }

 private:
  static std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

  Status Error(const std::string& why) const {
    return Status::InvalidArgument(why + " in constraint " + Quote(s_) + " at position " +
                                   std::to_string(pos_ + 1));
  }

  Result<Constraint::Term> ParseExpr(bool in_paren, bool in_brackets) {
    Constraint::Term group;
    group.kind = Constraint::Term::Kind::kGroup;
    while (true) {
      BERTH_ASSIGN_OR_RETURN(Constraint::Term item, ParseItem(in_paren, in_brackets));
      group.children.push_back(std::move(item));
      if (pos_ >= s_.size() || (s_[pos_] != '&' && s_[pos_] != '|')) break;
      if (s_[pos_] == '|') has_or_ = true;
      group.ops.push_back(s_[pos_++]);
    }
    return group;
  }

  Result<Constraint::Term> ParseItem(bool in_paren, bool in_brackets) {
    if (pos_ >= s_.size()) return Error("missing feature name");
    char c = s_[pos_];
    if (c == '[') {
      if (in_paren || in_brackets) return Error("nested '['");
      return ParseGroup('[', ']', /*inside_brackets=*/false, /*brackets=*/true);
    }
    if (c == '(') {
      if (in_paren) return Error("nested '('");
      return ParseGroup('(', ')', in_brackets, /*brackets=*/false);
    }
    if (c == ',') return Error("',' is not a constraint operator (use '&' or '|')");
    if (c == '&' || c == '|' || c == ']' || c == ')' || c == '*') {
      return Error("empty feature name");
    }
    size_t start = pos_;
    while (pos_ < s_.size() && IsFeatureChar(s_[pos_])) ++pos_;
    if (pos_ == start) return Error("invalid character " + Quote(s_.substr(pos_, 1)));
    Constraint::Term feature;
    feature.name = std::string(s_.substr(start, pos_ - start));
    BERTH_RETURN_IF_ERROR(ParseCount(&feature));
    return feature;
  }

  // `inside_brackets`: a "(...)" within "[...]" (the only nesting allowed).
  Result<Constraint::Term> ParseGroup(char open, char close, bool inside_brackets, bool brackets) {
    size_t open_pos = pos_++;
    BERTH_ASSIGN_OR_RETURN(Constraint::Term group,
                           ParseExpr(/*in_paren=*/!brackets,
                                     /*in_brackets=*/brackets || inside_brackets));
    if (pos_ >= s_.size() || s_[pos_] != close) {
      if (pos_ < s_.size() && (s_[pos_] == ']' || s_[pos_] == ')')) {
        return Error("mismatched " + Quote(s_.substr(pos_, 1)));
      }
      pos_ = open_pos;
      return Error("unbalanced " + Quote(std::string(1, open)));
    }
    ++pos_;
    group.brackets = brackets;
    if (!brackets) BERTH_RETURN_IF_ERROR(ParseCount(&group));
    return group;
  }

  Status ParseCount(Constraint::Term* term) {
    if (pos_ >= s_.size() || s_[pos_] != '*') return Status::Ok();
    ++pos_;
    size_t start = pos_;
    int64_t n = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9' && n <= kMaxCount) {
      n = n * 10 + (s_[pos_++] - '0');
    }
    if (pos_ == start || n < 1 || n > kMaxCount) {
      return Error("count after '*' must be 1 to " + std::to_string(kMaxCount));
    }
    term->count = static_cast<int32_t>(n);
    has_counts_ = true;
    return Status::Ok();
  }

  std::string_view s_;
  size_t pos_ = 0;
  bool has_counts_ = false;
  bool has_or_ = false;
};

// A group of one operand without brackets or count is that operand.
Constraint::Term Simplify(Constraint::Term t) {
  for (Constraint::Term& child : t.children) child = Simplify(std::move(child));
  if (t.kind == Constraint::Term::Kind::kGroup && t.children.size() == 1 && !t.brackets &&
      t.count == 0) {
    Constraint::Term only = std::move(t.children[0]);
    return only;
  }
  return t;
}

void CollectNames(const Constraint::Term& t, std::vector<std::string>* names) {
  if (t.kind == Constraint::Term::Kind::kFeature) {
    if (std::find(names->begin(), names->end(), t.name) == names->end()) {
      names->push_back(t.name);
    }
    return;
  }
  for (const Constraint::Term& child : t.children) CollectNames(child, names);
}

// "[a|b|c]" of plain names: the alternatives; anything else: empty.
std::vector<std::string> Alternatives(const Constraint::Term& root) {
  std::vector<std::string> names;
  if (root.kind != Constraint::Term::Kind::kGroup || !root.brackets) return names;
  if (std::any_of(root.ops.begin(), root.ops.end(), [](char op) { return op != '|'; })) {
    return names;
  }
  for (const Constraint::Term& child : root.children) {
    if (child.kind != Constraint::Term::Kind::kFeature || child.count != 0) return {};
    names.push_back(child.name);
  }
  return names;
}

}  // namespace

Result<Constraint> Constraint::Parse(std::string_view text) {
  Constraint c;
  for (char ch : text) {
    if (!IsSpace(ch)) c.text_ += ch;
  }
  if (c.text_.empty()) return c;
  Parser parser(c.text_);
  BERTH_ASSIGN_OR_RETURN(Term root, parser.Run());
  root = Simplify(std::move(root));
  c.matching_ = Alternatives(root);
  c.has_counts_ = parser.has_counts();
  c.root_ = std::make_shared<const Term>(std::move(root));
  return c;
}

bool Constraint::Matches(const std::function<bool(std::string_view)>& has_feature) const {
  return root_ == nullptr || root_->Eval(has_feature);
}

std::vector<std::string> Constraint::FeatureNames() const {
  std::vector<std::string> names;
  if (root_ != nullptr) CollectNames(*root_, &names);
  return names;
}

}  // namespace berth::core
