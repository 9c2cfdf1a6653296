#include "cli/local_postgres.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "controller/web_sessions.h"
#include "net/socket_io.h"
#include "net/tls_pki.h"
#include "store/archive.h"

namespace berth::cli {
namespace {

// Runs `fn` in a child as uid/gid; its result (false when the child failed).
template <typename F>
bool AsUser(uid_t uid, gid_t gid, F fn) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (getuid() != uid && (setgid(gid) != 0 || setuid(uid) != 0)) _exit(126);
    _exit(fn() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Runs argv as uid/gid, its output to `log`; true when it exited 0.
bool RunLogged(std::vector<std::string> argv, const std::string& log, uid_t uid, gid_t gid) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (getuid() != uid && (setgid(gid) != 0 || setuid(uid) != 0)) _exit(126);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    std::vector<char*> args;
    for (std::string& s : argv) args.push_back(s.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// FNV-1a of `text`, in hex: a stable name for a folder outside the state folder.
std::string Fnv(const std::string& text) {
  uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

Result<LocalPostgres> PrepareLocalPostgres(const std::string& ha_dir) {
  const std::string bin = store::PostgresBinDir();
  if (bin.empty()) {
    return Status::FailedPrecondition(
        "berth up --ha keeps accounting in PostgreSQL (Debian: apt-get install postgresql-15), "
        "and none is in /usr/lib/postgresql");
  }
  LocalPostgres pg;
  pg.uid = getuid();
  pg.gid = getgid();
  pg.dir = ha_dir + "/pg";
  if (geteuid() == 0) {
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr) {
      return Status::FailedPrecondition(
          "PostgreSQL does not run as root, and there is no \"postgres\" user to run it as "
          "(Debian's postgresql package makes one)");
    }
    pg.uid = pw->pw_uid;
    pg.gid = pw->pw_gid;
    // The group's folder may be walked through (its secrets are files of their own, 0600).
    chmod(ha_dir.c_str(), 0711);
    const bool reachable =
        AsUser(pg.uid, pg.gid, [&] { return access(ha_dir.c_str(), X_OK) == 0; });
    if (!reachable) {
      pg.dir = "/var/lib/postgresql/berth-ha-" + Fnv(ha_dir);
      std::ofstream(ha_dir + "/pg.location", std::ios::trunc) << pg.dir << "\n";
    }
  }
  if (mkdir(pg.dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::Internal("cannot create " + pg.dir);
  }
  if (chown(pg.dir.c_str(), pg.uid, pg.gid) != 0) {
    return Status::Internal("cannot give " + pg.dir + " to PostgreSQL's user");
  }
  const std::string data = pg.dir + "/data";
  const std::string passfile = ha_dir + "/pg.pass";
  // The port: the first start's, kept beside the data.
  {
    std::ifstream in(pg.dir + "/port");
    in >> pg.port;
  }
  if (pg.port <= 0) {
    BERTH_ASSIGN_OR_RETURN(pg.port, net::FreeLoopbackPort());
    std::ofstream(pg.dir + "/port", std::ios::trunc) << pg.port << "\n";
  }
  struct stat st {};
  if (::stat((data + "/PG_VERSION").c_str(), &st) != 0) {
    const std::string password = controller::RandomHex(24);
    BERTH_RETURN_IF_ERROR(net::WriteFileAtomically(
        passfile, "127.0.0.1:" + std::to_string(pg.port) + ":*:berth:" + password + "\n", 0600));
    const std::string pwfile = pg.dir + "/initdb.pw";
    const std::string log = pg.dir + "/initdb.log";
    // initdb reads the password from a file of the server's user's alone, gone right after.
    Status written = net::WriteFileAtomically(pwfile, password + "\n", 0600);
    if (written.ok() && chown(pwfile.c_str(), pg.uid, pg.gid) != 0) {
      written = Status::Internal("cannot give " + pwfile + " to PostgreSQL's user");
    }
    const bool made =
        written.ok() && RunLogged({bin + "/initdb", "-D", data, "-U", "berth", "--pwfile=" + pwfile,
                                   "--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "-E",
                                   "UTF8", "--no-instructions"},
                                  log, pg.uid, pg.gid);
    unlink(pwfile.c_str());
    BERTH_RETURN_IF_ERROR(written);
    if (!made) return Status::Internal("initdb of " + data + " failed: see " + log);
  } else if (::stat(passfile.c_str(), &st) != 0) {
    return Status::FailedPrecondition(data + " exists but its password file " + passfile +
                                      " is gone: remove " + pg.dir + " to start afresh");
  }
  pg.argv = {bin + "/postgres",           "-D", data,   "-p",
             std::to_string(pg.port),     "-k", pg.dir, "-c",
             "listen_addresses=127.0.0.1"};
  pg.conninfo = "postgresql://berth@127.0.0.1:" + std::to_string(pg.port) +
                "/postgres?passfile=" + passfile + "&sslmode=disable";
  return pg;
}

}  // namespace berth::cli
