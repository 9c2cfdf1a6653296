#include "common/markup.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

TEST(MarkupTest, EscapesEntitiesAndForbiddenControls) {
  EXPECT_EQ(EscapeMarkup(R"(<a href="x">Tom & 'Jerry'</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &apos;Jerry&apos;&lt;/a&gt;");
  EXPECT_EQ(EscapeMarkup("a\tb\nc\x01"), "a\tb?c?");
  EXPECT_EQ(EscapeMarkup("plain, h\xc3\xa9"), "plain, h\xc3\xa9");  // UTF-8 kept
}

}  // namespace
}  // namespace berth
