#include "common/hostlist.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "common/strings.h"

namespace berth::hostlist {
namespace {

// Suffixes longer than this are not treated as numbers (Slurm would overflow strtoul and print a
// different name back); 18 digits always fit in int64_t.
constexpr size_t kMaxDigits = 18;
// Bracket groups in one name; bounds the expansion's recursion.
constexpr size_t kMaxGroups = 64;

bool IsSeparator(char c) {
  return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string Quote(std::string_view s) {
  return "'" + std::string(s) + "'";
}

std::string Padded(int64_t value, int width) {
  std::string s = std::to_string(value);
  if (static_cast<int>(s.size()) < width) s.insert(0, static_cast<size_t>(width) - s.size(), '0');
  return s;
}

// ---------------------------------------------------------------------------------------------
// Expand

struct NumRange {
  int64_t lo = 0;
  int64_t hi = 0;
  int width = 0;  // digits of `lo` as written: the zero padding of every number in the range
  size_t count() const { return static_cast<size_t>(hi - lo + 1); }
};

// A token "L0[G0]L1[G1]...L(n-1)[G(n-1)]": literals.size() == groups.size() (or 1 and 0).
struct Token {
  std::vector<std::string_view> literals;
  std::vector<std::vector<NumRange>> groups;
};

Result<int64_t> ParseNumber(std::string_view digits, std::string_view item, std::string_view tok) {
  if (digits.empty() || digits.size() > kMaxDigits) {
    return Status::InvalidArgument("bad range " + Quote(item) + " in hostlist " + Quote(tok) +
                                   (digits.empty() ? ": missing number" : ": number too long"));
  }
  int64_t value = 0;
  for (char c : digits) {
    if (!IsDigit(c)) {
      return Status::InvalidArgument("bad range " + Quote(item) + " in hostlist " + Quote(tok) +
                                     ": not a decimal number or LO-HI range");
    }
    value = value * 10 + (c - '0');
  }
  return value;
}

Result<NumRange> ParseRange(std::string_view item, std::string_view tok) {
  size_t dash = item.find('-');
  std::string_view lo_text = item.substr(0, dash);
  BERTH_ASSIGN_OR_RETURN(int64_t lo, ParseNumber(lo_text, item, tok));
  int64_t hi = lo;
  if (dash != std::string_view::npos) {
    BERTH_ASSIGN_OR_RETURN(hi, ParseNumber(item.substr(dash + 1), item, tok));
  }
  if (hi < lo) {
    return Status::InvalidArgument("reversed range " + Quote(item) + " in hostlist " + Quote(tok));
  }
  NumRange range{lo, hi, static_cast<int>(lo_text.size())};
  if (range.count() > kMaxHostsPerRange) {
    return Status::InvalidArgument("range " + Quote(item) + " in hostlist " + Quote(tok) +
                                   " names " + std::to_string(range.count()) + " hosts; at most " +
                                   std::to_string(kMaxHostsPerRange) + " are allowed in one range");
  }
  return range;
}

Result<std::vector<NumRange>> ParseRangeList(std::string_view body, std::string_view tok) {
  std::vector<NumRange> ranges;
  size_t start = 0;
  while (true) {
    size_t comma = body.find(',', start);
    std::string_view item = body.substr(start, comma - start);
    if (item.empty()) {
      return Status::InvalidArgument("empty range in brackets of hostlist " + Quote(tok));
    }
    BERTH_ASSIGN_OR_RETURN(NumRange range, ParseRange(item, tok));
    ranges.push_back(range);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return ranges;
}

// Splits `expr` into host tokens at separators outside brackets. Brackets must pair and not nest.
Result<std::vector<std::string_view>> Tokenize(std::string_view expr) {
  std::vector<std::string_view> tokens;
  size_t pos = 0;
  while (pos < expr.size()) {
    if (IsSeparator(expr[pos])) {
      ++pos;
      continue;
    }
    size_t start = pos;
    bool open = false;
    for (; pos < expr.size() && (open || !IsSeparator(expr[pos])); ++pos) {
      if (expr[pos] == '[') {
        if (open) return Status::InvalidArgument("nested '[' in hostlist " + Quote(expr));
        open = true;
      } else if (expr[pos] == ']') {
        if (!open) return Status::InvalidArgument("unbalanced ']' in hostlist " + Quote(expr));
        open = false;
      }
    }
    if (open) return Status::InvalidArgument("unbalanced '[' in hostlist " + Quote(expr));
    tokens.push_back(expr.substr(start, pos - start));
  }
  return tokens;
}

Result<Token> ParseToken(std::string_view tok) {
  Token token;
  size_t pos = 0;
  while (true) {
    size_t open = tok.find('[', pos);
    token.literals.push_back(tok.substr(pos, open - pos));
    if (open == std::string_view::npos) break;
    size_t close = tok.find(']', open);  // Tokenize() guarantees a match
    BERTH_ASSIGN_OR_RETURN(auto ranges,
                           ParseRangeList(tok.substr(open + 1, close - open - 1), tok));
    token.groups.push_back(std::move(ranges));
    if (token.groups.size() > kMaxGroups) {
      return Status::InvalidArgument("hostlist " + Quote(tok) + " has more than " +
                                     std::to_string(kMaxGroups) + " bracket groups in one name");
    }
    pos = close + 1;
  }
  if (!token.groups.empty()) {
    if (!token.literals.back().empty()) {
      return Status::InvalidArgument("text " + Quote(token.literals.back()) +
                                     " after the last ']' in hostlist " + Quote(tok) +
                                     " (Slurm allows no suffix after the last range)");
    }
    token.literals.pop_back();
  }
  return token;
}

size_t GroupSize(const std::vector<NumRange>& group) {
  size_t n = 0;
  for (const NumRange& r : group) n += r.count();
  return n;
}

// Number of hosts the token names, or an error when a prefix group exceeds Slurm's
// MAX_PREFIX_CNT (64K) or the total exceeds kMaxHosts.
Result<size_t> CountHosts(const Token& token, std::string_view tok) {
  size_t total = 1;
  for (size_t g = 0; g < token.groups.size(); ++g) {
    size_t n = GroupSize(token.groups[g]);
    if (g + 1 < token.groups.size() && n > kMaxHostsPerRange) {
      return Status::InvalidArgument("a bracket of hostlist " + Quote(tok) + " names " +
                                     std::to_string(n) + " prefixes; at most " +
                                     std::to_string(kMaxHostsPerRange) + " are allowed");
    }
    if (n > kMaxHosts || total * n > kMaxHosts) return kMaxHosts + 1;
    total *= n;
  }
  return total;
}

class Expander {
 public:
  Expander(const Token& token, std::vector<std::string>* out) : token_(token), out_(out) {}

  void Run() {
    if (token_.groups.empty()) {
      out_->emplace_back(token_.literals[0]);
      return;
    }
    Emit(token_.groups.size() - 1, "");
  }

 private:
  // Hosts of "L0[G0]...L(m-1)[G(m-1)]L(m)" + tail followed by the last group. Like Slurm's
  // _push_range_list(), the rightmost unexpanded prefix group is the outer loop.
  void Emit(size_t m, const std::string& tail) {
    if (m == 0) {
      std::string base = std::string(token_.literals[0]) + tail;
      for (const NumRange& r : token_.groups.back()) {
        for (int64_t v = r.lo; v <= r.hi; ++v) out_->push_back(base + Padded(v, r.width));
      }
      return;
    }
    for (const NumRange& r : token_.groups[m - 1]) {
      for (int64_t v = r.lo; v <= r.hi; ++v) {
        Emit(m - 1, Padded(v, r.width) + std::string(token_.literals[m]) + tail);
      }
    }
  }

  const Token& token_;
  std::vector<std::string>* out_;
};

// ---------------------------------------------------------------------------------------------
// Compress: Slurm's hostrange_t and the hostlist operations on an array of them.

struct HostRange {
  std::string prefix;
  int64_t lo = 0;
  int64_t hi = 0;
  int width = 0;
  bool single = false;  // a name without numeric suffix; lo, hi and width are unused
};

int64_t Count(const HostRange& r) {
  return r.single ? 1 : r.hi - r.lo + 1;
}

HostRange FromName(const std::string& name) {
  size_t end = name.size();
  size_t start = end;
  while (start > 0 && IsDigit(name[start - 1])) --start;
  HostRange r;
  if (start == end || end - start > kMaxDigits) {
    r.prefix = name;
    r.single = true;
    return r;
  }
  r.prefix = name.substr(0, start);
  for (size_t i = start; i < end; ++i) r.lo = r.lo * 10 + (name[i] - '0');
  r.hi = r.lo;
  r.width = static_cast<int>(end - start);
  return r;
}

// Zeros needed to pad `num` to `width` (Slurm's _zero_padded()).
int ZeroPadded(int64_t num, int width) {
  int digits = 1;
  while (num /= 10) ++digits;
  return width > digits ? width - digits : 0;
}

// Slurm's _width_equiv(): are the widths interchangeable without changing either number's
// padding? If so, one width is adjusted to the other (never changing how a number prints).
bool WidthEquiv(int64_t n, int* wn, int64_t m, int* wm) {
  if (*wn == *wm) return true;
  int npad = ZeroPadded(n, *wn);
  int nmpad = ZeroPadded(n, *wm);
  int mpad = ZeroPadded(m, *wm);
  int mnpad = ZeroPadded(m, *wn);
  if (npad != nmpad && mpad != mnpad) return false;
  if (npad != nmpad) {
    *wm = *wn;
  } else {
    *wn = *wm;
  }
  return true;
}

bool WidthCombine(HostRange& a, HostRange& b) {
  return WidthEquiv(a.lo, &a.width, b.lo, &b.width);
}

char At(std::string_view s, size_t i) {
  return i < s.size() ? s[i] : '\0';
}
// Martin Pool's strnatcmp compare_right(): the longest run of digits wins, then the first
// difference.
int CompareRight(std::string_view a, size_t ai, std::string_view b, size_t bi) {
  int bias = 0;
  for (;; ++ai, ++bi) {
    char x = At(a, ai);
    char y = At(b, bi);
    if (!IsDigit(x) && !IsDigit(y)) return bias;
    if (!IsDigit(x)) return -1;
    if (!IsDigit(y)) return +1;
    if (x < y && bias == 0) bias = -1;
    if (x > y && bias == 0) bias = +1;
  }
}

// strnatcmp compare_left(): numbers with leading zeros compare digit by digit.
int CompareLeft(std::string_view a, size_t ai, std::string_view b, size_t bi) {
  for (;; ++ai, ++bi) {
    char x = At(a, ai);
    char y = At(b, bi);
    if (!IsDigit(x) && !IsDigit(y)) return 0;
    if (!IsDigit(x)) return -1;
    if (!IsDigit(y)) return +1;
    if (x != y) return x < y ? -1 : +1;
  }
}

// Slurm's strnatcmp(): "n2" < "n10", "rack2-" < "rack10-".
int StrNatCmp(std::string_view a, std::string_view b) {
  size_t ai = 0;
  size_t bi = 0;
  while (true) {
    char ca = At(a, ai);
    char cb = At(b, bi);
    while (IsSpace(ca)) ca = At(a, ++ai);
    while (IsSpace(cb)) cb = At(b, ++bi);
    if (IsDigit(ca) && IsDigit(cb)) {
      bool fractional = ca == '0' || cb == '0';
      int r = fractional ? CompareLeft(a, ai, b, bi) : CompareRight(a, ai, b, bi);
      if (r != 0) return r;
    }
    if (ca == '\0' && cb == '\0') return 0;
    auto sa = static_cast<signed char>(ca);
    auto sb = static_cast<signed char>(cb);
    if (sa != sb) return sa < sb ? -1 : +1;
    ++ai;
    ++bi;
  }
}

// Slurm's hostrange_prefix_cmp(). Where strnatcmp calls different prefixes equal (they differ
// only in white space) berth breaks the tie with a plain comparison rather than merging them.
int PrefixCmp(const HostRange& a, const HostRange& b) {
  int r = StrNatCmp(a.prefix, b.prefix);
  if (r == 0 && a.prefix != b.prefix) r = a.prefix < b.prefix ? -1 : +1;
  return r != 0 ? r : static_cast<int>(b.single) - static_cast<int>(a.single);
}

bool WithinRange(const HostRange& a, const HostRange& b) {
  return PrefixCmp(a, b) == 0 && !a.single && !b.single;
}

// Slurm's hostrange_cmp() (it may adjust widths, as Slurm's does).
int RangeCmp(HostRange& a, HostRange& b) {
  int r = PrefixCmp(a, b);
  if (r != 0) return r;
  if (WidthCombine(a, b)) return a.lo < b.lo ? -1 : (a.lo > b.lo ? 1 : 0);
  return a.width < b.width ? -1 : (a.width > b.width ? 1 : 0);
}

// glibc's qsort() is a top-down merge sort (msort); Slurm 22.05 on Debian 12 sorts with it, so
// berth repeats its split and merge order exactly, including which equal ranges come first.
void MergeSort(std::vector<HostRange>& r, std::vector<size_t>& idx, size_t b, size_t n,
               std::vector<size_t>& tmp) {
  if (n <= 1) return;
  size_t n1 = n / 2;
  size_t n2 = n - n1;
  MergeSort(r, idx, b, n1, tmp);
  MergeSort(r, idx, b + n1, n2, tmp);
  size_t i = b;
  size_t j = b + n1;
  tmp.clear();
  while (n1 > 0 && n2 > 0) {
    if (RangeCmp(r[idx[i]], r[idx[j]]) <= 0) {
      tmp.push_back(idx[i++]);
      --n1;
    } else {
      tmp.push_back(idx[j++]);
      --n2;
    }
  }
  while (n1-- > 0) tmp.push_back(idx[i++]);
  for (size_t k = 0; k < tmp.size(); ++k) idx[b + k] = tmp[k];
}

void Sort(std::vector<HostRange>& ranges) {
  std::vector<size_t> idx(ranges.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::vector<size_t> tmp;
  tmp.reserve(ranges.size());
  MergeSort(ranges, idx, 0, ranges.size(), tmp);
  std::vector<HostRange> sorted;
  sorted.reserve(ranges.size());
  for (size_t i : idx) sorted.push_back(std::move(ranges[i]));
  ranges = std::move(sorted);
}

// Slurm's hostlist_push_range(): extend the last range when `r` continues it.
void Push(std::vector<HostRange>& ranges, HostRange r) {
  if (!ranges.empty()) {
    HostRange& tail = ranges.back();
    if (tail.hi == r.lo - 1 && PrefixCmp(tail, r) == 0 && WidthCombine(tail, r)) {
      tail.hi = r.hi;
      return;
    }
  }
  ranges.push_back(std::move(r));
}

std::vector<HostRange> Build(const std::vector<std::string>& names) {
  std::vector<HostRange> ranges;
  for (const std::string& name : names) {
    if (!name.empty()) Push(ranges, FromName(name));
  }
  return ranges;
}

std::string NumStr(const HostRange& r) {
  if (r.single) return "";
  std::string s = Padded(r.lo, r.width);
  if (r.lo < r.hi) s += "-" + Padded(r.hi, r.width);
  return s;
}

// Slurm's hostlist_ranged_string() with _get_bracketed_list().
std::string RangedString(const std::vector<HostRange>& r) {
  std::string out;
  size_t i = 0;
  while (i < r.size()) {
    if (i > 0) out += ',';
    size_t start = i;
    bool bracket = Count(r[i]) > 1 || (i + 1 < r.size() && WithinRange(r[i], r[i + 1]));
    out += r[i].prefix;
    if (bracket) out += '[';
    do {
      if (i > start) out += ',';
      out += NumStr(r[i]);
    } while (++i < r.size() && WithinRange(r[i], r[i - 1]));
    if (bracket) out += ']';
  }
  return out;
}

// Slurm's hostrange_intersect(); assumes a sorts before b.
std::optional<HostRange> Intersect(HostRange& a, HostRange& b) {
  if (a.single || b.single) return std::nullopt;
  if (a.hi > b.lo && PrefixCmp(a, b) == 0 && WidthCombine(a, b)) {
    HostRange common = a;
    common.lo = b.lo;
    common.hi = b.hi < a.hi ? b.hi : a.hi;
    return common;
  }
  return std::nullopt;
}

// Slurm's hostlist_collapse(): join adjacent ranges that continue each other.
void Collapse(std::vector<HostRange>& r) {
  for (size_t i = r.size() - (r.empty() ? 0 : 1); i > 0; --i) {
    HostRange& prev = r[i - 1];
    if (prev.hi == r[i].lo - 1 && PrefixCmp(prev, r[i]) == 0 && WidthCombine(prev, r[i])) {
      prev.hi = r[i].hi;
      r.erase(r.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
}

// Slurm's hostlist_coalesce(): split overlapping neighbours of a sorted list into the shared
// hosts (kept as single-host ranges) and the rest, then collapse. Duplicates are kept.
void Coalesce(std::vector<HostRange>& r) {
  size_t guard = 4 * r.size() + 64;  // Slurm's loop terminates; this only bounds a berth bug
  for (size_t i = r.size() - (r.empty() ? 0 : 1); i > 0 && guard > 0; --i) {
    std::optional<HostRange> common = Intersect(r[i - 1], r[i]);
    if (!common) continue;
    --guard;
    if (common->hi < r[i - 1].hi) r[i].hi = r[i - 1].hi;
    r[i - 1].hi = common->lo;
    r[i].lo = common->hi;
    const int64_t prev_hi = r[i - 1].hi;
    const int64_t next_lo = r[i].lo;
    size_t j = i;
    for (int64_t v = common->lo; v <= common->hi; ++v) {
      HostRange one = *common;
      one.lo = one.hi = v;
      auto at = [&r](size_t k) { return r.begin() + static_cast<std::ptrdiff_t>(k); };
      if (v > prev_hi) r.insert(at(j++), one);
      if (v < next_lo) r.insert(at(j++), one);
    }
    i = r.size();
  }
  Collapse(r);
}

// Slurm's hostrange_join(): merges b into a when they touch or overlap; returns false when
// they stay apart. Assumes a sorts before b.
bool Join(HostRange& a, HostRange& b) {
  if (PrefixCmp(a, b) != 0 || !WidthCombine(a, b)) return false;
  if (a.single && b.single) return true;
  if (a.hi == b.lo - 1) {
    a.hi = b.hi;
    return true;
  }
  if (a.hi >= b.lo) {
    if (a.hi < b.hi) a.hi = b.hi;
    return true;
  }
  return false;
}

}  // namespace

Result<std::vector<std::string>> Expand(std::string_view expr) {
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string_view> toks, Tokenize(expr));
  std::vector<Token> tokens;
  size_t total = 0;
  for (std::string_view tok : toks) {
    BERTH_ASSIGN_OR_RETURN(Token token, ParseToken(tok));
    BERTH_ASSIGN_OR_RETURN(size_t n, CountHosts(token, tok));
    total += n;
    if (total > kMaxHosts) {
      return Status::InvalidArgument("hostlist " + Quote(expr) + " names more than " +
                                     std::to_string(kMaxHosts) + " hosts");
    }
    tokens.push_back(std::move(token));
  }
  std::vector<std::string> hosts;
  hosts.reserve(total);
  for (const Token& token : tokens) Expander(token, &hosts).Run();
  return hosts;
}

std::string Compress(const std::vector<std::string>& names) {
  return RangedString(Build(names));
}

std::string CompressSorted(const std::vector<std::string>& names) {
  std::vector<HostRange> ranges = Build(names);
  Sort(ranges);
  Coalesce(ranges);
  return RangedString(ranges);
}

std::string CompressUnique(const std::vector<std::string>& names) {
  std::vector<HostRange> ranges = Build(names);
  Sort(ranges);
  std::vector<HostRange> unique;
  for (HostRange& r : ranges) {
    if (unique.empty() || !Join(unique.back(), r)) unique.push_back(std::move(r));
  }
  return RangedString(unique);
}

}  // namespace berth::hostlist
