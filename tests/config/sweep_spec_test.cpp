// The sweep file: expansion (order, grid x list, repetitions, ranks), the recorded kinds, the
// digest, and every rejected input with its whole message. The reference for the expansion is
// written out by hand: an independent enumeration of the expected points.
#include <gtest/gtest.h>

#include <unistd.h>
#include "config/sweep_spec.hpp"

#include <filesystem>
#include <fstream>

#include "config_test_support.hpp"

namespace embscale::config {
namespace {

// A sweep over the embedded default, from sweep text with origin "s.json".
SweepSpec parse(const std::string& text) { return parse_sweep({"s.json", text, "", ""}); }

std::string error_of_sweep(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Each sweep text fails with an InputError whose message starts with the given one.
void expect_errors(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [text, message] : cases) {
    const std::string error = error_of_sweep(text);
    EXPECT_EQ(error.substr(0, message.size()), message) << text << "\n  got: " << error;
  }
}

TEST(SweepSpec, RelativePathsOfTheBaseResolveWhereItWasWritten) {
  // A base file: its directory; an inline base: the sweep file's.
  const SweepSpec from_file =
      parse_sweep({"sweeps/s.json", R"({"base": "../configs/b.json", "points": [{"solver.max_iter": 3}]})",
                   "sweeps/../configs/b.json", default_config_text()});
  EXPECT_EQ(from_file.base.directory, std::filesystem::path("sweeps/../configs"));
  EXPECT_EQ(from_file.points.at(0).config.directory, std::filesystem::path("sweeps/../configs"));
  auto inline_base = nlohmann::json::parse(R"({"points": [{"solver.max_iter": 3}]})");
  inline_base["base"] = nlohmann::json::parse(default_config_text());
  const SweepSpec inline_spec = parse_sweep({"sweeps/s.json", inline_base.dump(), "", ""});
  EXPECT_EQ(inline_spec.points.at(0).config.directory, std::filesystem::path("sweeps"));
}

TEST(SweepSpec, GridIsTheProductWithTheFirstFieldOutermost) {
  const auto spec = parse(R"({"grid": {
      "layers.emb1.sparse_embedding_hparam.embedding_vec_size": [16, 64, 128],
      "layers.data.synthetic.zipf_alpha": [0.8, 1.2]}, "repetitions": 3})");
  ASSERT_EQ(spec.points.size(), 6u);
  EXPECT_EQ(spec.repetitions, 3);
  EXPECT_EQ(spec.axes, (std::vector<std::string>{"layers.emb1.sparse_embedding_hparam.embedding_vec_size",
                                                 "layers.data.synthetic.zipf_alpha"}));
  EXPECT_EQ(spec.axis_kinds, (std::vector<AxisKind>{AxisKind::kInteger, AxisKind::kNumber}));
  const std::vector<std::pair<int, double>> expected{{16, 0.8}, {16, 1.2},  {64, 0.8},
                                                     {64, 1.2}, {128, 0.8}, {128, 1.2}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& p = spec.points[i];
    EXPECT_EQ(p.index, static_cast<std::int64_t>(i));
    EXPECT_EQ(p.config.embeddings.front().embedding_vec_size, expected[i].first) << i;
    EXPECT_DOUBLE_EQ(p.config.data.synthetic.slots.front().keys.zipf_alpha, expected[i].second) << i;
    EXPECT_EQ(p.settings[0].value, expected[i].first);
    EXPECT_EQ(p.ranks, 0);  // every rank of the job
  }
  // Everything not swept stays as in the base.
  EXPECT_EQ(spec.points[3].config.solver.batchsize, default_config().solver.batchsize);
}

TEST(SweepSpec, ListedPointsAreCrossedWithTheGridAndRanksAreRecorded) {
  const auto spec = parse(R"({"points": [{"solver.batchsize": 1024, "solver.max_iter": 5},
                                          {"solver.batchsize": 2048, "solver.max_iter": 7}],
                              "grid": {"ranks": [1, 2]}})");
  ASSERT_EQ(spec.points.size(), 4u);
  EXPECT_EQ(spec.axes, (std::vector<std::string>{"solver.batchsize", "solver.max_iter", "ranks"}));
  const std::vector<std::tuple<std::int64_t, std::int64_t, int>> expected{
      {1024, 5, 1}, {1024, 5, 2}, {2048, 7, 1}, {2048, 7, 2}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(spec.points[i].config.solver.batchsize, std::get<0>(expected[i])) << i;
    EXPECT_EQ(spec.points[i].config.solver.max_iter, std::get<1>(expected[i])) << i;
    EXPECT_EQ(spec.points[i].ranks, std::get<2>(expected[i])) << i;
  }
  EXPECT_EQ(describe_settings(spec.points[1].settings), "solver.batchsize=1024 solver.max_iter=5 ranks=2");
}

