// HugeCTR compatibility: a config written with HugeCTR's keys and layers (HugeCTR's documentation) parses, what it
// asks for that embscale does not run is recorded by name, its unused keys are still validated,
// and the name helpers behind the suggestions behave.
#include <gtest/gtest.h>

#include <filesystem>

#include "config/json_reader.hpp"
#include "config_test_support.hpp"

namespace embscale::config {
namespace {

using testing::default_json;
using testing::error_of;
using testing::layer;

// The default config with every HugeCTR key embscale accepts but does not use, as HugeCTR's own
// documentation writes them.
nlohmann::json with_hugectr_keys() {
  auto j = default_json();
  j["solver"].update(nlohmann::json::parse(R"({
    "lr_policy": "fixed", "gpu": [[0, 1], [1, 2]], "batchsize_eval": 256, "snapshot": 10000000,
    "snapshot_prefix": "./", "eval_interval": 1000, "eval_batches": 60, "max_eval_batches": 10,
    "mixed_precision": 256, "eval_metrics": ["AUC:0.8025", "AverageLoss"], "enable_tf32_compute": true,
    "input_key_type": "I64", "dense model_file": "./dense_model.bin",
    "sparse_model_file": ["./sparse_model1.bin", "./sparse_model2.bin"]})"));
  j["optimizer"].update(nlohmann::json::parse(R"({"update_type": "Local", "learning_rate": true})"));
  j["optimizer"]["sgd_hparam"].update(nlohmann::json::parse(R"({"atomic_update": true, "warmup_steps": 8000,
    "decay_start": 48000, "decay_steps": 24000, "decay_power": 2.0, "end_lr": 0.0})"));
  layer(j, "data").update(nlohmann::json::parse(R"({
    "source": "./file_list.txt", "eval_source": "./file_list_test.txt", "check": "Sum", "num_samples": 1000,
    "eval_num_samples": 100, "cache_eval_data": 1361, "float_label_dense": false})"));
  layer(j, "data")["sparse"][0].update(
      nlohmann::json::parse(R"({"type": "LocalizedSlot", "max_feature_num_per_sample": 32, "max_nnz": 4,
                                 "is_required": false})"));
  layer(j, "emb1")["plan_file"] = "all2all_plan_bi_1.json";
  layer(j, "emb1")["sparse_embedding_hparam"]["combiner"] = 0;
  return j;
}

TEST(ConfigHugeCtr, AcceptsHugeCtrKeysItDoesNotUse) {
  const Config c = parse_config(with_hugectr_keys(), "t");
  EXPECT_EQ(c.solver.batchsize, 4096);  // the keys change nothing embscale reads
  EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.05);
  EXPECT_DOUBLE_EQ(c.optimizer.warmup_steps, 8000);  // the schedule is read (sgd_hparam)
  EXPECT_DOUBLE_EQ(c.optimizer.decay_start, 48000);
  EXPECT_EQ(c.embeddings.at(0).combiner, Combiner::kSum);
  EXPECT_EQ(c.solver.input_key_type, "I64");
  EXPECT_TRUE(c.data.source.empty()) << "a Synthetic layer does not read its source";
  // What HugeCTR would do with them and a run does not: named, the solver's then the Data layer's.
  EXPECT_EQ(
      c.not_run,
      (std::vector<std::string>{
          "solver.batchsize_eval (evaluation)", "solver.eval_interval (evaluation)", "solver.eval_batches (evaluation)",
          "solver.max_eval_batches (evaluation)", "solver.mixed_precision (fp16 mixed precision)",
          "solver.eval_metrics (evaluation)", "solver.enable_tf32_compute (dense-layer arithmetic)",
          "solver.dense model_file (initial weights from a model file)",
          "solver.sparse_model_file (initial weights from a model file)", "layers[data].eval_source (evaluation)",
          "layers[data].eval_num_samples (evaluation)", "layers[data].cache_eval_data (evaluation)"}));
  // What changes nothing a run measures: named with why, so that none is dropped without a word.
  EXPECT_EQ(
      c.not_used,
      (std::vector<std::string>{
          "solver.gpu (the GPUs a node uses: this config's layers run on the host, on the launcher's ranks)",
          "solver.snapshot (HugeCTR's model snapshots; a run here writes none: its checkpoints are solver.checkpoint)",
          "solver.snapshot_prefix (HugeCTR's model snapshots; a run here writes none: its checkpoints are "
          "solver.checkpoint)",
          "optimizer.learning_rate (HugeCTR's flag; the rate is the hparam block's)",
          "layers[data].sparse[0].type (the embedding layer's type places the slots)",
          "layers[data].sparse[0].is_required (HugeCTR's flag for a slot a sample must hold; every slot is "
          "read)",
          "layers[emb1].plan_file (HugeCTR's all2all plan for NVLink; the exchanges here are MPI's)"}));
  EXPECT_TRUE(parse_config(default_json(), "t").not_used.empty()) << "embscale's own config uses every key";
  auto single_node = with_hugectr_keys();
  single_node["solver"]["gpu"] = {0, 2, 4, 7};
  EXPECT_EQ(parse_config(single_node, "t").solver.max_iter, 100);
}

TEST(ConfigHugeCtr, UnusedKeysMustStillHoldValidValues) {
  struct Case {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](auto& j) { j["solver"]["lr_policy"] = "step"; }, "solver.lr_policy: expected \"fixed\", got \"step\""},
      {[](auto& j) {
         j["solver"]["gpu"] = {0, -1};
       },
       "solver.gpu[1]: expected an integer in [0, 65536], got -1"},
      {[](auto& j) { j["solver"]["gpu"] = "0"; },
       "solver.gpu: expected a list of GPU indices, or one list per node, got \"0\""},
      {[](auto& j) { j["solver"]["mixed_precision"] = 100; },
       "solver.mixed_precision: expected a loss scaler: 128, 256, 512 or 1024, got 100"},
      {[](auto& j) { j["solver"]["eval_metrics"] = {"AUC:2"}; },
       "solver.eval_metrics[0]: expected \"AUC\", \"AUC:<threshold in (0, 1]>\" or \"AverageLoss\", got \"AUC:2\""},
      {[](auto& j) { j["solver"]["input_key_type"] = "U64"; },
       "solver.input_key_type: expected \"I32\" or \"I64\", got \"U64\"; did you mean \"I64\"?"},
      {[](auto& j) { j["solver"]["enable_tf32_compute"] = 1; },
       "solver.enable_tf32_compute: expected true or false, got 1"},
      {[](auto& j) { j["solver"]["batchsize_eval"] = 0; }, "solver.batchsize_eval: expected an integer >= 1, got 0"},
      {[](auto& j) { j["solver"]["sparse_model_file"] = {1}; },
       "solver.sparse_model_file[0]: expected a string, got 1"},
      {[](auto& j) { layer(j, "data")["check"] = "CRC"; },
       "layers[data].check: expected \"Sum\" or \"None\", got \"CRC\""},
      {[](auto& j) { layer(j, "data")["num_samples"] = -1; },
       "layers[data].num_samples: expected an integer >= 0, got -1"},
      {[](auto& j) { layer(j, "emb1")["plan_file"] = 3; },
       "layers[emb1].plan_file: expected a file name or a list of them, got 3"},
      {[](auto& j) { j["optimizer"]["learning_rate"] = "yes"; },
       "optimizer.learning_rate: expected true or false (HugeCTR's flag; the learning rate goes in the type's hparam "
       "block, e.g. sgd_hparam.learning_rate), got \"yes\""},
      {[](auto& j) { j["optimizer"]["sgd_hparam"]["atomic_update"] = "yes"; },
       "optimizer.sgd_hparam.atomic_update: expected true or false, got \"yes\""},
  };
  for (const auto& c : cases) {
    auto j = with_hugectr_keys();
    c.edit(j);
    EXPECT_EQ(error_of(j), "test.json: " + c.message);
  }
}

