// Escaping text for XML and HTML (SVG plots, the web console's plain pages).
#ifndef BERTH_COMMON_MARKUP_H_
#define BERTH_COMMON_MARKUP_H_

#include <string>
#include <string_view>

namespace berth {

// `s` safe as XML or HTML text and as a quoted attribute value: & < > " ' as entities, and the
// control characters XML 1.0 forbids (all below 0x20 but tab) as '?'.
std::string EscapeMarkup(std::string_view s);

}  // namespace berth

#endif  // BERTH_COMMON_MARKUP_H_