TEST(SweepSpec, NoFieldsIsOnePointOfTheBase) {
  const auto spec = parse(R"({"repetitions": 2})");
  ASSERT_EQ(spec.points.size(), 1u);
  EXPECT_TRUE(spec.axes.empty());
  EXPECT_EQ(spec.points[0].config.solver.max_iter, default_config().solver.max_iter);
}

TEST(SweepSpec, InlineBaseAndTextAndJsonKinds) {
  auto base = testing::default_json();
  base["solver"]["max_iter"] = 3;
  const std::string text = R"({"base": )" + base.dump() + R"(, "grid": {
      "layers.emb1.sparse_embedding_hparam.combiner": ["sum", "mean"],
      "layers.data.slot_size_array": [[100000, 100000, 100000, 100000, 100000, 100000, 100000, 100000]]}})";
  const auto spec = parse(text);
  ASSERT_EQ(spec.points.size(), 2u);
  EXPECT_EQ(spec.points[1].config.embeddings.front().combiner, Combiner::kMean);
  EXPECT_EQ(spec.points[1].config.solver.max_iter, 3);
  EXPECT_EQ(spec.axis_kinds, (std::vector<AxisKind>{AxisKind::kText, AxisKind::kJson}));
}

TEST(SweepSpec, DigestFollowsWhatRuns) {
  const auto a = parse(R"({"grid": {"solver.max_iter": [5, 6]}})");
  EXPECT_EQ(a.digest, parse(R"({"grid": {"solver.max_iter": [5, 6]}, "sweep_version": 1})").digest);
  EXPECT_NE(a.digest, parse(R"({"grid": {"solver.max_iter": [5, 7]}})").digest);
  EXPECT_NE(a.digest, parse(R"({"grid": {"solver.max_iter": [5, 6]}, "repetitions": 2})").digest);
  EXPECT_NE(a.digest, parse(R"({"grid": {"solver.max_iter": [5, 6], "ranks": [1]}})").digest);
}

TEST(SweepSpec, RejectsWhatCannotRunWithMessagesNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"grid": {"solver.batchsze": [1]}})",
       "s.json: field \"solver.batchsze\": the config has no \"batchsze\" in \"solver\"; did you mean \"batchsize\"?"},
      {R"({"grid": {"solvr.batchsize": [1]}})",
       "s.json: field \"solvr.batchsize\": the config has no \"solvr\"; did you mean \"solver\"?"},
      {R"({"grid": {"layers.emb2.sparse_embedding_hparam.embedding_vec_size": [8]}})",
       "s.json: field \"layers.emb2.sparse_embedding_hparam.embedding_vec_size\": the config has no layer named "
       "\"emb2\" (layers: data, emb1); did you mean \"emb1\"?"},
      {R"({"grid": {"layers.emb1": [8]}})",
       "s.json: field \"layers.emb1\": \"layers\" is the layer list: name a layer and a field (layers.<name>.<field>)"},
      {R"({"grid": {"solver.max_iter": [5, "ten"]}})",
       "s.json: field \"solver.max_iter\": values mix kinds (5 and \"ten\"); a swept field takes numbers, or text, "
       "or other JSON"},
      {R"({"grid": {"solver.max_iter": [5, -1]}})",
       "s.json: point 1 (solver.max_iter=-1): solver.max_iter: expected an integer >= 1, got -1"},
      {R"({"grid": {"solver.max_iter": []}})",
       "s.json: grid.solver.max_iter: expected a non-empty array of values, got []"},
      {R"({"grid": {"ranks": [0]}})", "s.json: field \"ranks\": expected integers >= 1, got 0"},
      {R"({"points": [{"solver.max_iter": 5}, {"solver.batchsize": 64}]})",
       "s.json: points[1]: sets the fields {solver.batchsize}, the first point sets {solver.max_iter}; every listed "
       "point sets the same fields"},
      {R"({"points": [{"solver.max_iter": 5}], "grid": {"solver.max_iter": [6]}})",
       "s.json: field \"solver.max_iter\" is both in \"points\" and in \"grid\""},
      {R"({"gird": {}})", "s.json: gird: unknown key; did you mean \"grid\"?"},
      {R"({"sweep_version": 2})", "s.json: sweep_version: expected an integer in [1, 1], got 2"},
      {R"({"base": 7})",
       "s.json: base: expected a config file path (relative to the sweep file) or a config object, got 7"},
      {"{\"grid\": {\n  \"solver.max_iter\": [5,]}}", "s.json:2:25: invalid JSON"},
  };
  expect_errors(cases);
}

