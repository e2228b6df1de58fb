// Files being written under a temporary name. A writer registers its temporary path while it
// writes and commits (renames) when complete; the fatal-error path removes whatever is still
// registered, so a failed run leaves no half-written report behind.
#pragma once

#include <filesystem>
#include <string>

namespace embscale {

// "<dir>/.<name>.tmp.<pid>": same directory (rename stays atomic on one file system), hidden,
// unique per process.
std::filesystem::path temporary_path_for(const std::filesystem::path& final_path);

void register_temp_file(const std::filesystem::path& path);
void unregister_temp_file(const std::filesystem::path& path);
// Removes every registered file; safe to call from the fatal path (never throws).
void remove_registered_temp_files() noexcept;

// Why a file cannot be created at `path` (its directory is missing or not writable, the path
// names a directory), or "" when it can. For a clear message before any write starts.
std::string why_file_cannot_be_created(const std::filesystem::path& path);

// Renames `temp` onto `final_path` atomically and unregisters it. Throws on failure.
void commit_temp_file(const std::filesystem::path& temp, const std::filesystem::path& final_path);

}  // namespace embscale
