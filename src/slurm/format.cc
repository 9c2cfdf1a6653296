// Slurm's output formats: parsing "-o" and "-O" strings and fitting values into fields, following
// squeue/sinfo/sprio opts.c (_parse_token, _parse_long_token) and print.c (_print_str) of 22.05.
#include "slurm/format.h"

#include <algorithm>
#include <cctype>

#include "common/strings.h"

namespace berth::slurm {
namespace {

// Reads decimal digits at `text[*pos]`; Slurm has no limit, berth caps at kMaxFieldWidth.
int ReadWidth(std::string_view text, size_t* pos) {
  int width = 0;
  while (*pos < text.size() && IsDigit(text[*pos])) {
    width = std::min(kMaxFieldWidth, width * 10 + (text[*pos] - '0'));
    ++*pos;
  }
  return width;
}

// One "%..." token without its '%': ".18i suffix".
FormatField ParsePercentToken(std::string_view token) {
  FormatField f;
  f.raw = "%" + std::string(token);
  size_t i = 0;
  if (i < token.size() && token[i] == '.') {
    f.right = true;
    ++i;
  }
  f.width = ReadWidth(token, &i);
  if (i < token.size()) {
    f.key = std::string(1, token[i]);
    ++i;
  }
  f.suffix = std::string(token.substr(i));
  return f;
}

// One "-O" entry: "name", "name:30", "name:.10", "name:12 suffix".
FormatField ParseListToken(std::string_view token, int default_width) {
  FormatField f;
  f.raw = std::string(token);
  size_t colon = token.find(':');
  f.key = std::string(token.substr(0, colon));
  if (colon == std::string_view::npos) {
    f.width = default_width;
    return f;
  }
  size_t i = colon + 1;
  if (i < token.size() && token[i] == '.') {
    f.right = true;
    ++i;
  }
  f.width = ReadWidth(token, &i);
  f.suffix = std::string(token.substr(i));
  return f;
}

}  // namespace

OutputFormat ParsePercentFormat(std::string_view text) {
  OutputFormat out;
  size_t first = text.find('%');
  out.prefix = std::string(text.substr(0, first));
  if (first == std::string_view::npos) return out;
  size_t pos = first;
  while (pos < text.size()) {
    size_t start = pos + 1;
    size_t next = text.find('%', start);
    if (next == std::string_view::npos) next = text.size();
    // strtok() skips empty tokens, so "%%" is one separator.
    if (next > start) out.fields.push_back(ParsePercentToken(text.substr(start, next - start)));
    pos = next;
  }
  return out;
}

OutputFormat ParseFieldList(std::string_view text, int default_width) {
  OutputFormat out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    if (comma > pos)
      out.fields.push_back(ParseListToken(text.substr(pos, comma - pos), default_width));
    pos = comma + 1;
  }
  return out;
}

std::string AllLettersFormat(bool upper_space) {
  std::string out = "%a";
  for (char c = 'b'; c <= 'z'; ++c) out += std::string("|%") + c;
  for (char c = 'A'; c <= 'Z'; ++c) out += std::string("|%") + c + (upper_space ? " " : "");
  return out;
}

void AppendField(std::string& out, std::string_view value, int width, bool right, bool cut) {
  if (width <= 0) {
    out += value;
    return;
  }
  const size_t w = static_cast<size_t>(width);
  if (!right || cut) value = value.substr(0, std::min(w, value.size()));
  if (value.size() >= w) {
    out += value;
  } else if (right) {
    out.append(w - value.size(), ' ');
    out += value;
  } else {
    out += value;
    out.append(w - value.size(), ' ');
  }
}

std::string FitField(std::string_view value, int width, bool right, bool cut) {
  std::string out;
  AppendField(out, value, width, right, cut);
  return out;
}

std::vector<std::string> ReplaceUnknownFields(OutputFormat& format, bool percent_form,
                                              const std::function<bool(std::string_view)>& known) {
  std::vector<std::string> rejected;
  for (FormatField& f : format.fields) {
    if (known(f.key)) continue;
    rejected.push_back(f.key);
    f.key.clear();
    f.width = 0;
    if (percent_form) f.suffix = f.raw;
  }
  return rejected;
}

std::string RenderLine(const OutputFormat& format, const CellFunction& cell) {
  std::string line = format.prefix;
  for (const FormatField& f : format.fields) {
    Cell c = f.key.empty() ? Cell{} : cell(f);
    AppendField(line, c.text, f.width, f.right, c.cut);
    line += f.suffix;
  }
  return line;
}

std::vector<SortKey> ParseSortList(std::string_view text,
                                   const std::vector<std::string_view>& multi_char) {
  std::vector<SortKey> keys;
  bool descending = false, config_order = false;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == ',' || c == '+' || c == '-' || c == '#') {
      // Only the character just before a key counts, as in Slurm's scan.
      descending = c == '-';
      config_order = c == '#';
      ++i;
      continue;
    }
    SortKey k;
    k.descending = descending;
    k.config_order = config_order;
    size_t len = 1;
    for (std::string_view name : multi_char) {
      if (StartsWithIgnoreCase(text, name, i)) len = name.size();
    }
    k.key = std::string(text.substr(i, len));
    keys.push_back(std::move(k));
    descending = config_order = false;
    i += len;
  }
  return keys;
}

}  // namespace berth::slurm
