// Slurm's output formats, shared by squeue, sinfo, sprio and sacct:
//  * the "%[.][width]X[suffix]" strings of -o/--format ("%.18i %.9P %8j"), with literal text
//    before the first '%' and after each field;
//  * the "name[:[.][width][suffix]],..." lists of -O/--Format ("JobID,Name:30,State:.10");
//  * how Slurm 22.05 fits a value into a field (print.c _print_str): a left-justified value is
//    padded with spaces and cut to the width; a right-justified value is padded on the left and
//    cut only where Slurm cuts that field (node lists and times are never cut when
//    right-justified); width 0 means "as wide as the value".
// The meaning of each letter or name belongs to the command: this file only parses and fits.
//
// Thread safety: all functions are pure.
#ifndef BERTH_SLURM_FORMAT_H_
#define BERTH_SLURM_FORMAT_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::slurm {

// Widths above this are treated as this (Slurm would allocate whatever the user typed).
inline constexpr int kMaxFieldWidth = 4096;

// One field of an output format.
struct FormatField {
  std::string key;     // the letter of "%i" ("i"), or the name given to -O ("JobID") as typed
  int width = 0;       // 0: as wide as the value
  bool right = false;  // '.' was given
  std::string suffix;  // literal text printed after the field
  std::string raw;     // the field as written, "%.18i" or "Name:30" (printed for unknown keys)

  friend bool operator==(const FormatField&, const FormatField&) = default;
};

struct OutputFormat {
  std::string prefix;  // literal text before the first field
  std::vector<FormatField> fields;

  friend bool operator==(const OutputFormat&, const OutputFormat&) = default;
};

// Parses a "-o" format as Slurm's parse_format does: the text before the first '%' is the
// prefix; each '%' starts a field: an optional '.', a decimal width, then one character (the
// key); whatever follows up to the next '%' is that field's suffix. "%all" is not expanded here
// (see AllLettersFormat). "%%" and a '%' at the very end are skipped, as strtok() skips them.
// Keys the command does not know are reported by it ("Invalid job format specification: -") and
// printed as written (FormatField::raw), as Slurm does.
OutputFormat ParsePercentFormat(std::string_view text);

// Parses a "-O" list as Slurm's parse_long_format does: fields separated by ','; each is a name,
// optionally followed by ':' then an optional '.', a decimal width and a suffix. A field without
// ':' gets `default_width`, left-justified (squeue and sinfo use 20); "name:" alone gets width 0.
OutputFormat ParseFieldList(std::string_view text, int default_width = 20);

// What "-o %all" means: every letter a-z then A-Z, with '|' between them (sinfo also puts a space
// after the upper-case ones: `upper_space`).
std::string AllLettersFormat(bool upper_space = false);

// Fits `value` into a field as Slurm's _print_str does. `cut` applies to right-justified fields
// only; a left-justified field with a width is always cut.
std::string FitField(std::string_view value, int width, bool right, bool cut = true);
// The same, appended to `out` (no string of its own).
void AppendField(std::string& out, std::string_view value, int width, bool right, bool cut = true);

// One cell of a table: its text, and whether Slurm cuts it when right-justified.
struct Cell {
  std::string text;
  bool cut = true;
};

// The text of the field `f` for the line being printed (the header or one record).
using CellFunction = std::function<Cell(const FormatField& f)>;

// Replaces each field whose key `known` rejects with what Slurm prints for it: for a "-o" field
// (`percent_form`) its text as written, for a "-O" field only its suffix; the field's key becomes
// "" (whose cell is empty). Returns the rejected keys in order, for the command's message
// ("Invalid job format specification: X").
std::vector<std::string> ReplaceUnknownFields(OutputFormat& format, bool percent_form,
                                              const std::function<bool(std::string_view)>& known);

// One output line (without the newline): prefix, then each field fitted and followed by its
// suffix.
std::string RenderLine(const OutputFormat& format, const CellFunction& cell);

// A sort list as squeue, sinfo and sprio take it ("P,t,-p", "+i", "-S"): each entry's key and
// whether it sorts in descending order. `multi_char` names longer keys ("cluster") that are taken
// whole; other entries are single characters, and commas are optional between them (Slurm scans
// the string one character at a time).
struct SortKey {
  std::string key;
  bool descending = false;
  bool config_order = false;  // sinfo's "#P": partitions in configuration order

  friend bool operator==(const SortKey&, const SortKey&) = default;
};
std::vector<SortKey> ParseSortList(std::string_view text,
                                   const std::vector<std::string_view>& multi_char = {});

}  // namespace berth::slurm

#endif  // BERTH_SLURM_FORMAT_H_