// A field that does not exist, in the wrong section or mistyped where nothing beside it is close,
// is named with the existing field nearest to it (sweep addressing), checked before any point.
TEST(SweepSpec, AFieldThatDoesNotExistGetsTheNearestExistingField) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"grid": {"solver.zipf_alpha": [1.1]}})",
       "s.json: field \"solver.zipf_alpha\": the config has no \"zipf_alpha\" in \"solver\"; did you mean "
       "\"layers.data.synthetic.zipf_alpha\"?"},
      {R"({"grid": {"batchsize": [64]}})",
       "s.json: field \"batchsize\": the config has no \"batchsize\"; did you mean \"solver.batchsize\"?"},
      {R"({"points": [{"layers.emb1.embedding_vec_size": 8}]})",
       "s.json: field \"layers.emb1.embedding_vec_size\": the config has no \"embedding_vec_size\" in \"layers.emb1\"; "
       "did you mean \"layers.emb1.sparse_embedding_hparam.embedding_vec_size\"?"},
      {R"({"grid": {"layers.emb1.sparse_embedding_hparam.embedding_vec_sise": [8]}})",
       "s.json: field \"layers.emb1.sparse_embedding_hparam.embedding_vec_sise\": the config has no "
       "\"embedding_vec_sise\" in \"layers.emb1.sparse_embedding_hparam\"; did you mean \"embedding_vec_size\"?"},
      {R"({"grid": {"optimizer.hparam.learning_rate": [0.1]}})",
       "s.json: field \"optimizer.hparam.learning_rate\": the config has no \"hparam\" in \"optimizer\"; did you mean "
       "\"optimizer.sgd_hparam.learning_rate\"?"},
      // Whole words of a field's name find it.
      {R"({"grid": {"layers.emb1.sparse_embedding_hparam.vec_size": [8]}})",
       "s.json: field \"layers.emb1.sparse_embedding_hparam.vec_size\": the config has no \"vec_size\" in "
       "\"layers.emb1.sparse_embedding_hparam\"; did you mean "
       "\"layers.emb1.sparse_embedding_hparam.embedding_vec_size\"?"},
      // Nothing close anywhere: the keys the parser knows there.
      {R"({"grid": {"layers.emb1.sparse_embedding_hparam.width": [8]}})",
       "s.json: field \"layers.emb1.sparse_embedding_hparam.width\": the config has no \"width\" in "
       "\"layers.emb1.sparse_embedding_hparam\"; known keys: \"max_vocabulary_size_per_gpu\", \"slot_size_array\", "
       "\"embedding_vec_size\" or \"combiner\""},
      // A field the base leaves to its default exists; a bad value for it is the point's error.
      {R"({"grid": {"optimizer.update_type": ["Local", "LazyGlobal"]}})",
       "s.json: point 1 (optimizer.update_type=\"LazyGlobal\"): optimizer.update_type: \"LazyGlobal\" is defined for "
       "\"Adam\" only"},
  };
  expect_errors(cases);
  EXPECT_EQ(parse(R"({"grid": {"optimizer.sgd_hparam.atomic_update": [true, false]}})").points.size(), 2u);
}

