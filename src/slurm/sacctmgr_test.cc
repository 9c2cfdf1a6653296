#include "slurm/sacctmgr.h"

#include <gtest/gtest.h>

namespace berth::slurm {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

SacctmgrCommand Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "sacctmgr");
  SacctmgrParse p = ParseSacctmgrArgs(args);
  EXPECT_FALSE(p.done) << p.err << p.out;
  return p.command;
}

TEST(SacctmgrParseTest, CommandLines) {
  struct Case {
    std::vector<std::string> args;
    SacctmgrVerb verb;
    config::AcctEntity entity;
    Pairs where, set;
  } cases[] = {
      {{"-i", "add", "account", "chem,bio", "parent=science", "GrpJobs=4"},
       SacctmgrVerb::kAdd,
       config::AcctEntity::kAccount,
       {{"Name", "chem,bio"}},
       {{"parent", "science"}, {"GrpJobs", "4"}}},
      {{"create", "user", "name=alice", "account=chem", "DefaultAccount=chem"},
       SacctmgrVerb::kAdd,
       config::AcctEntity::kUser,
       {{"Name", "alice"}},
       {{"account", "chem"}, {"DefaultAccount", "chem"}}},
      {{"modify", "qos", "where", "name=high", "set", "MaxJobsPU=2", "preempt+=low"},
       SacctmgrVerb::kModify,
       config::AcctEntity::kQos,
       {{"Name", "high"}},
       {{"MaxJobsPU", "2"}, {"preempt+", "low"}}},
      {{"update", "account", "physics", "set", "GrpTRES=cpu=8,gres/gpu=2"},
       SacctmgrVerb::kModify,
       config::AcctEntity::kAccount,
       {{"Name", "physics"}},
       {{"GrpTRES", "cpu=8,gres/gpu=2"}}},
      {{"mod", "assoc", "where", "account=chem", "user=alice", "set", "MaxJobs=1"},
       SacctmgrVerb::kModify,
       config::AcctEntity::kAssociation,
       {{"account", "chem"}, {"user", "alice"}},
       {{"MaxJobs", "1"}}},
      {{"remove", "user", "alice", "account=chem"},
       SacctmgrVerb::kDelete,
       config::AcctEntity::kUser,
       {{"Name", "alice"}, {"account", "chem"}},
       {}},
      {{"list", "associations", "where", "user=alice"},
       SacctmgrVerb::kShow,
       config::AcctEntity::kAssociation,
       {{"user", "alice"}},
       {}},
  };
  for (const Case& c : cases) {
    SacctmgrCommand cmd = Parse(c.args);
    EXPECT_EQ(cmd.verb, c.verb) << c.args[1];
    EXPECT_EQ(cmd.entity, c.entity) << c.args[1];
    EXPECT_EQ(cmd.where, c.where) << c.args[1];
    EXPECT_EQ(cmd.set, c.set) << c.args[1];
  }
  EXPECT_TRUE(Parse({"-i", "-P", "-n", "add", "qos", "x"}).immediate);
  SacctmgrCommand flags = Parse({"-p", "-n", "show", "qos"});
  EXPECT_EQ(flags.parsable, 1);
  EXPECT_TRUE(flags.no_header);
}

TEST(SacctmgrParseTest, Errors) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  } cases[] = {
      {{"sacctmgr", "frob", "account"}, "invalid keyword: frob\n"},
      {{"sacctmgr", "add", "cluster", "x"}, "No valid entity in add command"},
      {{"sacctmgr", "modify", "qos", "high"}, " You didn't give me anything to set\n"},
      {{"sacctmgr", "add", "account"}, " Need name of entity to add.\n"},
      {{"sacctmgr", "show", "qos", "format=Name,Bogus"}, "Unknown field 'Bogus'\n"},
      {{"sacctmgr", "add", "qos", "x", "set", "Priority=1"}, "'set' is only for modify\n"},
  };
  for (const Case& c : cases) {
    SacctmgrParse p = ParseSacctmgrArgs(c.args);
    EXPECT_TRUE(p.done) << c.args[1];
    EXPECT_EQ(p.exit_code, 1) << c.args[1];
    EXPECT_NE(p.err.find(c.err), std::string::npos) << p.err;
  }
  SacctmgrParse help = ParseSacctmgrArgs({"sacctmgr", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("add|create"), std::string::npos);
}

