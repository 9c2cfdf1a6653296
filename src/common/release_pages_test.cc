#include "common/release_pages.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

namespace berth {
namespace {

TEST(ReleasePagesTest, WholePagesReadBackAsZerosAndTheEdgesKeepTheirBytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<char> block(8 * page, 'x');
  // From inside the first page to inside the last: pages 1..6 are whole, the ends are not.
  char* begin = block.data() + page / 2 + (page - reinterpret_cast<uintptr_t>(block.data()) % page);
  char* end = begin + 6 * page;
  ReleasePages(begin, static_cast<size_t>(end - begin));
  size_t zeros = 0;
  for (char* p = begin; p < end; ++p) zeros += *p == 0 ? 1 : 0;
  EXPECT_GE(zeros, 5 * page);  // the whole pages inside
  EXPECT_LE(zeros, 6 * page);
  for (char* p = block.data(); p < begin; ++p) ASSERT_EQ(*p, 'x');  // before: untouched
  for (char* p = end; p < block.data() + block.size(); ++p) ASSERT_EQ(*p, 'x');
}

TEST(ReleasePagesTest, SmallContainersKeepTheirPages) {
  std::string small(kReleasePagesMinBytes / 2, 'y');
  ReleasePagesOf(small);
  EXPECT_EQ(small, std::string(kReleasePagesMinBytes / 2, 'y'));
  std::vector<int32_t> large(kReleasePagesMinBytes, 7);  // 4 bytes each: well over the bound
  ReleasePagesOf(large);
  size_t zeros = 0;
  for (int32_t v : large) zeros += v == 0 ? 1 : 0;
  EXPECT_GT(zeros, large.size() / 2);
}

}  // namespace
}  // namespace berth