// HugeCTR's layout: a Norm data layer as HugeCTR's guide writes it (no "format": Norm is
// HugeCTR's default), the embedding, then a dense network and its loss.
nlohmann::json hugectr_norm_file() {
  auto j = default_json();
  auto& data = layer(j, "data");
  data.erase("format");
  data.erase("synthetic");
  data.update(nlohmann::json::parse(R"({"source": "./file_list.txt", "eval_source": "./file_list_test.txt",
                                        "check": "Sum"})"));
  j["solver"]["input_key_type"] = "I32";
  for (const char* text :
       {R"({"name": "reshape1", "type": "Reshape", "bottom": "emb1", "top": "reshape1", "leading_dim": 256})",
        R"({"name": "concat1", "type": "Concat", "bottom": ["reshape1", "dense"], "top": "concat1"})",
        R"({"name": "fc1", "type": "InnerProduct", "bottom": "concat1", "top": "fc1", "fc_param": {"num_output": 64}})",
        R"({"name": "relu1", "type": "ReLU", "bottom": "fc1", "top": "relu1"})",
        R"({"name": "loss", "type": "BinaryCrossEntropyLoss", "bottom": ["relu1", "label"], "top": "loss"})"})
    j["layers"].push_back(nlohmann::json::parse(text));
  return j;
}

