#include "slurm/format.h"

#include <gtest/gtest.h>

#include <map>

namespace berth::slurm {
namespace {

FormatField Field(std::string key, int width, bool right, std::string suffix, std::string raw) {
  FormatField f;
  f.key = std::move(key);
  f.width = width;
  f.right = right;
  f.suffix = std::move(suffix);
  f.raw = std::move(raw);
  return f;
}

TEST(FormatParse, PercentFormatFields) {
  OutputFormat f = ParsePercentFormat("%.18i %.9P %8j|%u");
  EXPECT_EQ(f.prefix, "");
  ASSERT_EQ(f.fields.size(), 4u);
  EXPECT_EQ(f.fields[0], Field("i", 18, true, " ", "%.18i "));
  EXPECT_EQ(f.fields[1], Field("P", 9, true, " ", "%.9P "));
  EXPECT_EQ(f.fields[2], Field("j", 8, false, "|", "%8j|"));
  EXPECT_EQ(f.fields[3], Field("u", 0, false, "", "%u"));
}

TEST(FormatParse, PercentFormatPrefixAndOddPercents) {
  struct Case {
    const char* text;
    std::string prefix;
    std::vector<std::string> keys;
  };
  const Case cases[] = {
      {"abc", "abc", {}},     // no field at all: printed as is on each line
      {"x%jy%", "x", {"j"}},  // a trailing '%' is dropped (strtok)
      {"%%j", "", {"j"}},     // "%%" is one separator
      {"", "", {}},           //
      {"%-5j", "", {"-"}},    // '-' is not a flag in Slurm: an invalid key
      {"%5.3j", "", {"."}},   // nor is a precision
      {"#%5", "#", {""}},     // a width with no key
  };
  for (const Case& c : cases) {
    OutputFormat f = ParsePercentFormat(c.text);
    EXPECT_EQ(f.prefix, c.prefix) << c.text;
    std::vector<std::string> keys;
    for (const FormatField& field : f.fields) keys.push_back(field.key);
    EXPECT_EQ(keys, c.keys) << c.text;
  }
}

TEST(FormatParse, WidthIsCapped) {
  OutputFormat f = ParsePercentFormat("%99999999999i");
  ASSERT_EQ(f.fields.size(), 1u);
  EXPECT_EQ(f.fields[0].width, kMaxFieldWidth);
}

TEST(FormatParse, FieldList) {
  OutputFormat f = ParseFieldList("JobID,Name:30,State:.10x,reason:,nodes:0 ,,", 20);
  ASSERT_EQ(f.fields.size(), 5u);
  EXPECT_EQ(f.fields[0], Field("JobID", 20, false, "", "JobID"));
  EXPECT_EQ(f.fields[1], Field("Name", 30, false, "", "Name:30"));
  EXPECT_EQ(f.fields[2], Field("State", 10, true, "x", "State:.10x"));
  EXPECT_EQ(f.fields[3], Field("reason", 0, false, "", "reason:"));
  EXPECT_EQ(f.fields[4], Field("nodes", 0, false, " ", "nodes:0 "));
}

TEST(FormatParse, AllLetters) {
  std::string all = AllLettersFormat();
  EXPECT_EQ(all.substr(0, 8), "%a|%b|%c");
  EXPECT_EQ(all.substr(all.size() - 6), "|%Y|%Z");
  OutputFormat f = ParsePercentFormat(all);
  EXPECT_EQ(f.fields.size(), 52u);
  EXPECT_EQ(ParsePercentFormat(AllLettersFormat(true)).fields.back().suffix, " ");
}

TEST(FormatFit, SlurmPrintStr) {
  struct Case {
    const char* value;
    int width;
    bool right, cut;
    const char* want;
  };
  const Case cases[] = {
      {"averyveryverylongname", 8, false, true, "averyver"},  // left: always cut
      {"averyveryverylongname", 8, false, false, "averyver"},
      {"averyveryverylongname", 8, true, true, "averyver"},  // right + cut: the first 8
      {"bench[1-4]", 5, true, false, "bench[1-4]"},          // right, not cut: node lists
      {"ab", 5, true, true, "   ab"},
      {"ab", 5, false, true, "ab   "},
      {"ab", 0, true, true, "ab"},  // width 0: the value as is
      {"", 3, false, true, "   "},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(FitField(c.value, c.width, c.right, c.cut), c.want)
        << c.value << " " << c.width << " " << c.right << " " << c.cut;
  }
}

TEST(FormatRender, DefaultSqueueHeader) {
  OutputFormat f = ParsePercentFormat("%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R");
  std::string header = RenderLine(f, [](const FormatField& field) {
    static const std::map<std::string, std::string> titles = {
        {"i", "JOBID"}, {"P", "PARTITION"}, {"j", "NAME"},  {"u", "USER"},
        {"t", "ST"},    {"M", "TIME"},      {"D", "NODES"}, {"R", "NODELIST(REASON)"}};
    return Cell{titles.at(field.key), field.key != "R"};
  });
  EXPECT_EQ(header,
            "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)");
}

TEST(FormatRender, UnknownFieldsPrintAsSlurmDoes) {
  OutputFormat percent = ParsePercentFormat("[%-5j][%j]");
  std::vector<std::string> bad =
      ReplaceUnknownFields(percent, true, [](std::string_view k) { return k == "j"; });
  EXPECT_EQ(bad, std::vector<std::string>({"-"}));
  auto cell = [](const FormatField&) { return Cell{"NAME", true}; };
  EXPECT_EQ(RenderLine(percent, cell), "[%-5j][NAME]");

  OutputFormat list = ParseFieldList("excnodes:40|,name:6|");
  bad = ReplaceUnknownFields(list, false, [](std::string_view k) { return k == "name"; });
  EXPECT_EQ(bad, std::vector<std::string>({"excnodes"}));
  EXPECT_EQ(RenderLine(list, cell), "|NAME  |");
}

TEST(FormatSort, SortLists) {
  using K = SortKey;
  EXPECT_EQ(ParseSortList("P,t,-p"),
            std::vector<K>({{"P", false, false}, {"t", false, false}, {"p", true, false}}));
  EXPECT_EQ(ParseSortList("-pi"), std::vector<K>({{"p", true, false}, {"i", false, false}}));
  EXPECT_EQ(ParseSortList("+i"), std::vector<K>({{"i", false, false}}));
  EXPECT_EQ(ParseSortList("#P,-t"), std::vector<K>({{"P", false, true}, {"t", true, false}}));
  EXPECT_EQ(ParseSortList("-Cluster,i", {"cluster"}),
            std::vector<K>({{"Cluster", true, false}, {"i", false, false}}));
  EXPECT_TRUE(ParseSortList("").empty());
}

}  // namespace
}  // namespace berth::slurm