TEST(SacctmgrFormatTest, FieldsByPrefixWithWidths) {
  Result<std::vector<SacctmgrField>> f =
      ParseSacctmgrFormat(config::AcctEntity::kQos, "name,prio%5,MaxJobsPU,maxw%-12");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->size(), 4u);
  EXPECT_EQ((*f)[0].header, "Name");
  EXPECT_EQ((*f)[1].name, "Priority");
  EXPECT_EQ((*f)[1].width, 5);
  EXPECT_EQ((*f)[2].width, 9);
  EXPECT_EQ((*f)[3].name, "MaxWall");
  EXPECT_EQ((*f)[3].width, -12);
  EXPECT_FALSE(ParseSacctmgrFormat(config::AcctEntity::kUser, "Nope").ok());
  std::vector<SacctmgrField> assoc = DefaultSacctmgrFields(config::AcctEntity::kAssociation, false);
  EXPECT_EQ(assoc.size(), 20u);
  EXPECT_EQ(assoc[4].header, "Share");
}

SacctmgrData Data() {
  SacctmgrData d;
  d.cluster = "berth";
  core::QosSpec normal, high;
  normal.name = "normal";
  high.name = "high";
  high.priority = 10;
  high.max_jobs_per_user = 2;
  high.max_tres_per_user.gpus = 4;
  high.max_wall = 90 * 60;
  high.preempt = {"normal"};
  high.preempt_mode = core::PreemptMode::kRequeue;
  d.qos = {normal, high};
  core::AccountSpec physics, chem;
  physics.name = "physics";
  physics.grp_tres.cpus = 8;
  physics.grp_tres.mem_mib = 4096;
  chem.name = "chem";
  chem.parent = "physics";
  chem.grp_jobs = 3;
  d.accounts = {physics, chem};
  core::UserSpec alice, bob, alice2;
  alice.name = "alice";
  alice.account = "physics";
  alice.is_default = true;
  alice2 = alice;
  alice2.account = "chem";
  alice2.is_default = false;
  alice2.max_jobs = 1;
  bob.name = "bob";
  bob.account = "chem";
  bob.is_default = true;
  d.users = {alice, bob, alice2};
  d.admin_levels["bob"] = "Administrator";
  return d;
}

