#include "slurm/pyxis.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using json = nlohmann::json;
using Env = std::vector<std::pair<std::string, std::string>>;

struct Given {
  std::string name;
  std::optional<std::string> value;
};

// The options in order; the first error's message, or "".
std::string Add(const std::vector<Given>& options, PyxisRequest& r) {
  for (const Given& g : options) {
    Status st = AddPyxisOption(g.name, g.value, r);
    if (!st.ok()) return st.message();
  }
  return "";
}

std::string AddError(const std::vector<Given>& options) {
  PyxisRequest r;
  return Add(options, r);
}

// The container's JSON, or "error: MESSAGE".
json Container(const std::vector<Given>& options, const Env& env = {}, bool new_job = true) {
  PyxisRequest r;
  if (std::string e = Add(options, r); !e.empty()) return "error: " + e;
  Result<std::optional<image::ContainerSpec>> c = PyxisContainer(r, "/work/x", env, new_job);
  if (!c.ok()) return "error: " + c.status().message();
  if (!*c) return nullptr;
  return image::EncodeContainerSpec(**c);
}

TEST(PyxisTest, NoOptionsNoContainer) {
  EXPECT_EQ(Container({}), json());
  // What berth does anyway is no request for a container.
  EXPECT_EQ(Container({{"no-container-entrypoint", {}}, {"container-entrypoint-log", {}}}), json());
}

TEST(PyxisTest, TheImageIsKeptAsGiven) {
  EXPECT_EQ(Container({{"container-image", "nvcr.io#nvidia/pytorch:24.05-py3"}}),
            json({{"image", "nvcr.io#nvidia/pytorch:24.05-py3"}}));
  EXPECT_EQ(
      Container({{"container-image", "user@reg#x/y:1"}, {"container-image", "user@reg#x/y:1"}}),
      json({{"image", "user@reg#x/y:1"}}));
  EXPECT_EQ(Container({{"container-image", "docker://busybox"}}),
            json({{"image", "docker://busybox"}}));
  EXPECT_EQ(Container({{"container-image", "/srv/images/app.tar"}}),
            json({{"image", "/srv/images/app.tar"}}));
}

TEST(PyxisTest, EveryOptionReachesTheSpec) {
  json c = Container({{"container-image", "busybox"},
                      {"container-mounts", "/data:/mnt/data:ro,/scratch"},
                      {"container-mounts", "./in:/in:rw+rprivate,tmpfs:/cache"},
                      {"container-workdir", "/mnt/data"},
                      {"container-name", "pyt"},
                      {"no-container-mount-home", {}},
                      {"container-remap-root", {}},
                      {"container-readonly", {}},
                      {"container-env", "HOME_OVERRIDE,NOT_SET"},
                      {"container-env", "A"}},
                     {{"HOME_OVERRIDE", "1"}, {"A", "old"}, {"A", "new"}});
  EXPECT_EQ(c, json::parse(R"({
    "image": "busybox",
    "mounts": [
      {"source": "/data", "destination": "/mnt/data", "read_only": true},
      {"source": "/scratch", "destination": "/scratch"},
      {"source": "/work/x/in", "destination": "/in"},
      {"kind": "tmpfs", "destination": "/cache"}],
    "work_dir": "/mnt/data",
    "name": "pyt",
    "mount_home": false,
    "remap_root": true,
    "writable": false,
    "env": [["HOME_OVERRIDE", "1"], ["A", "new"]]})"));
  // The codec takes what the options make.
  Result<image::ContainerSpec> back = image::DecodeContainerSpec(c);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->entry, image::EntryMode::kJob);
}

TEST(PyxisTest, FlagsKeepTheirDefaultsUnlessGiven) {
  EXPECT_EQ(Container({{"container-image", "x"},
                       {"container-mount-home", {}},
                       {"no-container-remap-root", {}},
                       {"container-writable", {}}}),
            json({{"image", "x"}}));
}

