// Files being written under a temporary name. A writer registers its temporary path while it
// writes and commits (renames) when complete; the fatal-error path removes whatever is still
// registered, so a failed run leaves no half-written report behind.
//
// A process killed outright (SIGKILL, a node crash, mpiexec ending a job whose rank died) cannot
// remove its own files. Its temporary name says who wrote it, "<dir>/.<name>.tmp.<host>.<pid>",
// so a later writer into the same directory can tell an orphan (same host, no such process) from
// the file of a writer still at work, and remove only the orphan (remove_stale_temp_files).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace embscale {

// "<dir>/.<name>.tmp.<host>.<pid>": same directory (rename stays atomic on one file system),
// hidden, unique per process; <host> is the first label of the host name (no dots), so the
// name parses back (temp_file_writer). Writers may append ".<n>" to tell their files apart.
std::filesystem::path temporary_path_for(const std::filesystem::path& final_path);

// Who wrote a temporary file of `final_path` ("<dir>/.<name>.tmp.<host>.<pid>[.<anything>]").
struct TempFileWriter {
  std::string host;
  long pid = 0;
};
// The writer named by `temp`, or none when `temp` is not a temporary file of `final_path`.
std::optional<TempFileWriter> temp_file_writer(const std::filesystem::path& temp,
                                               const std::filesystem::path& final_path);

// Removes the temporary files in `final_path`'s directory, of any final name, whose writer has
// certainly ended: written on this host by a process that no longer exists. So a run into
// results/runs/ (a new timestamped name each time) clears what killed runs left there. Files
// from other hosts, or from a live process (or a recycled pid), are kept. Returns the files
// removed; never throws.
std::vector<std::filesystem::path> remove_stale_temp_files(const std::filesystem::path& final_path) noexcept;

// Removes every temporary file (".<name>.tmp.<anything>", regular files only) in `directory`,
// whoever wrote it: for a directory that one program owns, such as a sweep's points directory,
// where any temporary file left at the start is an abandoned run's. Returns the files removed;
// never throws.
std::vector<std::filesystem::path> remove_temp_files_in(const std::filesystem::path& directory) noexcept;

void register_temp_file(const std::filesystem::path& path);
void unregister_temp_file(const std::filesystem::path& path);
// Removes every registered file; safe to call from the fatal path (never throws).
void remove_registered_temp_files() noexcept;

// "" when `path` may be replaced by a renamed file (it does not exist, or is a regular file or a
// link to one); else why not ("it is a character device (...)"): a device, pipe or socket at
// the path would be replaced by a plain file, so no writer renames over one.
std::string why_not_replaceable(const std::filesystem::path& path);

// Why a file cannot be created at `path` (its directory is missing or not a directory, the path
// names a directory, or creating a file in the directory fails), or "" when it can. The last
// test creates a file there and removes it: access(2) says yes to root on file systems that
// refuse new files anyway (/proc, read-only bind mounts seen as writable), so only a real
// creation tells the truth. For a clear message before any write starts.
std::string why_file_cannot_be_created(const std::filesystem::path& path);

// Throws InputError("<path>: cannot create <what>: <why>") when why_file_cannot_be_created
// finds a reason.
void check_file_can_be_created(const std::filesystem::path& path, const std::string& what);

// Renames `temp` onto `final_path` atomically and unregisters it. Throws on failure.
void commit_temp_file(const std::filesystem::path& temp, const std::filesystem::path& final_path);

}  // namespace embscale
