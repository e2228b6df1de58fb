// How report values map onto HDF5 objects (results/schema.md): groups that keep creation order,
// chunked and compressed datasets, typed attributes, the /summary compound table. Used by the
// writer; every function here is collective when the file is open with the MPI-IO driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "report/hdf5_handles.hpp"
#include "report/summary.hpp"

namespace embscale::report {

// Chunks of about 1 MiB (the size of HDF5's default chunk cache, and large enough for deflate to
// pay off); in [iteration, rank] datasets a chunk spans at most kMaxChunkRanks ranks, so that a
// collective filtered write at thousands of ranks spreads chunk ownership over many ranks.
inline constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
inline constexpr hsize_t kMaxChunkRanks = 256;
// deflate level: 1 is several times faster than 6 and within a few percent of its ratio on
// shuffled float64 timings.
inline constexpr unsigned kDeflateLevel = 1;

// Attributes of a /runs/<id> group that describe its structure rather than the run's parameters:
// phases, samples, and in sweeps point and repetition (results/schema.md).
bool is_structural_attribute(std::string_view name);

// Groups of a /runs/<id> group that hold no tables: timings, counters, series, metadata (added by
// merges), and timings_summary, counters_summary (reserved for capped samples). Any other group
// of a run holds tables (results/schema.md "Tables").
bool is_reserved_run_group(std::string_view name);

// Name lists stored as one comma-separated attribute (phases, a table's columns): the names
// joined by ',', and split back ("" gives no names). Names must not contain ',' and, for the
// list to survive the round trip, a single name must not be empty.
std::string join_names(const std::vector<std::string>& names);
std::vector<std::string> split_names(const std::string& text);

// The run attribute phase_meanings: one line per phase, "name: what it covers", in execution
// order. Writers pass names and meanings of the same length; the reader gives a map (lines
// without ": " are skipped).
std::string phase_meanings_text(const std::vector<std::string>& names, const std::vector<std::string>& meanings);
std::map<std::string, std::string> parse_phase_meanings(const std::string& text);

// A group whose links and attributes keep their creation order (readers list runs and
// parameters in the order they were written). `where` names it in messages.
Group create_group(hid_t parent, const std::string& name, const std::string& where);

// A dataset of `type` and extent `dims` (1 or 2 dimensions): chunked, shuffled and deflated when
// not empty; contiguous otherwise.
Dataset create_dataset(hid_t parent, const std::string& name, hid_t type, std::initializer_list<hsize_t> dims,
                       const std::string& where);

// A scalar attribute: int64, float64 or a fixed-length string. `where` names the owner.
void write_attribute(hid_t object, const std::string& name, const SummaryValue& value, const std::string& where);

// The /summary compound table: one member per field in the rows' order, int64, float64, or a
// fixed-length NUL-padded string as wide as the longest value of its column (h5py and pandas
// read that as bytes, without variable-length machinery).
class SummaryTable {
 public:
  explicit SummaryTable(const std::vector<SummaryRow>& rows);
  // Of the structure only (row count, names, kinds, string widths, problem): the values are
  // written by rank 0.
  std::uint64_t digest() const noexcept { return digest_; }
  // Why the rows cannot form one table (rows with other fields), or "".
  const std::string& problem() const noexcept { return problem_; }
  // Collective: creates the dataset; the root writes the rows, the other ranks nothing.
  void write(hid_t parent, const std::string& name, bool root, hid_t collective) const;

 private:
  const std::vector<SummaryRow>& rows_;
  std::vector<std::size_t> offsets_;
  std::vector<std::size_t> sizes_;
  std::size_t record_size_ = 0;
  std::string problem_;
  std::uint64_t digest_ = 0;
};

}  // namespace embscale::report