TEST(ConfigHugeCtr, ANormFileWithDenseLayersParsesAndRecordsWhatIsNotRun) {
  Config c = parse_config(hugectr_norm_file(), "t");
  EXPECT_EQ(c.data.format, DataFormat::kNorm);
  EXPECT_EQ(c.data.source, "./file_list.txt");
  EXPECT_EQ(c.data.check_sum, true);
  EXPECT_EQ(c.solver.input_key_type, "I32");
  // Every dense layer's type is built: they are the model's, in file order, with their tensors.
  ASSERT_EQ(c.dense_layers.size(), 5u);
  EXPECT_EQ(c.dense_layers[1].type, "Concat");
  EXPECT_EQ(c.dense_layers[1].bottoms, (std::vector<std::string>{"reshape1", "dense"}));
  EXPECT_EQ(c.dense_layers[4].path, "layers[loss]");
  EXPECT_EQ(c.data.label_top, "label");
  EXPECT_EQ(c.data.dense_top, "dense");
  EXPECT_EQ(c.not_run, std::vector<std::string>{});  // eval_source is the evaluation's, which runs
  // A dense layer not built leaves the whole dense part out of a run, named.
  auto j = hugectr_norm_file();
  j["layers"].push_back(nlohmann::json::parse(
      R"({"name": "bn", "type": "BatchNorm", "bottom": "relu1", "top": "bn", "bn_param": {"factor": 1}})"));
  c = parse_config(j, "t");
  EXPECT_TRUE(c.dense_layers.empty());
  EXPECT_EQ(c.not_run,
            (std::vector<std::string>{"layers[bn] (\"BatchNorm\")", "layers[data].eval_source (evaluation)"}));
  // One message names them all, and says how to run the embedding part anyway.
  try {
    check_runs_whole(c, false, "hugectr.json");
    ADD_FAILURE() << "a config with dense layers ran whole";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "hugectr.json: embscale runs the embedding part of this config only; not run: layers[bn] "
              "(\"BatchNorm\"), layers[data].eval_source (evaluation). Pass --embedding-only to run the embedding "
              "layers and skip these (a HugeCTR file's dense network, evaluation and checkpoints)");
  }
  EXPECT_NO_THROW(check_runs_whole(c, true, "hugectr.json"));
  EXPECT_NO_THROW(check_runs_whole(default_config(), false, "default.json"));

  // The source resolves against the config file's directory; an absolute one stays.
  c.directory = "/data/configs";
  EXPECT_EQ(data_source_path(c), std::filesystem::path("/data/configs/./file_list.txt"));
  c.data.source = "/abs/list.txt";
  EXPECT_EQ(data_source_path(c), std::filesystem::path("/abs/list.txt"));
}

TEST(ConfigHugeCtr, ADenseLayerReadsOnlyTensorsNamedBeforeIt) {
  auto j = hugectr_norm_file();
  j["layers"][4]["bottom"] = "concat2";  // fc1's bottom: a typo
  EXPECT_EQ(error_of(j).rfind("test.json: layers[fc1].bottom: expected a tensor named before this layer (", 0), 0u)
      << error_of(j);
  EXPECT_NE(error_of(j).find("got \"concat2\"; did you mean \"concat1\"?"), std::string::npos) << error_of(j);
  j = hugectr_norm_file();
  j["layers"][3]["bottom"] = nlohmann::json::array({"reshape1", "relu1"});  // concat1 reads a later top
  EXPECT_NE(error_of(j).find("layers[concat1].bottom[1]: expected a tensor named before this layer"), std::string::npos)
      << error_of(j);
}

