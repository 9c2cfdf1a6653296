// Small ASCII text helpers that every layer uses: trimming, case-insensitive comparison, digits,
// splitting. One copy for the whole tree (the parsers of Slurm values, HTTP, selectors, traces).
//
// Thread safety: all functions are pure. None depends on the locale: these are the C locale's
// ASCII rules, as Slurm's and Kubernetes' formats define them.
#ifndef BERTH_COMMON_STRINGS_H_
#define BERTH_COMMON_STRINGS_H_

#include <string>
#include <string_view>
#include <vector>

namespace berth {

// '0'..'9' only (std::isdigit depends on the locale and is undefined for negative chars).
constexpr bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
// Space, tab, LF, VT, FF or CR: std::isspace in the C locale, without its undefined behaviour for
// negative chars.
constexpr bool IsSpace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}
constexpr char ToLowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
constexpr char ToUpperAscii(char c) {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}

std::string ToLower(std::string_view s);
std::string ToUpper(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
// Whether s[pos..] begins with `word`, in any case ("Now+1hour" at 0 with "now").
bool StartsWithIgnoreCase(std::string_view s, std::string_view word, size_t pos = 0);
// Every character a digit, and at least one.
bool AllDigits(std::string_view s);

// Blanks (space and tab) off both ends: "  a b\t" -> "a b". The view points into `s`.
std::string_view Trim(std::string_view s);
// Any whitespace (IsSpace: space, tab, CR, LF, FF, VT) off both ends.
std::string_view TrimWhitespace(std::string_view s);

// Splits on `sep`, keeping empty parts so that callers can reject them: "a,,b" -> {a, "", b};
// "" -> {""}. The views point into `s`.
std::vector<std::string_view> Split(std::string_view s, char sep);
// A comma list as users write one: items trimmed of blanks, empty ones dropped:
// " a, b,,c " -> {"a", "b", "c"}; "" -> {}.
std::vector<std::string> SplitList(std::string_view text, char sep = ',');
// A list as strtok reads one: empty items dropped, nothing trimmed: "a, b,,c" -> {"a", " b", "c"};
// "" -> {}. Slurm's commands read their comma lists so (" b" matches no user named "b").
std::vector<std::string> SplitNonEmpty(std::string_view text, char sep = ',');

// `s` with every byte outside printable ASCII (0x20-0x7e) as '?', cut to `max_chars`: safe in a
// message or a log line whatever the input held.
std::string Printable(std::string_view s, size_t max_chars = std::string_view::npos);
// Printable(s) in single quotes, as error messages show a bad value: 'a?b'. Text longer than
// `max_chars` is cut and marked inside the quotes: 'abc...'.
std::string QuoteForMessage(std::string_view s, size_t max_chars = std::string_view::npos);

// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF), the only text JSON may carry.
bool IsUtf8(std::string_view s);

}  // namespace berth

#endif  // BERTH_COMMON_STRINGS_H_
