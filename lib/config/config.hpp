// The native configuration: a versioned JSON schema that keeps HugeCTR's names and meanings
// (solver, optimizer, layers, sparse_embedding_hparam, combiner as 0/1 or "sum"/"mean")
// and adds what HugeCTR lacks (a Synthetic data source, embscale's layer schemes).
//
// A HugeCTR file parses whole: the layers and keys embscale does not run (dense layers,
// evaluation, snapshots, model files) are recorded in Config::not_run, and `embscale run` refuses
// the config with one message naming them all unless asked to run the embedding part only
// (check_runs_whole).
//
// Parsing turns JSON into these typed structs and validates every field; errors are
// embscale::InputError whose message starts with the JSON path of the offending value, e.g.
//   layers[emb1].sparse_embedding_hparam.combiner: expected 0, 1, "sum" or "mean", got "max"
// (layers are addressed by name, not index). lib/config/README.md documents every field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/synthetic_source.hpp"
#include "kv/table_options.hpp"

namespace embscale::config {

inline constexpr int kSchemaVersion = 1;

enum class Combiner { kSum, kMean };
// HugeCTR's optimizer types, and FBGEMM's EXACT_ROWWISE_ADAGRAD (HugeCTR has no row-wise AdaGrad).
enum class OptimizerType { kSGD, kMomentumSGD, kNesterov, kAdam, kAdaGrad, kRowWiseAdaGrad };
// HugeCTR's update_type: which rows a step updates (embedding/sparse_optimizer.hpp explains each).
enum class UpdateType { kLocal, kGlobal, kLazyGlobal };

// Where an embedding layer's step runs: on the host's CPUs, or on a GPU (one GPU per rank; the
// engine draws the layer's ExecutionContext from it, lib/embedding).
enum class Device { kHost, kGpu };
std::string to_string(Device device);  // the config's names: "host", "gpu"

// How a GPU run's ranks exchange: NCCL on device buffers (one rank per GPU, its id bootstrapped over
// MPI), or MPI with the device buffers staged through host memory (ranks may then share a GPU).
enum class DeviceExchange { kNccl, kStagedMpi };
std::string to_string(DeviceExchange exchange);  // "nccl", "mpi"

// HugeCTR's evaluation (lib/run/evaluation.hpp): every `interval` timed iterations, `batches`
// batches of `batchsize` held-out samples run forward only (the tables read, not changed) and are
// scored over every rank's samples. It runs with the config's dense layers (their loss layer's
// logits are the scores); without them its keys are in Config::not_run.
struct Evaluation {
  std::int64_t interval = 0;   // eval_interval; 0 (absent): none
  std::int64_t batches = 0;    // eval_batches (HugeCTR 2.x) or max_eval_batches
  std::int64_t batchsize = 0;  // batchsize_eval; 0 (absent): solver.batchsize
  bool auc = true;             // eval_metrics holds "AUC" (absent: HugeCTR's default, AUC)
  bool average_loss = false;   // eval_metrics holds "AverageLoss"
  double auc_threshold = 0.0;  // "AUC:<t>": training ends at the evaluation whose AUC reaches t; 0: never
  bool runs() const noexcept { return interval > 0; }
};

// "incremental_dump": online training's export of fresh rows (dynamicemb's incremental_dump):
// after every `interval` timed iterations each rank writes, per dynamic layer, the entries whose
// score is at or above the last dump's next threshold into <directory>/iteration-<N>/
// (lib/run/online_dumps.hpp). Absent: none.
struct IncrementalDump {
  std::int64_t interval = 0;  // timed iterations between dumps; 0: none
  std::string directory;      // relative: to Config::directory
  // "blocking": the step waits for the files; "background": the step waits for the copy into
  // memory only, a thread of the rank writes the files while training goes on.
  bool background = false;
  bool runs() const noexcept { return interval > 0; }
};

// "checkpoint": a run's checkpoints (lib/run/checkpoint.hpp): every table's rows with their
// optimizer state and scores, the dense model and the step counts, from which a run resumed with
// resume_from (`embscale run --resume-from`) continues with exactly the losses it would have had.
struct Checkpoint {
  std::string
      directory;  // where each checkpoint gets iteration-<N>/; relative: to Config::directory; empty: none saved
  std::int64_t interval = 0;  // a checkpoint after every `interval` timed iterations; 0: none but on_stop's
  bool on_stop = true;        // one when a stop signal (SIGTERM, SIGUSR1) ends the run, before it exits 3
  std::int64_t keep = 0;      // the newest `keep` checkpoints are kept, older ones removed; 0: all
  // The checkpoint (or a directory of them: the newest complete one) this run starts from;
  // relative: to Config::directory (`run --resume-from` makes it absolute). Empty: from the start.
  std::string resume_from;
  bool saves() const noexcept { return !directory.empty(); }
  bool resumes() const noexcept { return !resume_from.empty(); }
};

struct Solver {
  std::int64_t batchsize = 0;  // global batch (samples per iteration over all ranks)
  // Weak scaling: when > 0 (the config gives batchsize_per_rank instead of batchsize), the global
  // batch is this times the ranks of the run, set by resolve_batch_for_ranks.
  std::int64_t batchsize_per_rank = 0;
  std::int64_t max_iter = 0;     // timed iterations
  std::int64_t warmup_iter = 0;  // untimed iterations before them (not in the report)
  std::int64_t display = 0;      // progress line every `display` iterations; 0 = none
  std::uint64_t seed = 0;        // seed of the workload and of the table initialisation
  // "non_finite_loss": "stop" (the default: a loss that is NaN or infinite on any rank ends the
  // run, exit 1, since every timing after it would be taken on non-finite rows) or "continue".
  bool stop_on_non_finite_loss = true;
  // HugeCTR's input_key_type: the width of a Norm trace's keys, "I32" or "I64". Empty (absent):
  // detected from the trace, I32 (HugeCTR's default) when both widths read it.
  std::string input_key_type;
  // "device": the device of every embedding layer that names none ("host" when absent).
  Device device = Device::kHost;
  // "communicator": how a GPU run exchanges (refused on a run whose layers are all on the host).
  DeviceExchange communicator = DeviceExchange::kNccl;
  // HugeCTR's "gpu": the GPUs of a node, one list per node in host order (a single list: the same
  // on every node). A GPU run's rank takes its node's list[local rank] (lib/run/device_check.hpp);
  // empty: GPU `local rank` (NCCL) or `local rank mod the host's GPUs` (staged MPI).
  std::vector<std::vector<std::int32_t>> gpus;
  Evaluation evaluation;
  IncrementalDump incremental_dump;
  Checkpoint checkpoint;
};

// One optimizer: the type, its update type and the hyper-parameters of its *_hparam block. A field
// that the type does not read keeps its default here (the parser refuses another type's block).
struct Optimizer {
  OptimizerType type = OptimizerType::kSGD;
  UpdateType update_type = UpdateType::kLocal;  // HugeCTR's default
  double learning_rate = 0.0;                   // <block>.learning_rate: every type has one, always required
  bool atomic_update = true;                    // sgd_hparam (HugeCTR's; no effect on the results here)
  double momentum_factor = 0.0;                 // momentum_sgd_hparam, nesterov_hparam
  double beta1 = 0.9;                           // adam_hparam
  double beta2 = 0.999;                         // adam_hparam
  double epsilon = 1e-7;                        // adam_hparam, adagrad_hparam (RowWiseAdaGrad: 1e-8, FBGEMM's)
  double initial_accu_value = 0.0;              // adagrad_hparam
  // SGD's learning-rate schedule (sgd_hparam; HugeCTR's LearningRateScheduler and its defaults):
  // a linear warm-up over warmup_steps, then the rate, then from decay_start (0: never) a
  // polynomial decay over decay_steps, at least end_lr (learning_rate_at).
  double warmup_steps = 1.0;
  double decay_start = 0.0;
  double decay_steps = 1.0;
  double decay_power = 2.0;
  double end_lr = 0.0;