TEST(SacctmgrShowTest, TablesAsSlurmPrintsThem) {
  SacctmgrCommand c = Parse({"show", "account"});
  EXPECT_EQ(RenderSacctmgrShow(c, Data()),
            "   Account                Descr                  Org \n"
            "---------- -------------------- -------------------- \n"
            "      root default root account                 root \n"
            "   physics              physics              physics \n"
            "      chem                 chem              physics \n");
  c = Parse({"show", "user"});
  EXPECT_EQ(RenderSacctmgrShow(c, Data()),
            "      User   Def Acct     Admin \n"
            "---------- ---------- --------- \n"
            "     alice    physics      None \n"
            "       bob       chem Administ+ \n");
  c = Parse({"-P", "show", "qos",
             "format=name,priority,preempt,preemptmode,maxtrespu,maxjobspu,"
             "maxwall,usagefactor"});
  EXPECT_EQ(RenderSacctmgrShow(c, Data()),
            "Name|Priority|Preempt|PreemptMode|MaxTRESPU|MaxJobsPU|MaxWall|UsageFactor\n"
            "normal|0||cluster||||1.000000\n"
            "high|10|normal|requeue|gres/gpu=4|2|01:30:00|1.000000\n");
  c = Parse({"-p", "-n", "show", "assoc", "format=account,user,grptres,grpjobs,maxjobs"});
  EXPECT_EQ(RenderSacctmgrShow(c, Data()),
            "root|||||\n"
            "physics||cpu=8,mem=4G|||\n"
            "physics|alice||||\n"
            "chem|||3||\n"
            "chem|alice|||1|\n"
            "chem|bob||||\n");
  // A header wider than its column is cut (no '+'); -P prints it whole.
  c = Parse({"show", "assoc", "account=chem", "user=bob", "format=user,GrpTRESRunMins"});
  EXPECT_EQ(RenderSacctmgrShow(c, Data()),
            "      User GrpTRESRunMin \n---------- ------------- \n       bob               \n");
  c = Parse({"-P", "show", "assoc", "account=chem", "user=bob", "format=user,GrpTRESRunMins"});
  EXPECT_EQ(RenderSacctmgrShow(c, Data()), "User|GrpTRESRunMins\nbob|\n");
  c = Parse({"-P", "-n", "show", "assoc", "where", "user=alice", "format=account,user"});
  EXPECT_EQ(RenderSacctmgrShow(c, Data()), "physics|alice\nchem|alice\n");
  c = Parse({"-P", "-n", "show", "user", "-s", "format=user,account,defaultaccount"});
  EXPECT_EQ(RenderSacctmgrShow(c, Data()),
            "alice|physics|physics\nalice|chem|physics\nbob|chem|chem\n");
}

TEST(SacctmgrChangeTest, MessagesAsSlurmPrintsThem) {
  nlohmann::json answer = {{"names", {"chem"}},
                           {"associations", {{{"account", "chem"}, {"user", ""}}}},
                           {"users", nlohmann::json::array()}};
  SacctmgrCommand c = Parse({"add", "account", "chem", "GrpJobs=-1", "Fairshare=2"});
  EXPECT_EQ(RenderSacctmgrChange(c, answer, "berth"),
            " Adding Account(s)\n  chem\n Settings\n"
            "  Description     = Account Name\n"
            "  Organization    = Parent/Account Name\n"
            " Associations\n  A = chem       C = berth     \n"
            " Settings\n  Fairshare     = 2\n  GrpJobs       = NONE\n");
  c = Parse({"modify", "account", "chem", "set", "GrpJobs=2"});
  EXPECT_EQ(RenderSacctmgrChange(c, answer, "berth"),
            " Modified account associations...\n  C = berth      A = chem                \n");
  answer = {{"names", {"alice"}},
            {"associations", {{{"account", "chem"}, {"user", "alice"}}}},
            {"users", {"alice"}}};
  c = Parse({"add", "user", "alice", "account=chem", "DefaultAccount=chem"});
  EXPECT_EQ(RenderSacctmgrChange(c, answer, "berth"),
            " Adding User(s)\n  alice\n Settings =\n  Default Account = chem\n"
            " Associations =\n  U = alice     A = chem       C = berth     \n"
            " Non Default Settings\n");
  c = Parse({"delete", "user", "alice", "account=chem"});
  EXPECT_EQ(
      RenderSacctmgrChange(c, answer, "berth"),
      " Deleting user associations...\n  C = berth      A = chem                 U = alice    \n");
  c = Parse({"delete", "qos", "gold"});
  answer = {{"names", {"gold"}}};
  EXPECT_EQ(RenderSacctmgrChange(c, answer, "berth"), " Deleting QOS(s)...\n  gold\n");
}

TEST(SacctmgrTresTest, SlurmOrderAndMemoryUnits) {
  core::TresLimits l;
  EXPECT_EQ(SacctmgrTres(l), "");
  l.gpus = 2;
  l.cpus = 4;
  l.nodes = 1;
  l.mem_mib = 1500;
  EXPECT_EQ(SacctmgrTres(l), "cpu=4,mem=1500M,node=1,gres/gpu=2");
}

}  // namespace
}  // namespace berth::slurm
