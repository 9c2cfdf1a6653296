#include "controller/exec_pool.h"

#include <gtest/gtest.h>

namespace berth::controller {
namespace {

std::shared_ptr<const core::JobExecSpec> Exec(const std::string& script,
                                              const std::string& home = "/home/a") {
  auto e = std::make_shared<core::JobExecSpec>();
  e->script = script;
  e->work_dir = "/work";
  e->environment = {{"HOME", home}, {"PATH", "/usr/bin:/bin"}};
  return e;
}

TEST(ExecPoolTest, EqualSpecificationsShareOneCopy) {
  ExecPool pool;
  auto a = pool.Intern(Exec("#!/bin/sh\ntrue\n"));
  auto b = pool.Intern(Exec("#!/bin/sh\ntrue\n"));
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(pool.size(), 1u);
}

TEST(ExecPoolTest, AnyDifferenceKeepsThemApart) {
  ExecPool pool;
  auto a = pool.Intern(Exec("#!/bin/sh\ntrue\n"));
  auto b = pool.Intern(Exec("#!/bin/sh\ntrue\n", "/home/b"));
  auto c = pool.Intern(Exec("#!/bin/sh\nfalse\n"));
  auto d = std::make_shared<core::JobExecSpec>(*Exec("#!/bin/sh\ntrue\n"));
  d->mail_type = "END";  // a field the hash does not read: equality still tells them apart
  auto e = pool.Intern(d);
  EXPECT_NE(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_NE(a.get(), e.get());
  EXPECT_EQ(e->mail_type, "END");
  EXPECT_EQ(b->environment[0].second, "/home/b");
}

TEST(ExecPoolTest, NullStaysNullAndGoneEntriesAreSwept) {
  ExecPool pool;
  EXPECT_EQ(pool.Intern(nullptr), nullptr);
  for (int i = 0; i < 5000; ++i) pool.Intern(Exec("echo " + std::to_string(i)));
  // Nothing holds them: sweeps keep the pool from growing with every job ever submitted.
  EXPECT_LT(pool.size(), 2048u);
  auto kept = pool.Intern(Exec("kept"));
  for (int i = 0; i < 5000; ++i) pool.Intern(Exec("more " + std::to_string(i)));
  EXPECT_EQ(pool.Intern(Exec("kept")).get(), kept.get());
}

}  // namespace
}  // namespace berth::controller
