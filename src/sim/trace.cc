// ReadTrace / ParseTrace: read the file in one go, tell its format, hand it to a reader.
#include "sim/trace.h"

#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <string>
#include <system_error>
#include <utility>

#include "common/strings.h"
#include "sim/readers.h"
#include "sim/text_scan.h"

namespace berth::sim {
namespace {

struct FormatName {
  TraceFormat format;
  std::string_view name;
};

constexpr std::array<FormatName, 5> kFormatNames = {{
    {TraceFormat::kSwf, "swf"},
    {TraceFormat::kPhilly, "philly"},
    {TraceFormat::kItp, "itp"},
    {TraceFormat::kAlibabaPods, "alibaba"},
    {TraceFormat::kJsonl, "jsonl"},
}};

// An SWF job line without a header: 18 or more whitespace-separated fields, the first 18 numeric.
bool LooksLikeSwfJobLine(std::string_view line) {
  size_t count = 0;
  size_t i = 0;
  while (count < 18) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) break;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (!internal::ParseNumber(line.substr(start, i - start))) return false;
    ++count;
  }
  return count == 18;
}

// Tells the format from the file name and its first non-blank line.
Result<TraceFormat> DetectFormat(std::string_view text, std::string_view name) {
  if (text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f &&
      static_cast<unsigned char>(text[1]) == 0x8b) {
    return Status::InvalidArgument(std::string(name) +
                                   ": the file is gzip-compressed; decompress it first");
  }
  const std::string ext = internal::LowerExtension(name);
  if (ext == "jsonl" || ext == "ndjson") return TraceFormat::kJsonl;
  internal::LineScanner lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    line = TrimWhitespace(line);
    if (!line.empty()) break;
  }
  if (line.empty()) {
    if (ext == "swf") return TraceFormat::kSwf;
    return Status::InvalidArgument(std::string(name) +
                                   ": the file is empty; cannot tell its format (give --format)");
  }
  if (line.front() == '{') return TraceFormat::kJsonl;
  if (line.front() == ';' || ext == "swf" || LooksLikeSwfJobLine(line)) return TraceFormat::kSwf;
  return internal::DetectCsvFormat(line, name);
}

}  // namespace

std::string_view TraceFormatName(TraceFormat f) {
  for (const FormatName& n : kFormatNames) {
    if (n.format == f) return n.name;
  }
  return "unknown";
}

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  for (const FormatName& n : kFormatNames) {
    if (EqualsIgnoreCase(name, n.name)) return n.format;
  }
  return Status::InvalidArgument("unknown trace format " + internal::Quote(name) +
                                 " (expected swf, philly, itp, alibaba or jsonl)");
}

Result<Trace> ParseTrace(std::string_view text, std::string_view name, const ReadOptions& options) {
  Trace trace;
  trace.name = std::string(internal::BaseName(name));
  if (options.format) {
    trace.format = *options.format;
  } else {
    BERTH_ASSIGN_OR_RETURN(trace.format, DetectFormat(text, name));
  }
  Status status;
  switch (trace.format) {
    case TraceFormat::kSwf:
      status = internal::ReadSwf(text, name, options, &trace);
      break;
    case TraceFormat::kPhilly:
    case TraceFormat::kItp:
    case TraceFormat::kAlibabaPods:
      status = internal::ReadGpuCsv(text, name, options, &trace);
      break;
    case TraceFormat::kJsonl:
      status = internal::ReadJsonl(text, name, options, &trace);
      break;
  }
  if (!status.ok()) return status;
  return trace;
}

Result<Trace> ReadTrace(const std::string& path, const ReadOptions& options) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int error = errno;
    std::string message =
        "cannot open trace '" + path + "': " + std::generic_category().message(error);
    if (error == ENOENT) return Status::NotFound(std::move(message));
    if (error == EACCES) return Status::PermissionDenied(std::move(message));
    return Status::InvalidArgument(std::move(message));
  }
  // Size the buffer for one read; pipes and other streams just grow it.
  struct stat st {};
  if (fstat(fileno(file), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fclose(file);
    return Status::InvalidArgument("cannot read trace '" + path + "': it is a directory");
  }
  std::string text;
  if (S_ISREG(st.st_mode) && st.st_size > 0) text.reserve(static_cast<size_t>(st.st_size));
  std::array<char, 1 << 16> buffer;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), file)) > 0) text.append(buffer.data(), n);
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) {
    return Status::InvalidArgument("cannot read trace '" + path +
                                   "': " + std::generic_category().message(error));
  }
  return ParseTrace(text, path, options);
}

}  // namespace berth::sim
