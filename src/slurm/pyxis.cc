// pyxis's option checks (its args.c) with its messages, and the container they make.
#include "slurm/pyxis.h"

#include <algorithm>

#include "common/strings.h"

namespace berth::slurm {
namespace {

constexpr PyxisOption kOptions[] = {
    {"container-image", "[USER@][REGISTRY#]IMAGE[:TAG]|PATH",
     "[pyxis] the image to use for the container filesystem. Can be either a docker image given "
     "as an enroot URI, or a path to an OCI archive or layout on the remote host filesystem."},
    {"container-mounts", "SRC:DST[:FLAGS][,SRC:DST...]",
     "[pyxis] bind mount[s] inside the container. Mount flags are separated with \"+\", e.g. "
     "\"ro+rprivate\""},
    {"container-workdir", "PATH", "[pyxis] working directory inside the container"},
    {"container-name", "NAME",
     "[pyxis] name of the container: a later step of the job with this name uses the existing "
     "container (its root as the job left it) and the import is skipped. Named containers are "
     "removed when the job ends, unnamed ones after their step."},
    {"container-save", "PATH", ""},
    {"container-mount-home", "", "[pyxis] bind mount the user's home directory (the default)"},
    {"no-container-mount-home", "", "[pyxis] do not bind mount the user's home directory"},
    {"container-remap-root", "",
     "[pyxis] ask to be remapped to root inside the container. Does not grant elevated system "
     "permissions, despite appearances."},
    {"no-container-remap-root", "", "[pyxis] do not remap to root inside the container"},
    {"container-entrypoint", "", ""},
    {"no-container-entrypoint", "", ""},
    {"container-entrypoint-log", "", ""},
    {"container-writable", "", "[pyxis] make the container filesystem writable"},
    {"container-readonly", "", "[pyxis] make the container filesystem read-only"},
    {"container-env", "NAME[,NAME...]",
     "[pyxis] names of environment variables to override with the host environment"},
};

// Mount flags pyxis hands to mount(8) that change nothing berth does: propagation (a job's
// mounts propagate nowhere), and what a container's bind mounts are anyway.
constexpr std::string_view kIgnoredMountFlags[] = {
    "private",    "rprivate",      "shared",       "rshared",      "slave",  "rslave",
    "unbindable", "runbindable",   "bind",         "rbind",        "nosuid", "nodev",
    "noexec",     "x-create=auto", "x-create=dir", "x-create=file"};

Status Fail(std::string message) {
  return Status::InvalidArgument("pyxis: " + std::move(message));
}

bool HasBlank(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  });
}

// A value option: given once, or again with the same value (Slurm may hand it over twice).
Status SetOnce(std::string_view option, const std::string& value, std::string& field) {
  if (value.empty()) return Fail("--" + std::string(option) + ": argument required");
  if (!field.empty() && field != value) {
    return Fail("--" + std::string(option) + " specified multiple times");
  }
  field = value;
  return Status::Ok();
}

// --x and --no-x: either, not both.
Status SetFlag(int value, int& field, std::string_view both) {
  if (field != -1 && field != value) return Fail(std::string(both));
  field = value;
  return Status::Ok();
}

Status AddMount(std::string_view entry, PyxisRequest& r) {
  const std::string bad = "--container-mounts: invalid format: " + std::string(entry);
  size_t colon = entry.find(':');
  PyxisMount m;
  m.source = std::string(entry.substr(0, colon));
  if (m.source.empty()) return Fail(bad);
  m.target = m.source;
  std::string_view flags;
  if (colon != std::string_view::npos) {
    std::string_view rest = entry.substr(colon + 1);
    size_t second = rest.find(':');
    m.target = std::string(rest.substr(0, second));
    if (m.target.empty()) return Fail(bad);
    if (second != std::string_view::npos) flags = rest.substr(second + 1);
  }
  if (m.source[0] != '.' && m.source[0] != '/') {
    if (m.source == "umount") {
      return Fail("--container-mounts: \"umount\" entries are not supported by berth");
    }
    if (m.source != "tmpfs") {
      return Fail(
          "mount source must be a relative path, an absolute path, \"tmpfs\" or \"umount\"");
    }
  }
  if (m.target[0] != '.' && m.target[0] != '/') {
    return Fail("mount target must be a relative path or an absolute path");
  }
  size_t start = 0;
  while (!flags.empty() && start <= flags.size()) {
    size_t plus = std::min(flags.find('+', start), flags.size());
    std::string_view flag = flags.substr(start, plus - start);
    start = plus + 1;
    if (flag == "ro") {
      m.read_only = true;
    } else if (flag == "rw") {
      m.read_only = false;
    } else if (std::find(std::begin(kIgnoredMountFlags), std::end(kIgnoredMountFlags), flag) ==
               std::end(kIgnoredMountFlags)) {
      return Fail("--container-mounts: unknown mount flag '" + std::string(flag) + "' in " +
                  std::string(entry) +
                  " (berth takes ro, rw, and ignores the propagation and bind flags)");
    }
  }
  if (std::find(r.mounts.begin(), r.mounts.end(), m) == r.mounts.end()) r.mounts.push_back(m);
  return Status::Ok();
}

