#include "core/temp_files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <fstream>
#include <string>

#include "core/error.hpp"

namespace embscale {
namespace {

namespace fs = std::filesystem;

// A scratch directory of its own per test, removed at the end.
class TempFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("embscale_temp_files_test." + std::to_string(::getpid()) + "." +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  // The temporary name of `final_path` as process `pid` of this host would write it: this
  // process's own name with its pid replaced (the host part is the same).
  static fs::path temp_of_pid(const fs::path& final_path, long pid, const std::string& suffix = "") {
    std::string name = temporary_path_for(final_path).string();
    name.erase(name.rfind('.') + 1);
    return name + std::to_string(pid) + suffix;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(dir)) out.push_back(entry.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir;
};

TEST_F(TempFiles, CommitRenamesAndFatalPathRemovesTheRest) {
  const auto kept = dir / "kept.h5";
  const auto lost = dir / "lost.h5";
  const auto kept_tmp = temporary_path_for(kept);
  const auto lost_tmp = temporary_path_for(lost);
  EXPECT_EQ(kept_tmp.parent_path(), dir);
  for (const auto& p : {kept_tmp, lost_tmp}) {
    std::ofstream(p) << "data";
    register_temp_file(p);
  }
  commit_temp_file(kept_tmp, kept);
  remove_registered_temp_files();
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_FALSE(fs::exists(kept_tmp));
  EXPECT_FALSE(fs::exists(lost_tmp));
}

TEST_F(TempFiles, TheTemporaryNameSaysWhichHostAndProcessWroteIt) {
  const auto final_path = dir / "r.v2.h5";
  const auto temp = temporary_path_for(final_path);
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const std::string first_label(host, std::strcspn(host, "."));
  const auto writer = temp_file_writer(temp, final_path);
  ASSERT_TRUE(writer.has_value()) << temp;
  EXPECT_EQ(writer->pid, static_cast<long>(::getpid()));
  // The label keeps letters, digits and '-' of the host name's first label.
  EXPECT_EQ(writer->host.size(), first_label.size());
  EXPECT_EQ(writer->host.find('.'), std::string::npos);
  // Suffixes after the pid (AtomicFile's ".<n>", the creation probe) name the same writer.
  const auto numbered = temp_file_writer(temp.string() + ".3", final_path);
  ASSERT_TRUE(numbered.has_value());
  EXPECT_EQ(numbered->pid, writer->pid);
  EXPECT_EQ(numbered->host, writer->host);
  // Not temporary files of r.v2.h5: another name's, no pid, a pid that is not a number.
  EXPECT_FALSE(temp_file_writer(dir / ".r.h5.tmp.node1.42", final_path));
  EXPECT_FALSE(temp_file_writer(dir / ".r.v2.h5.tmp.node1", final_path));
  EXPECT_FALSE(temp_file_writer(dir / ".r.v2.h5.tmp.node1.4x2", final_path));
  EXPECT_FALSE(temp_file_writer(dir / ".r.v2.h5.tmp..42", final_path));
  EXPECT_FALSE(temp_file_writer(dir / "r.v2.h5", final_path));
}

TEST_F(TempFiles, OnlyOrphansOfEndedProcessesOnThisHostAreStale) {
  const auto final_path = dir / "r.h5";
  // An ended process: a child that exited and was reaped, and one that is still a zombie
  // (unreaped, as a killed rank is until init collects it).
  const pid_t reaped = ::fork();
  ASSERT_GE(reaped, 0);
  if (reaped == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(reaped, nullptr, 0), reaped);
  const pid_t zombie = ::fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0) ::_exit(0);
  const pid_t running = ::fork();
  ASSERT_GE(running, 0);
  if (running == 0) {
    ::pause();
    ::_exit(0);
  }
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(zombie), &info, WEXITED | WNOWAIT), 0);  // exited, not reaped