TEST(PyxisTest, MountsArePlacedAsPyxisDoes) {
  auto mounts = [](const std::string& value) {
    json c = Container({{"container-image", "x"}, {"container-mounts", value}});
    return c.is_object() ? c["mounts"] : c;
  };
  EXPECT_EQ(mounts("."),
            "error: pyxis: --container-mounts: the target '.' is the container's root");
  EXPECT_EQ(mounts("./:/test-mnt"),
            json::parse(R"([{"source": "/work/x", "destination": "/test-mnt"}])"));
  EXPECT_EQ(mounts("../up:./down//here/"),
            json::parse(R"([{"source": "/work/x/../up", "destination": "/down/here"}])"));
  EXPECT_EQ(mounts("/a:/b/../c"), json::parse(R"([{"source": "/a", "destination": "/c"}])"));
  EXPECT_EQ(mounts("/tmp:/mnt:unbindable+ro"),
            json::parse(R"([{"source": "/tmp", "destination": "/mnt", "read_only": true}])"));
  EXPECT_EQ(mounts("/tmp:/mnt:ro+rw"),
            json::parse(R"([{"source": "/tmp", "destination": "/mnt"}])"));
  EXPECT_EQ(mounts("/a:/b:"), json::parse(R"([{"source": "/a", "destination": "/b"}])"));
  // The same entry twice is one mount.
  EXPECT_EQ(mounts("/a:/b,/a:/b"), json::parse(R"([{"source": "/a", "destination": "/b"}])"));
}

TEST(PyxisTest, BadValuesGetPyxisMessages) {
  const std::vector<std::pair<std::vector<Given>, std::string>> cases = {
      {{{"container-image", ""}}, "pyxis: --container-image: argument required"},
      {{{"container-image", "a"}, {"container-image", "b"}},
       "pyxis: --container-image specified multiple times"},
      {{{"container-image", "ubuntu 22.04"}},
       "pyxis: --container-image: 'ubuntu 22.04' is not an image name (it has blanks)"},
      {{{"container-image", "nvcr.io#\xFF\xFE"}},
       "pyxis: --container-image: 'nvcr.io#?"
       "?' is not UTF-8 text"},
      {{{"container-mounts", "/data/caf\xE9:/data"}},
       "pyxis: --container-mounts: '/data/caf?:/data' is not UTF-8 text"},
      {{{"container-mounts", ""}}, "pyxis: --container-mounts: argument required"},
      {{{"container-mounts", ":"}}, "pyxis: --container-mounts: invalid format: :"},
      {{{"container-mounts", "/tmp:"}}, "pyxis: --container-mounts: invalid format: /tmp:"},
      {{{"container-mounts", "/a:/b,"}}, "pyxis: --container-mounts: invalid format: "},
      {{{"container-mounts", "data:/b"}},
       "pyxis: mount source must be a relative path, an absolute path, \"tmpfs\" or \"umount\""},
      {{{"container-mounts", "/a:b"}},
       "pyxis: mount target must be a relative path or an absolute path"},
      {{{"container-mounts", "umount:/proc/x"}},
       "pyxis: --container-mounts: \"umount\" entries are not supported by berth"},
      {{{"container-mounts", "/a:/b:ro+exec"}},
       "pyxis: --container-mounts: unknown mount flag 'exec' in /a:/b:ro+exec (berth takes ro, "
       "rw, and ignores the propagation and bind flags)"},
      {{{"container-workdir", ""}}, "pyxis: --container-workdir: argument required"},
      {{{"container-workdir", "/a"}, {"container-workdir", "/b"}},
       "pyxis: --container-workdir specified multiple times"},
      {{{"container-name", ""}}, "pyxis: --container-name: argument required"},
      {{{"container-name", ":auto"}}, "pyxis: --container-name: empty name"},
      {{{"container-name", "a:sometimes"}},
       "pyxis: --container-name: flag must be \"auto\", \"create\", \"exec\" or \"no_exec\""},
      {{{"container-name", "a:exec"}},
       "pyxis: --container-name: the \"exec\" flag is not supported by berth (only \"auto\": use "
       "the named container if the job has it, else create it)"},
      {{{"container-name", "/tmp/foo"}},
       "pyxis: --container-name: '/tmp/foo' is not a container name (letters, digits, '.', '_' "
       "and '-' only)"},
      {{{"container-name", "a"}, {"container-name", "b:auto"}},
       "pyxis: --container-name specified multiple times"},
      {{{"container-save", "/x.sqsh"}},
       "pyxis: --container-save is not supported by berth (a container's root is not saved to a "
       "file)"},
      {{{"container-mount-home", {}}, {"no-container-mount-home", {}}},
       "pyxis: both --container-mount-home and --no-container-mount-home were specified"},
      {{{"no-container-remap-root", {}}, {"container-remap-root", {}}},
       "pyxis: both --container-remap-root and --no-container-remap-root were specified"},
      {{{"container-writable", {}}, {"container-readonly", {}}},
       "pyxis: both --container-writable and --container-readonly were specified"},
      {{{"container-entrypoint", {}}},
       "pyxis: --container-entrypoint is not supported by berth: the job's command runs without "
       "the image's ENTRYPOINT (as with --no-container-entrypoint)"},
      {{{"container-env", ""}}, "pyxis: --container-env: argument required"},
      {{{"container-env", "A,,B"}}, "pyxis: --container-env: invalid format: A,,B"},
      {{{"container-env", "A=1"}}, "pyxis: --container-env: invalid format: A=1"},
      {{{"container-images", "x"}}, "not a pyxis option: --container-images"},
  };
  for (const auto& [options, message] : cases) {
    EXPECT_EQ(AddError(options), message) << options.front().name;
  }
  // A repeat with the same value is one (Slurm may hand an option over twice).
  EXPECT_EQ(AddError({{"container-name", "a"}, {"container-name", "a:auto"}}), "");
  EXPECT_EQ(AddError({{"container-remap-root", {}}, {"container-remap-root", {}}}), "");
}