TEST(ConfigHugeCtr, EvaluationRunsWithTheDenseLayersAndIsNotRunWithout) {
  auto j = hugectr_norm_file();
  j["solver"].update(nlohmann::json::parse(
      R"({"eval_interval": 100, "eval_batches": 8, "batchsize_eval": 512, "eval_metrics": ["AUC:0.8025", "AverageLoss"]})"));
  Config c = parse_config(j, "t");
  const Evaluation& e = c.solver.evaluation;
  EXPECT_EQ(e.interval, 100);
  EXPECT_EQ(e.batches, 8);
  EXPECT_EQ(e.batchsize, 512);
  EXPECT_TRUE(e.auc);
  EXPECT_TRUE(e.average_loss);
  EXPECT_EQ(e.auc_threshold, 0.8025);
  EXPECT_EQ(c.not_run, std::vector<std::string>{});  // eval_source too: the evaluation runs
  EXPECT_EQ(c.data.eval_source, "./file_list_test.txt");
  // "AUC" alone: HugeCTR's threshold 1.0, never reached: no target.
  j["solver"]["eval_metrics"] = {"AUC"};
  EXPECT_EQ(parse_config(j, "t").solver.evaluation.auc_threshold, 0.0);
  // max_eval_batches, HugeCTR's later name, counts over eval_batches; one of them with eval_interval.
  j["solver"]["max_eval_batches"] = 3;
  EXPECT_EQ(parse_config(j, "t").solver.evaluation.batches, 3);
  j["solver"].erase("eval_batches");
  j["solver"].erase("max_eval_batches");
  EXPECT_NE(error_of(j).find("solver.eval_batches: required key is missing"), std::string::npos) << error_of(j);
  // Without dense layers nothing scores the evaluation: its keys are not run.
  auto embedding_only = default_json();
  embedding_only["solver"].update(nlohmann::json::parse(R"({"eval_interval": 100, "eval_batches": 8})"));
  c = parse_config(embedding_only, "t");
  EXPECT_FALSE(c.solver.evaluation.runs());
  EXPECT_EQ(c.not_run,
            (std::vector<std::string>{"solver.eval_interval (evaluation)", "solver.eval_batches (evaluation)"}));
}

TEST(ConfigHugeCtr, RawAndEmbscaleKeys) {
  auto j = default_json();
  layer(j, "data").update(nlohmann::json::parse(R"({"format": "Raw", "source": "train.bin", "num_samples": 1000,
                                                    "check": "None", "float_label_dense": true})"));
  layer(j, "data")["sparse"][0]["max_nnz"] = 1;  // below the synthetic block's nnz 4: that block is unused now
  const Config raw = parse_config(j, "t");
  EXPECT_EQ(raw.data.format, DataFormat::kRaw);
  EXPECT_EQ(raw.data.num_samples, 1000);
  EXPECT_TRUE(raw.data.float_label_dense);
  EXPECT_FALSE(raw.data.check_sum.has_value()) << "HugeCTR's Raw reader has no checksum mode";
  EXPECT_EQ(raw.data.max_nnz, 1);
  EXPECT_TRUE(raw.not_run.empty());

  layer(j, "data")["format"] = "Norm";  // HugeCTR ignores num_samples for Norm (the headers count)
  EXPECT_EQ(parse_config(j, "t").data.num_samples, 0);
  layer(j, "data")["format"] = "Embscale";
  EXPECT_EQ(parse_config(j, "t").data.format, DataFormat::kEmbscale);
  EXPECT_EQ(to_string(DataFormat::kEmbscale), "Embscale");
}

TEST(ConfigJsonReader, EditDistanceIgnoresCase) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("SGD", "sgd"), 0u);
}

TEST(ConfigJsonReader, SuggestsOnlyLikelyTypos) {
  EXPECT_EQ(nearest_name("max_iters", {"max_iter", "display"}), "max_iter");
  EXPECT_EQ(nearest_name("zzz", {"max_iter", "display"}), "");
  EXPECT_EQ(did_you_mean("dispaly", {"max_iter", "display"}), "; did you mean \"display\"?");
  EXPECT_EQ(did_you_mean("seed", {}), "");
}

TEST(ConfigJsonReader, DescribesRangesAndValues) {
  EXPECT_EQ(IntRange::at_least(1).describe(), "an integer >= 1");
  EXPECT_EQ(IntRange::between(1, 8).describe(), "an integer in [1, 8]");
  EXPECT_EQ(NumberRange::above(0.0).describe(), "a number > 0");
  EXPECT_EQ(NumberRange::between(0.5, 100).describe(), "a number in [0.5, 100]");
  EXPECT_EQ(NumberRange::from_up_to(0, 1).describe(), "a number in [0, 1)");
  EXPECT_EQ(quoted_list({"a", "b", "c"}), "\"a\", \"b\" or \"c\"");
  EXPECT_EQ(describe_json("abc"), "\"abc\"");
  const auto long_text = describe_json(std::string(200, 'x'));
  EXPECT_EQ(long_text.size(), 80u);
  EXPECT_EQ(long_text.substr(77), "...");
}

}  // namespace
}  // namespace embscale::config
