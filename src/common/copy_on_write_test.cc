#include "common/copy_on_write.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace berth {
namespace {

struct Value {
  std::string name;
  std::vector<int> ids;
  friend bool operator==(const Value&, const Value&) = default;
};

TEST(CopyOnWriteTest, CopiesShareOneValueUntilOneIsChanged) {
  CopyOnWrite<Value> a(Value{"train", {1, 2, 3}});
  CopyOnWrite<Value> b = a;
  EXPECT_TRUE(a.SharesWith(b));
  EXPECT_EQ(&*a, &*b);
  b.Mut().name = "eval";  // b gets its own copy; a is as it was
  EXPECT_FALSE(a.SharesWith(b));
  EXPECT_EQ(a->name, "train");
  EXPECT_EQ(b->name, "eval");
  EXPECT_EQ(b->ids, (std::vector<int>{1, 2, 3}));
}

TEST(CopyOnWriteTest, TheOnlyHolderChangesItsValueInPlace) {
  CopyOnWrite<Value> a(Value{"train", {}});
  const Value* before = &*a;
  a.Mut().ids.push_back(7);
  EXPECT_EQ(&*a, before);
  {
    CopyOnWrite<Value> b = a;  // shared for a while
  }
  a.Mut().name = "x";  // the other holder is gone: still in place
  EXPECT_EQ(&*a, before);
  EXPECT_EQ(a->ids, std::vector<int>{7});
}

TEST(CopyOnWriteTest, DefaultValuesShareOneEmptyValueThatNoChangeTouches) {
  CopyOnWrite<Value> a;
  CopyOnWrite<Value> b;
  EXPECT_TRUE(a.SharesWith(b));
  a.Mut().name = "set";
  EXPECT_EQ(a->name, "set");
  EXPECT_EQ(b->name, "");
  EXPECT_EQ(CopyOnWrite<Value>()->name, "");
}

TEST(CopyOnWriteTest, ReadsAsAConstReferenceAndAssignsFromAValue) {
  CopyOnWrite<Value> a;
  a = Value{"given", {4}};
  const Value& v = a;
  EXPECT_EQ(v.name, "given");
  EXPECT_EQ((*a).ids, std::vector<int>{4});
}

TEST(CopyOnWriteTest, ValuesMadeInARowShareTheLastWhileEqual) {
  CopyOnWrite<Value> last;
  CopyOnWrite<Value> a = ShareWithLast(Value{"p1", {1}}, last);
  CopyOnWrite<Value> b = ShareWithLast(Value{"p1", {1}}, last);
  CopyOnWrite<Value> c = ShareWithLast(Value{"p2", {1}}, last);
  CopyOnWrite<Value> d = ShareWithLast(Value{"p2", {1}}, last);
  EXPECT_TRUE(a.SharesWith(b));
  EXPECT_FALSE(b.SharesWith(c));
  EXPECT_TRUE(c.SharesWith(d));
  EXPECT_TRUE(d.SharesWith(last));
  EXPECT_EQ(a->name, "p1");
  EXPECT_EQ(d->name, "p2");
  // An empty value equal to the default one stays the shared default.
  CopyOnWrite<Value> fresh;
  EXPECT_TRUE(ShareWithLast(Value{}, fresh).SharesWith(CopyOnWrite<Value>()));
}

// Readers of shared copies on other threads never see a holder's change (run under the
// sanitizers in CI).
TEST(CopyOnWriteTest, AChangeNeverReachesCopiesOtherThreadsRead) {
  CopyOnWrite<Value> mine(Value{"base", {}});
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i) {
    readers.emplace_back([copy = mine] {
      for (int k = 0; k < 1000; ++k) EXPECT_EQ(copy->name, "base");
    });
  }
  for (int k = 0; k < 1000; ++k) mine.Mut().name = "mine " + std::to_string(k);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(mine->name, "mine 999");
}

}  // namespace
}  // namespace berth