TEST(PyxisTest, OptionsWithoutAnImageOrANameAreRefused) {
  EXPECT_EQ(Container({{"container-mounts", "/a:/b"}}),
            "error: pyxis: --container-mounts needs --container-image or --container-name "
            "(neither is set)");
  EXPECT_EQ(Container({{"no-container-entrypoint", {}}, {"container-writable", {}}}),
            "error: pyxis: --container-writable needs --container-image or --container-name "
            "(neither is set)");
  EXPECT_EQ(Container({{"container-env", "A"}}),
            "error: pyxis: --container-env needs --container-image or --container-name (neither "
            "is set)");
}

TEST(PyxisTest, ANameAloneNamesTheJobsContainerInAStepOnly) {
  EXPECT_EQ(Container({{"container-name", "pyt"}}),
            "error: pyxis: --container-name=pyt without --container-image: a new job has no "
            "container of that name yet");
  EXPECT_EQ(Container({{"container-name", "pyt"}, {"container-workdir", "/w"}}, {}, false),
            json({{"image", ""}, {"name", "pyt"}, {"work_dir", "/w"}}));
}

TEST(PyxisTest, PlacingErrors) {
  EXPECT_EQ(Container({{"container-image", "x"}, {"container-workdir", "rel"}}),
            "error: pyxis: --container-workdir: must be an absolute path inside the container, "
            "got 'rel'");
  EXPECT_EQ(Container({{"container-image", "x"}, {"container-mounts", "/home:../home"}}),
            "error: pyxis: --container-mounts: the target '../home' is outside the container");
}

TEST(PyxisTest, HelpAsSlurmPrintsAPluginsOptions) {
  const std::string help = PyxisHelp();
  EXPECT_EQ(help.rfind("\nOptions provided by plugins:\n", 0), 0u);
  // A long option on its own line, its text at column 30, wrapped within 80 columns.
  EXPECT_NE(
      help.find(
          "\n\n      --container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH\n"
          "                              [pyxis] the image to use for the container\n"
          "                              filesystem. Can be either a docker image given as\n"),
      std::string::npos)
      << help;
  // A short one with its text beside it.
  EXPECT_NE(
      help.find(
          "\n      --container-name=NAME   [pyxis] name of the container: a later step of the\n"),
      std::string::npos)
      << help;
  EXPECT_NE(
      help.find(
          "\n      --container-mount-home  [pyxis] bind mount the user's home directory (the\n"),
      std::string::npos);
  EXPECT_NE(help.find("\n\n      --no-container-mount-home\n"
                      "                              [pyxis] do not bind mount the user's home\n"
                      "                              directory\n"),
            std::string::npos);
  // What berth refuses is not offered.
  EXPECT_EQ(help.find("--container-save"), std::string::npos);
  EXPECT_EQ(help.find("--container-entrypoint"), std::string::npos);
  size_t start = 0;
  while (start < help.size()) {
    size_t nl = help.find('\n', start);
    EXPECT_LE(nl - start, 80u) << help.substr(start, nl - start);
    start = nl + 1;
  }
}

}  // namespace
}  // namespace berth::slurm