Status AddMounts(const std::string& value, PyxisRequest& r) {
  if (value.empty()) return Fail("--container-mounts: argument required");
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = std::min(value.find(',', start), value.size());
    BERTH_RETURN_IF_ERROR(AddMount(std::string_view(value).substr(start, comma - start), r));
    start = comma + 1;
  }
  return Status::Ok();
}

Status AddEnv(const std::string& value, PyxisRequest& r) {
  if (value.empty()) return Fail("--container-env: argument required");
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = std::min(value.find(',', start), value.size());
    std::string name = value.substr(start, comma - start);
    start = comma + 1;
    if (name.empty() || name.find('=') != std::string::npos || HasBlank(name)) {
      return Fail("--container-env: invalid format: " + value);
    }
    if (std::find(r.env_names.begin(), r.env_names.end(), name) == r.env_names.end()) {
      r.env_names.push_back(name);
    }
  }
  return Status::Ok();
}

bool IsNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

Status AddName(const std::string& value, PyxisRequest& r) {
  if (value.empty()) return Fail("--container-name: argument required");
  size_t colon = value.find(':');
  std::string name = value.substr(0, colon);
  std::string flags = colon == std::string::npos ? "" : value.substr(colon + 1);
  if (name.empty()) return Fail("--container-name: empty name");
  if (flags.empty()) flags = "auto";
  if (flags != "auto" && flags != "create" && flags != "exec" && flags != "no_exec") {
    return Fail("--container-name: flag must be \"auto\", \"create\", \"exec\" or \"no_exec\"");
  }
  if (flags != "auto") {
    return Fail("--container-name: the \"" + flags +
                "\" flag is not supported by berth (only "
                "\"auto\": use the named container if the job has it, else create it)");
  }
  if (!std::all_of(name.begin(), name.end(), IsNameCharacter)) {
    return Fail("--container-name: '" + name +
                "' is not a container name (letters, digits, '.', '_' and '-' only)");
  }
  if (!r.name.empty() && r.name != name) return Fail("--container-name specified multiple times");
  r.name = name;
  return Status::Ok();
}

// "a//b/./c/" -> "a/b/c"; ".." stays unless `inside_root`, where it goes up (and a path that
// climbs above the root is refused: nullopt).
std::optional<std::string> Tidy(std::string_view path, bool inside_root) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = std::min(path.find('/', start), path.size());
    std::string_view part = path.substr(start, slash - start);
    start = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == ".." && inside_root) {
      if (parts.empty()) return std::nullopt;
      parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (std::string_view p : parts) out += "/" + std::string(p);
  return out.empty() ? "/" : out;
}

Result<image::Mount> Place(const PyxisMount& m, const std::string& work_dir) {
  image::Mount out;
  out.read_only = m.read_only;
  std::optional<std::string> target = Tidy(m.target, true);
  if (!target) {
    return Fail("--container-mounts: the target '" + m.target + "' is outside the container");
  }
  if (*target == "/") {
    return Fail("--container-mounts: the target '" + m.target + "' is the container's root");
  }
  out.destination = *target;
  if (m.source == "tmpfs") {
    out.kind = image::Mount::Kind::kTmpfs;
    return out;
  }
  out.kind = image::Mount::Kind::kBind;
  std::string source = m.source[0] == '/' ? m.source : work_dir + "/" + m.source;
  out.source = *Tidy(source, false);
  return out;
}

std::string OrphanMessage(const std::string& option) {
  return option + " needs --container-image or --container-name (neither is set)";
}