  // The rate of the 1-based training step `step` (warm-up iterations included): learning_rate
  // scaled by the schedule.
  double learning_rate_at(std::int64_t step) const;
};

// Where a run's samples come from: generated (the `synthetic` block), or a recorded trace in
// HugeCTR's Norm or Raw format or embscale's own (workloads/trace/trace.hpp).
enum class DataFormat { kSynthetic, kNorm, kRaw, kEmbscale };
std::string to_string(DataFormat format);  // the config's names: "Synthetic", "Norm", "Raw", "Embscale"

struct DataLayer {
  std::string name;
  DataFormat format = DataFormat::kSynthetic;  // "format"; absent: "Norm", HugeCTR's default
  // The trace formats' HugeCTR keys. source: as written (Norm: a file list or one data file; Raw,
  // Embscale: the file); a relative path resolves against Config::directory (data_source_path).
  std::string source;
  std::optional<bool> check_sum;   // "check": "Sum" true, "None" false; a Norm file must match; unset: either
  std::int64_t num_samples = 0;    // Raw, Embscale: only the trace's first num_samples are read; 0: all
  bool float_label_dense = false;  // Raw: labels and dense features stored as floats
  // "trace_check": "samples" (default): before the first step one rank reads every sample the run
  // will read (workloads::check_run_samples), so a damaged record fails the run at start-up, once;
  // "headers": only the headers and sizes are checked up front (a very large trace, read once).
  bool check_samples_at_start = true;
  std::int64_t max_nnz = 0;  // sparse[0].max_nnz: the most keys of a trace's bag; 0: not given
  // HugeCTR's eval_source: a trace of the same format holding the evaluation samples (relative:
  // against Config::directory); empty: the synthetic source's held-out stream.
  std::string eval_source;
  // The vocabulary of each slot; keys unified-encoded. Empty for a Norm file that gives none (as
  // HugeCTR's hash embeddings allow): each key is then whatever the file holds, and the layers
  // over it run on dynamic storage (their default there: HugeCTR's hash table, capacity
  // max_vocabulary_size_per_gpu per rank) with the schemes that need no key ranges.
  std::vector<std::int64_t> slot_size_array;
  bool key_spaces_known() const noexcept { return !slot_size_array.empty(); }
  std::int32_t label_dim = 1;
  std::int32_t dense_dim = 0;
  std::string label_top;  // label.top ("" when the block is absent)
  std::string dense_top;  // dense.top ("" when the block is absent)
  // HugeCTR's sparse inputs: consecutive runs of the slots, each a tensor an embedding layer
  // names as its bottom (WDL's "wide" and "deep" inputs).
  struct SparseInput {
    std::string top;
    std::int32_t first_slot = 0;
    std::int32_t slot_num = 0;
  };
  std::vector<SparseInput> sparse_inputs;
  std::string sparse_top;     // sparse[0].top
  std::int32_t slot_num = 0;  // the slots of every sparse input == slot_size_array.size()
  SyntheticSource synthetic;  // the `synthetic` block: every slot's generator (unused by traces)
};

// Where a layer's rows live (the "storage" block). Static: every key of the layer's slots has a
// row from the start (an array). Dynamic: the KV table (lib/kv) with dynamicemb's options; a key
// is inserted on its first lookup and capacity limits evict by score.
struct EmbeddingStorage {
  bool dynamic = false;
  // Dynamic only: the per-rank table's options (dim, optimizer_state_width, num_embeddings and
  // seed are set by the engine). For both storages: `initializer` (initializer_args), `training`
  // and `eval_initializer` (evaluation mode: forward only, missing keys read it) and value_type
  // (embedding_dtype: rows stored in fp32, fp16 or bf16, arithmetic in fp32).
  kv::TableOptions table;
  // Dynamic only, the two-tier modes (dynamicemb's): with global_hbm_for_values > 0 only that
  // many bytes of rows live in the fast tier; caching: a fast table in front of a slow one holding
  // the whole table, else hybrid: the rest of the keys (by hash) in the slow tier. The slow tier's
  // rows are in a file of slow_directory (empty: the system's temporary directory).
  bool caching = false;
  std::int64_t global_hbm_for_values = 0;
  std::string slow_directory;
  // A fast tier in front of a slow one (embedding/tiered_row_store.hpp), caching or hybrid.
  bool two_tier() const noexcept { return dynamic && (caching || global_hbm_for_values != 0); }
  // Dynamic only: the engine's drivers of the strategies whose score clock is the caller's
  // (EmbeddingEngine::step, before each step's calls). "epoch_steps" (EPOCH_LRU, EPOCH_LFU): the
  // table's epoch is (step - 1) / epoch_steps for the 1-based step, warm-up included; 0 (absent):
  // epoch 0 throughout. "custom_score" (CUSTOMIZED): "step" (the default) scores every key a step
  // touches with the step's number, so that the table keeps the most recently used keys as STEP
  // does but one score per step rather than per call; "none" leaves the set_score value at 0
  // (every key ties, the smaller key evicted first).
  std::int64_t epoch_steps = 0;
  bool custom_score_step = true;
};

struct EmbeddingLayer {
  std::string name;
  std::string type;  // HugeCTR's or SOK's layer type, or "ShardedEmbedding"
  // ShardedEmbedding only: the sharding scheme by name (TorchRec's: "table_wise", "row_wise",
  // ...; lib/embedding's scheme registry decides which names run). Empty for the other types,
  // whose type names their scheme.
  // "auto" or "auto_skew_blind" (kAutoShardings) asks lib/plan to choose the schemes and placement
  // of the layer's tables before the run; `run` then runs the planned layers.
  std::string sharding;
  // table_wise only: the rank that owns each of the layer's slots, in the order of `slots` (what
  // the planner writes); empty: placed largest first onto the least loaded rank.
  std::vector<std::int32_t> table_ranks;
  std::string bottom;  // a DataLayer's sparse_top
  std::string top;
  std::int64_t max_vocabulary_size_per_gpu = 0;
  // sparse_embedding_hparam.slot_size_array (HugeCTR's localized and one-hot embeddings): the
  // vocabulary of each of the layer's slots; equal to the Data layer's where both are given, the
  // key spaces of a Norm Data layer that gives none. Empty when absent.
  std::vector<std::int64_t> slot_size_array;
  std::int32_t embedding_vec_size = 0;
  Combiner combiner = Combiner::kSum;
  Optimizer optimizer;  // the layer's own, else the global one
  // The Data layer's slots this layer reads, ascending (default: all). Slots of one layer share
  // its dim and are fused into one table over their unified keys (SOK).
  std::vector<std::int32_t> slots;
  bool deduplicate = true;  // send each distinct key once per batch (switchable to measure it)
  // table_row_wise: ranks per "node" (0: the hosts of the run, Communicator::split_by_host).
  std::int32_t ranks_per_node = 0;
  // hot_replicated: the hot rows of each of the layer's slots (the first rows of its key space,
  // replicated on every rank), one per slot; "hot_rows": N in the file gives every slot N. Empty
  // on the other schemes.
  std::vector<std::int64_t> hot_rows;
  // table_row_wise: the node of each of the layer's tables (slots), in slot order (what the
  // planner writes); empty: placed largest first onto the least loaded node.
  std::vector<std::int32_t> table_nodes;
  EmbeddingStorage storage;
  // "device": where the layer's step runs (the solver's "device" when absent). One run's layers
  // run on one device (checked).
  Device device = Device::kHost;
};

// The optional "eviction" section (lib/sim): measure how well each dynamic table's
// bucketed score eviction keeps what matters, against exact oracles fed the same access stream.
// The oracles run outside the timed region; a config without the section builds none of it.
struct EvictionStudy {
  // The layers measured, by name, in config order: the section's "layers", else every layer with
  // dynamic storage. Each has dynamic storage and is not in hybrid mode (checked).
  std::vector<std::string> layers;
  // The oracles, a subset of kEvictionOracles in that order: "lru", "lfu", "score_retention",
  // "unbucketed", "belady" (default: all).
  std::vector<std::string> oracles;
  // Iterations between recall measurements (>= 1). The oracles are fed in bulk at these samples,
  // so only the step after one runs with caches the oracles filled.
  std::int64_t sample_every = 50;
  double hot_key_share = 0.01;  // hot-key recall: the share of the keys seen, by frequency
  // Belady's optimum is offline: it keeps the whole access stream (8 bytes an access, per rank).
  std::int64_t belady_max_accesses = 100'000'000;
};
inline const std::vector<std::string> kEvictionOracles = {"lru", "lfu", "score_retention", "unbucketed", "belady"};

// The "sharding" values that ask the planner (lib/plan) for a layer's plan: skew-aware (the loads
// of the slots' generators) or skew-blind (TorchRec's planner: a table's size and pooling factor).
inline constexpr const char* kAutoSharding = "auto";
inline constexpr const char* kAutoSkewBlindSharding = "auto_skew_blind";
bool is_auto_sharding(const std::string& sharding);

// The optional "planner" section (lib/plan/README.md): what the planner of "auto" layers
// assumes. A cost left unset takes lib/plan's default, measured on the development machine.
struct PlannerSettings {
  // Bytes of rows, optimizer state and tables one rank may hold; 0: this host's memory divided
  // among the ranks on it, less TorchRec's 15 % reserve.
  std::int64_t memory_per_rank = 0;
  std::optional<double> seconds_per_key;         // a key routed, de-duplicated or pooled
  std::optional<double> seconds_per_row;         // a distinct row looked up or updated
  std::optional<double> seconds_per_byte;        // a byte read or written in memory
  std::optional<double> seconds_per_comm_byte;   // a byte sent or received
  std::optional<double> seconds_per_collective;  // a collective call's fixed cost
  std::optional<double> seconds_per_slow_byte;   // a byte moved to or from a two-tier table's slow tier
  std::vector<std::string> schemes;  // the schemes it chooses among (lib/plan checks them); empty: all it models
  bool all_layers = false;           // plan every embedding layer, as if each said "auto"
  // Capacity planning (`embscale plan` without --ranks, lib/plan/capacity_search.hpp): the targets
  // the fewest ranks must meet, and how far it looks.
  std::optional<double> target_step_seconds;  // the predicted step at most this; none: no step target
  double memory_headroom = 0.0;               // the share of memory_per_rank a plan leaves free
  // The least fast-tier hit rate a two-tier dynamic layer may have on any rank (lib/plan/tier_model.hpp);
  // none: no hit-rate target.
  std::optional<double> target_hit_rate;
  std::int64_t max_ranks = 65536;  // the largest rank count it tries
  // A hardware description (config/hardware.hpp) the plan is for, as written (relative: to the
  // config's directory); empty: none (memory and costs from the fields above and their defaults).
  std::string hardware;
};

// A dense layer of the model (HugeCTR's InnerProduct, ReLU, Concat, Interaction,
// BinaryCrossEntropyLoss, ...), as the config gives it: its tensors by name, and its object,
// whose parameters lib/model's layer of that type reads (lib/model/layers/). Only the types
// lib/model builds (hugectr::built_dense_layer_types) are kept here; the others are in
// Config::not_run.
struct DenseLayerNode {
  std::string name;
  std::string type;
  std::vector<std::string> bottoms;  // "bottom": one name or a list, each a tensor named before it
  std::vector<std::string> tops;     // "top": one name or a list
  nlohmann::json json;               // the layer's object as given
  std::string path;                  // "layers[fc1]", for messages
};

// The "sharding" of a layer whose table lives on parameter servers (lib/ps), and the
// optional "parameter_server" section that says how the run's ranks split (lib/config/README.md).
inline constexpr const char* kParameterServerSharding = "parameter_server";
struct ParameterServerSettings {
  std::int32_t servers = 1;   // server ranks: the last ranks of the run
  std::int32_t trainers = 0;  // trainer ranks, the first ones; 0 (absent): every rank that is not a server
  // "mode": "synchronous" (each step's pushes applied, summed over the trainers, before any pull
  // of the next) or "asynchronous" (each push applied on arrival; a trainer may run `staleness`
  // steps ahead of the slowest).
  bool synchronous = true;
  std::int64_t staleness = 0;
  // "transport": the protocol's point-to-point messages over "mpi" (MPI's own, its PML and BTLs)
  // or "ucx" (UCX's UCP tag API, comm::UcxMessageChannel).
  bool ucx_transport = false;
  // "pulls": "messages" (a trainer asks, the server reads its shard and answers) or "one_sided"
  // (static storage only: the trainers read the servers' rows and dense slices from memory the
  // transport exposes, without the server's CPU; lib/ps/one_sided_pulls.hpp).
  bool one_sided_pulls = false;
  // Server-side save and load (Paddle's distributed lookup table): each server writes its shard
  // into save_directory after the run, and reads its part of load_directory's shards (saved by any
  // number of servers) before it. Relative paths resolve against Config::directory; empty: none.
  std::string save_directory;
  std::string load_directory;