  const fs::path orphan = temp_of_pid(final_path, reaped);
  const fs::path orphan_numbered = temp_of_pid(final_path, zombie, ".0");
  const fs::path live = temp_of_pid(final_path, running);
  const fs::path mine = temporary_path_for(final_path);
  const fs::path other_host = dir / ".r.h5.tmp.some-other-host.1";
  const fs::path other_name = temp_of_pid(dir / "other.h5", reaped);
  for (const auto& p : {orphan, orphan_numbered, live, mine, other_host, other_name}) std::ofstream(p) << "x";

  auto removed = remove_stale_temp_files(final_path);
  std::sort(removed.begin(), removed.end());
  // An orphan of another final name in the same directory goes too (default outputs are named by
  // the time, so no later run writes the same name).
  std::vector<fs::path> expected{orphan, orphan_numbered, other_name};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(removed, expected);
  for (const auto& p : {live, mine, other_host}) EXPECT_TRUE(fs::exists(p)) << p;

  ::kill(running, SIGKILL);
  ::waitpid(running, nullptr, 0);
  ::waitpid(zombie, nullptr, 0);
}

TEST_F(TempFiles, ADirectoryThatOneProgramOwnsLosesEveryTemporaryFile) {
  for (const char* name :
       {".p0.r0.h5.tmp.node7.12", ".manifest.json.tmp.node1.5.0", "p1.r0.h5", "manifest.json", ".hidden", "x.tmp.y"})
    std::ofstream(dir / name) << "x";
  fs::create_directory(dir / ".sub.tmp.node1.3");  // directories are left alone
  EXPECT_EQ(remove_temp_files_in(dir).size(), 2u);
  EXPECT_EQ(names(), (std::vector<std::string>{".hidden", ".sub.tmp.node1.3", "manifest.json", "p1.r0.h5", "x.tmp.y"}));
}

// A device, pipe or socket at the path is never replaced by the renamed file: `-o /dev/null`
// must not turn /dev/null into a report. Refused before writing, and again at the rename.
TEST_F(TempFiles, ADeviceOrPipeIsNeverRenamedOver) {
  EXPECT_EQ(why_not_replaceable(dir / "absent.h5"), "");
  std::ofstream(dir / "plain.h5") << "x";
  EXPECT_EQ(why_not_replaceable(dir / "plain.h5"), "");
  fs::create_symlink(dir / "plain.h5", dir / "link.h5");
  EXPECT_EQ(why_not_replaceable(dir / "link.h5"), "");  // a link to a file: replacing the link is fine
  const std::string null = why_file_cannot_be_created("/dev/null");
  EXPECT_EQ(null.rfind("it is a character device (files are written under a temporary name", 0), 0u) << null;
  const auto fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(why_file_cannot_be_created(fifo).rfind("it is a pipe", 0), 0u);
  const auto temp = temporary_path_for(fifo);
  std::ofstream(temp) << "data";
  register_temp_file(temp);
  EXPECT_THROW(commit_temp_file(temp, fifo), Error);
  EXPECT_TRUE(fs::is_fifo(fifo)) << "the pipe was replaced";
  remove_registered_temp_files();
  EXPECT_FALSE(fs::exists(temp));
}

TEST_F(TempFiles, CreatabilityIsTestedByCreatingAFile) {
  EXPECT_EQ(why_file_cannot_be_created(dir / "r.h5"), "");
  EXPECT_EQ(why_file_cannot_be_created(dir / "missing" / "r.h5"),
            "directory " + (dir / "missing").string() + " does not exist");
  EXPECT_EQ(why_file_cannot_be_created(dir), "it is a directory");
  // /proc refuses new files even to root, whom access(2) tells it may write there.
  const std::string proc = why_file_cannot_be_created("/proc/embscale-test.h5");
  EXPECT_TRUE(proc == "cannot create a file in directory /proc (No such file or directory)" ||
              proc == "directory /proc is not writable (Permission denied)")
      << proc;
  EXPECT_TRUE(names().empty()) << "the probe file was left behind";
  try {
    check_file_can_be_created("/proc/embscale-test.h5", "report");
    ADD_FAILURE() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/proc/embscale-test.h5: cannot create report: " + proc);
  }
}

}  // namespace
}  // namespace embscale