// Greedy word wrap at `width` columns, as Slurm wraps a plugin option's text.
std::vector<std::string> Wrap(std::string_view text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t start = 0;
  while (start < text.size()) {
    size_t space = std::min(text.find(' ', start), text.size());
    std::string_view word = text.substr(start, space - start);
    start = space + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

std::span<const PyxisOption> PyxisOptions() {
  return kOptions;
}

const PyxisOption* FindPyxisOption(std::string_view name) {
  for (const PyxisOption& o : kOptions) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

Status AddPyxisOption(std::string_view name, const std::optional<std::string>& value,
                      PyxisRequest& r) {
  const std::string option = "--" + std::string(name);
  const std::string v = value.value_or("");
  if (!IsUtf8(v)) {
    // The container's settings travel as JSON, which holds UTF-8 text only.
    return Fail(option + ": " + QuoteForMessage(v, 60) + " is not UTF-8 text");
  }
  Status st = Status::Ok();
  if (name == "container-image") {
    st = SetOnce(name, v, r.image);
    if (st.ok() && HasBlank(v)) {
      st = Fail("--container-image: '" + v + "' is not an image name (it has blanks)");
    }
  } else if (name == "container-mounts") {
    st = AddMounts(v, r);
  } else if (name == "container-workdir") {
    st = SetOnce(name, v, r.workdir);
  } else if (name == "container-name") {
    st = AddName(v, r);
  } else if (name == "container-save") {
    st = Fail(
        "--container-save is not supported by berth (a container's root is not saved to a file)");
  } else if (name == "container-mount-home" || name == "no-container-mount-home") {
    st = SetFlag(name[0] != 'n', r.mount_home,
                 "both --container-mount-home and --no-container-mount-home were specified");
  } else if (name == "container-remap-root" || name == "no-container-remap-root") {
    st = SetFlag(name[0] != 'n', r.remap_root,
                 "both --container-remap-root and --no-container-remap-root were specified");
  } else if (name == "container-writable" || name == "container-readonly") {
    st = SetFlag(name == "container-writable", r.writable,
                 "both --container-writable and --container-readonly were specified");
  } else if (name == "container-entrypoint") {
    st = Fail(
        "--container-entrypoint is not supported by berth: the job's command runs without the "
        "image's ENTRYPOINT (as with --no-container-entrypoint)");
  } else if (name == "container-env") {
    st = AddEnv(v, r);
  } else if (name != "no-container-entrypoint" && name != "container-entrypoint-log") {
    return Status::InvalidArgument("not a pyxis option: " + option);
  }
  if (!st.ok()) return st;
  if (std::find(r.given.begin(), r.given.end(), option) == r.given.end()) r.given.push_back(option);
  return Status::Ok();
}

Result<std::optional<image::ContainerSpec>> PyxisContainer(
    const PyxisRequest& r, const std::string& work_dir,
    const std::vector<std::pair<std::string, std::string>>& env, bool new_job) {
  if (r.image.empty() && r.name.empty()) {
    for (const std::string& option : r.given) {
      if (option == "--no-container-entrypoint" || option == "--container-entrypoint-log") {
        continue;  // what berth does anyway
      }
      return Fail(OrphanMessage(option));
    }
    return std::optional<image::ContainerSpec>();
  }
  if (r.image.empty() && new_job) {
    return Fail("--container-name=" + r.name +
                " without --container-image: a new job has no container of that name yet");
  }
  image::ContainerSpec spec;
  spec.image = r.image;
  spec.entry = image::EntryMode::kJob;
  spec.name = r.name;
  if (!r.workdir.empty()) {
    if (r.workdir[0] != '/') {
      return Fail("--container-workdir: must be an absolute path inside the container, got '" +
                  r.workdir + "'");
    }
    spec.work_dir = r.workdir;
  }
  for (const PyxisMount& m : r.mounts) {
    BERTH_ASSIGN_OR_RETURN(image::Mount placed, Place(m, work_dir));
    spec.mounts.push_back(std::move(placed));
  }
  for (const std::string& name : r.env_names) {
    for (auto it = env.rbegin(); it != env.rend(); ++it) {
      if (it->first == name) {
        spec.env.emplace_back(name, it->second);
        break;
      }
    }
  }
  if (r.mount_home != -1) spec.mount_home = r.mount_home == 1;
  if (r.remap_root != -1) spec.remap_root = r.remap_root == 1;
  if (r.writable != -1) spec.writable = r.writable == 1;
  return std::optional<image::ContainerSpec>(std::move(spec));
}

std::string PyxisHelp() {
  constexpr size_t kPad = 6, kText = 30, kColumns = 80;
  std::string out = "\nOptions provided by plugins:\n";
  for (const PyxisOption& o : kOptions) {
    if (o.usage.empty()) continue;
    std::string info = std::string(kPad, ' ') + "--" + std::string(o.name);
    if (!o.arg_info.empty()) info += "=" + std::string(o.arg_info);
    std::vector<std::string> lines = Wrap(o.usage, kColumns - kText);
    if (info.size() < kText) {
      out += info + std::string(kText - info.size(), ' ') + lines[0] + "\n";
    } else {
      out += "\n" + info + "\n" + std::string(kText, ' ') + lines[0] + "\n";
    }
    for (size_t i = 1; i < lines.size(); ++i) out += std::string(kText, ' ') + lines[i] + "\n";
  }
  return out;
}

}  // namespace berth::slurm