TEST(SweepSpec, ReadsTheBaseRelativeToTheSweepFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("sweep_spec_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "configs");
  {
    std::ofstream(dir / "configs" / "base.json") << default_config_text();
    std::ofstream(dir / "s.json") << R"({"base": "configs/base.json", "grid": {"solver.max_iter": [4]}})";
    std::ofstream(dir / "missing.json") << R"({"base": "nope.json"})";
  }
  const auto source = read_sweep_source((dir / "s.json").string());
  EXPECT_EQ(source.base_origin, (dir / "configs" / "base.json").string());
  EXPECT_EQ(parse_sweep(source).points.front().config.solver.max_iter, 4);
  try {
    read_sweep_source((dir / "missing.json").string());
    ADD_FAILURE() << "a missing base must fail";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nope.json: cannot open base config"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace embscale::config

namespace embscale::config {
namespace {

TEST(ConfigSettings, SetFieldsByPathWithJsonOrTextValues) {
  const auto c =
      parse_config_with_settings(default_config_text(), "d.json",
                                 {"solver.batchsize=512", "layers.emb1.sparse_embedding_hparam.combiner=mean",
                                  "layers.data.synthetic.zipf_alpha=0.9"});
  EXPECT_EQ(c.solver.batchsize, 512);
  EXPECT_EQ(c.embeddings.front().combiner, Combiner::kMean);
  EXPECT_DOUBLE_EQ(c.data.synthetic.slots.front().keys.zipf_alpha, 0.9);
  EXPECT_EQ(parse_config_with_settings(default_config_text(), "d.json", {}).solver.batchsize,
            default_config().solver.batchsize);
  const auto error_of = [](const std::string& setting) {
    try {
      parse_config_with_settings(default_config_text(), "d.json", {setting});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error_of("solver.batchsize"), "--set solver.batchsize: expected FIELD=VALUE");
  EXPECT_EQ(error_of("ranks=4"), "--set ranks=4: the rank count is the launcher's (mpiexec -n, srun -n)");
  EXPECT_EQ(error_of("solver.batchsize=-4"),
            "d.json with solver.batchsize=-4: solver.batchsize: expected an integer >= 1, got -4");
  EXPECT_EQ(
      error_of("solvr.batchsize=4"),
      "--set solvr.batchsize=4: field \"solvr.batchsize\": the config has no \"solvr\"; did you mean \"solver\"?");
  EXPECT_EQ(error_of("max_iter=4"),
            "--set max_iter=4: field \"max_iter\": the config has no \"max_iter\"; did you mean \"solver.max_iter\"?");
  // A short name finds the field whose name holds it as whole words (no typo rule reaches it).
  EXPECT_EQ(error_of("zipf=1.2"),
            "--set zipf=1.2: field \"zipf\": the config has no \"zipf\"; did you mean "
            "\"layers.data.synthetic.zipf_alpha\"?");
  EXPECT_EQ(error_of("vec_size=8"),
            "--set vec_size=8: field \"vec_size\": the config has no \"vec_size\"; did you mean "
            "\"layers.emb1.sparse_embedding_hparam.embedding_vec_size\"?");
}

// FIELD=null removes a field, so that its default applies: the SGD block goes when the type
// becomes Adam (the default config's sgd_hparam would otherwise be refused as another type's, and
// a block set to {} would still be one).
TEST(ConfigSettings, NullRemovesAFieldAndItsDefaultApplies) {
  const auto error_of = [](const std::vector<std::string>& settings) {
    try {
      parse_config_with_settings(default_config_text(), "d.json", settings);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of({"optimizer.type=Adam"}).find("optimizer.sgd_hparam"), std::string::npos);
  const auto adam = parse_config_with_settings(
      default_config_text(), "d.json",
      {"optimizer.type=Adam", "optimizer.sgd_hparam=null", R"(optimizer.adam_hparam={"learning_rate": 0.01})"});
  EXPECT_EQ(adam.optimizer.type, OptimizerType::kAdam);
  const auto defaults = parse_config_with_settings(default_config_text(), "d.json", {"solver.warmup_iter=null"});
  EXPECT_EQ(defaults.solver.warmup_iter, Solver{}.warmup_iter);
  EXPECT_EQ(error_of({"solver.snapshot=null"}),
            "--set solver.snapshot=null: field \"solver.snapshot\" is not in the config: nothing to remove");
}

}  // namespace
}  // namespace embscale::config
