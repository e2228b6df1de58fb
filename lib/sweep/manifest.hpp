// The manifest of a sweep: which runs are finished, in <points dir>/manifest.json, so that a
// sweep stopped by a time limit, a preemption or a crash resumes where it stopped.
//
//   {"manifest_version": 1, "sweep_digest": "a1b2...", "runs_total": 12,
//    "done": [{"run_id": "p0.r0", "file": "p0.r0.h5", "finished_utc": "...", "slurm_job_id": "42"}, ...]}
//
// Invariants: a run is listed only after its report was committed (renamed into place), and
// the manifest itself is replaced atomically (temporary name, then rename): a crash at any
// moment leaves a manifest that lists only whole files. A report present but not listed (the
// job died between the two renames) is simply run again. Used by one process (rank 0).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace embscale::sweep {

struct ManifestEntry {
  std::string run_id;
  std::string file;  // relative to the points directory
  std::string finished_utc;
  std::string slurm_job_id;  // empty outside Slurm
};

class Manifest {
 public:
  static constexpr int kVersion = 1;

  // A new, empty manifest (written at once, replacing none: the caller checked).
  static Manifest create(std::filesystem::path directory, std::uint64_t sweep_digest, std::int64_t runs_total);
  // Reads `directory`/manifest.json. Throws InputError naming the manifest when it is not
  // valid, was written for another sweep (digest or size differ: the sweep file or its base
  // changed), or lists a run whose file is missing or does not hold that run.
  static Manifest load(std::filesystem::path directory, std::uint64_t sweep_digest, std::int64_t runs_total);

  static std::filesystem::path path_in(const std::filesystem::path& directory) { return directory / "manifest.json"; }

  bool is_done(const std::string& run_id) const;
  const std::vector<ManifestEntry>& done() const noexcept { return done_; }
  // Records a finished run and rewrites the manifest atomically.
  void mark_done(ManifestEntry entry);

 private:
  Manifest(std::filesystem::path directory, std::uint64_t digest, std::int64_t runs_total)
      : directory_(std::move(directory)), digest_(digest), runs_total_(runs_total) {}
  void write() const;

  std::filesystem::path directory_;
  std::uint64_t digest_ = 0;
  std::int64_t runs_total_ = 0;
  std::vector<ManifestEntry> done_;
};

// "00a1b2c3d4e5f607": a digest as it appears in the manifest.
std::string digest_text(std::uint64_t digest);

}  // namespace embscale::sweep