  // The trainers of a run on `ranks` ranks.
  std::int32_t trainers_for(int ranks) const noexcept;
};

struct Config {
  int schema_version = kSchemaVersion;
  Solver solver;
  Optimizer optimizer;
  DataLayer data;
  std::vector<EmbeddingLayer> embeddings;  // at least one
  // The dense part of the model, in file order, when every dense layer's type is built (else
  // empty, and the layers are in not_run). Empty: each embedding layer's output meets the
  // stand-in regression objective (lib/embedding/regression_objective.hpp).
  std::vector<DenseLayerNode> dense_layers;
  std::string origin;                      // names the config in messages (parse_config's `origin`)
  std::optional<EvictionStudy> eviction;   // the "eviction" section, when given
  std::optional<PlannerSettings> planner;  // the "planner" section, when given
  // The "parameter_server" section, when given (required when a layer's sharding is
  // "parameter_server"; read only then, so one config can sweep that layer over every scheme).
  std::optional<ParameterServerSettings> parameter_server;
  nlohmann::json source;  // the JSON as given (recorded in the report)
  // What the config asks for that embscale does not run: the layers in file order ("layers[fc1]
  // (\"InnerProduct\")"), then the solver's and the Data layer's keys ("solver.eval_interval
  // (evaluation)"). Empty for embscale's own configs.
  std::vector<std::string> not_run;
  // HugeCTR keys accepted that change nothing embscale measures, with why ("solver.gpu (the GPUs
  // a node uses: ...)"): run and validate print them, so that none is dropped without a word.
  std::vector<std::string> not_used;
  // The directory relative paths in the config resolve against: the config file's (empty: the
  // working directory). Set by whoever read the file (load_config_file, run, sweep, trace), since
  // parsing sees only text.
  std::filesystem::path directory;
};

// Whether any embedding layer runs on a GPU (then all do: parse_config checks it).
bool runs_on_gpu(const Config& config);

// Parses and validates. `origin` names the input in messages (a file path or "<embedded default>").
Config parse_config(const nlohmann::json& json, const std::string& origin);
// Reads text: invalid JSON is an InputError "<origin>:<line>:<column>: ...".
Config parse_config_text(const std::string& text, const std::string& origin);
// Reads a file: a missing or unreadable file is an InputError naming it.
Config load_config_file(const std::filesystem::path& path);
// The file's text, unparsed (an MPI program reads it on one rank and broadcasts it, so every
// rank parses the same bytes); the same InputErrors as load_config_file.
std::string read_config_text(const std::filesystem::path& path);
// The built-in default run (bench/configs/default.json, embedded at build time).
Config default_config();
const std::string& default_config_text();

// Whether a layer's table lives on parameter servers (its sharding is kParameterServerSharding):
// then the run's ranks split into trainers and servers.
bool runs_on_parameter_servers(const Config& config);
// The ranks a run on `ranks` ranks splits its global batch over: the trainers in a
// parameter-server run, else every rank.
int batch_ranks(const Config& config, int ranks);

// Sets solver.batchsize for a run on `ranks` ranks: batchsize_per_rank x batch_ranks(ranks) when
// the config gives a per-rank batch (weak scaling), else unchanged (strong scaling). An InputError
// when the product overflows.
void resolve_batch_for_ranks(Config& config, int ranks);

// Sum of slot_size_array: the number of distinct keys of the unified encoding.
std::int64_t total_vocabulary(const DataLayer& data);

// The directory a config file's relative paths resolve against (its parent directory).
std::filesystem::path config_directory(const std::filesystem::path& config_file);
// The Data layer's source, resolved against config.directory when relative.
std::filesystem::path data_source_path(const Config& config);

// Throws an InputError "<origin>: embscale runs the embedding part of this config only; not run:
// <every entry of not_run>; ..." naming --embedding-only, when not_run is not empty and
// `embedding_only` is false. `origin` names the config (its path).
void check_runs_whole(const Config& config, bool embedding_only, const std::string& origin);
// What `--embedding-only` runs: the config without its dense layers and their evaluation (each
// embedding layer's output then meets the stand-in regression objective), both named first in
// not_run (the run's note lists what it skipped).
void keep_embedding_part(Config& config);
// "layers[fc1] (\"InnerProduct\"), solver.eval_interval (evaluation)": not_run in one line.
std::string describe_not_run(const Config& config);
// Config::not_used in one line, "; "-separated (each entry's reason may hold commas).
std::string describe_not_used(const Config& config);

std::string to_string(Combiner c);
std::string to_string(OptimizerType t);  // the config's name: "SGD", "Adam", "RowWiseAdaGrad", ...
std::string to_string(UpdateType t);     // "Local", "Global", "LazyGlobal"

}  // namespace embscale::config
