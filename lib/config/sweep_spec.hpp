// A sweep file (embscale sweep): a base config and the points to run it at.
//
//   {
//     "sweep_version": 1,
//     "base": "../configs/default.json",     // a path relative to the sweep file, an inline
//                                            // config object, or absent: the embedded default
//     "grid": {                              // every combination, the first field outermost
//       "layers.emb1.sparse_embedding_hparam.embedding_vec_size": [16, 64, 128],
//       "layers.data.synthetic.zipf_alpha": [0.8, 1.05]
//     },
//     "points": [ {"solver.batchsize": 1024}, {"solver.batchsize": 4096} ],  // a list; with a
//                                            // grid, each listed point is crossed with the grid
//     "repetitions": 3                       // runs of each point (default 1)
//   }
//
// Fields are addressed by their dotted path in the config, layers by name ("layers.emb1.…"), as
// in lib/config/README.md. The field "ranks" is special: the number of ranks a point runs on
// (the first N ranks of the job), for scaling studies inside one allocation.
//
// Every point is checked up front (its config parsed and validated): a typo fails the sweep
// before anything runs, naming the sweep file, the field and what is wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"

namespace embscale::config {

inline constexpr int kSweepVersion = 1;
inline constexpr const char* kRanksField = "ranks";

// What rank 0 reads from disk; every rank parses the same bytes.
struct SweepSource {
  std::string origin;       // the sweep file's path, for messages
  std::string text;         // the sweep file
  std::string base_origin;  // the base config's path, or "<embedded default>", or "<origin>: base"
  std::string base_text;    // empty when the base is inline
};

struct SweepSetting {
  std::string field;  // dotted path, or "ranks"
  nlohmann::json value;
};

struct SweepPoint {
  std::int64_t index = 0;
  std::vector<SweepSetting> settings;  // one per axis, in axis order
  int ranks = 0;                       // 0: every rank of the job
  Config config;                       // the base with the settings applied
};

// How a swept field's values are recorded (a /summary column has one type): integers, numbers
// (any non-integer among them makes them all numbers), text, or other JSON (arrays, objects,
// booleans) as its compact text.
enum class AxisKind { kInteger, kNumber, kText, kJson };

struct SweepSpec {
  std::vector<std::string> axes;  // swept fields in order (list fields first, then grid fields)
  std::vector<AxisKind> axis_kinds;
  std::vector<SweepPoint> points;
  std::int64_t repetitions = 1;
  Config base;
  std::uint64_t digest = 0;  // of the expanded points and repetitions (the manifest's key)
};

// Reads the sweep file and, when "base" names a file, the base config. Throws InputError naming
// the file that cannot be read. Run on one rank; broadcast the texts.
SweepSource read_sweep_source(const std::string& path);

// Parses and expands. Throws InputError "<sweep file>: <where>: <what is wrong>" for invalid
// JSON (line:column), unknown keys, a field path that does not exist in the config (with the
// nearest name beside it, else the nearest existing field, else the keys the parser knows),
// values of mixed kinds in one field, points that set different fields, or a point whose config
// is invalid.
SweepSpec parse_sweep(const SweepSource& source);
// The most points a sweep may expand to (each is a config held in memory; a sweep of this many
// runs is days of work already).
inline constexpr std::size_t kMaxSweepPoints = 100000;

// A config with fields set from the command line (`embscale run --set FIELD=VALUE`), fields
// addressed as in a sweep. VALUE is JSON when it parses as JSON (64, 1.05, [1,2], "x"), else
// text (sum); null removes the field (`run --unset FIELD`), so that its default applies (a block
// of another optimizer type, say). Throws InputError naming the setting and the field (with the
// nearest existing one when it does not exist).
Config parse_config_with_settings(const std::string& text, const std::string& origin,
                                  const std::vector<std::string>& settings);

// "layers.emb1.sparse_embedding_hparam.embedding_vec_size=64 ranks=2" for progress lines.
std::string describe_settings(const std::vector<SweepSetting>& settings);

}  // namespace embscale::config
