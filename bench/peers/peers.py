"""FBGEMM's CPU table-batched embedding and torch's nn.EmbeddingBag timed on the batches embscale
wrote (embscale_peers_bench --write-batches; layout in peer_batches.hpp). Runs in the venv of
scripts/peers-venv; bench/peers/run drives it.

  peers.py BATCHES --impl fbgemm|torch --mode forward|sgd|rowwise_adagrad --threads N [--repetitions R]
           [--device cpu|cuda]

fbgemm: one SplitTableBatchedEmbeddingBagsCodegen over the T tables (E x D each, fp32,
EmbeddingLocation.HOST, ComputeDevice.CPU, PoolingMode.SUM), one call per batch; the optimizer is
fused into backward: EXACT_SGD, or EXACT_ROWWISE_ADAGRAD with lr 0.1 and eps 0.1 (FBGEMM's benchmark).
torch: one nn.EmbeddingBag(T*E, D, mode="sum", sparse=True), the T tables concatenated (index
t*E + i), the bags in FBGEMM's table-major order; sgd is torch.optim.SGD(lr 0.1) on the sparse
gradient. torch has no row-wise AdaGrad: rowwise_adagrad is refused for it (exit 2).
forward runs under torch.no_grad(); sgd and rowwise_adagrad time forward, backward with a fixed
random gradient of the output, and the update (FBGEMM's: inside backward; torch: optimizer.step()).
One untimed pass over the batches, then R timed passes; prints one JSON object: per pass the mean
seconds per batch. Check: before timing, the first batch's outputs of 256 bags equal the sums of
their rows (exit 1 otherwise). --device cuda: torch on the GPU (the table, the batches and the
gradient there before timing; a pass ends with torch.cuda.synchronize(), so it is the device's
time); FBGEMM here is its CPU build and is refused there. Exit codes: 0 ok, 1 failure, 2 bad input.
"""
import argparse
import json
import os
import sys
import time

MAGIC = b"EMBPEER1"
CHECKED_BAGS = 256


def read_batches(path, np):
    """[(indices, offsets)] as int64 arrays, and (B, T, E, D)."""
    with open(path, "rb") as f:
        if f.read(8) != MAGIC:
            raise ValueError(f"{path}: not a peer batch file (expected magic {MAGIC!r})")
        count, B, T, E, D = np.fromfile(f, dtype=np.int64, count=5)
        batches = []
        for i in range(count):
            (n,) = np.fromfile(f, dtype=np.int64, count=1)
            offsets = np.fromfile(f, dtype=np.int64, count=T * B + 1)
            indices = np.fromfile(f, dtype=np.int64, count=n)
            if len(indices) != n or offsets[-1] != n:
                raise ValueError(f"{path}: batch {i} is truncated or inconsistent")
            batches.append((indices, offsets))
    return batches, (int(B), int(T), int(E), int(D))


class Fbgemm:
    """One SplitTableBatchedEmbeddingBagsCodegen over the T tables; the update is fused into backward."""

    def __init__(self, shape, mode, torch):
        import fbgemm_gpu  # noqa: F401  (registers the ops)
        from fbgemm_gpu.split_embedding_configs import EmbOptimType
        from fbgemm_gpu.split_table_batched_embeddings_ops_common import EmbeddingLocation, PoolingMode
        from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
            ComputeDevice, SplitTableBatchedEmbeddingBagsCodegen)
        self.B, T, E, self.D = shape
        optimizer = EmbOptimType.EXACT_ROWWISE_ADAGRAD if mode == "rowwise_adagrad" else EmbOptimType.EXACT_SGD
        self.tbe = SplitTableBatchedEmbeddingBagsCodegen(
            [(E, self.D, EmbeddingLocation.HOST, ComputeDevice.CPU)] * T, optimizer=optimizer,
            learning_rate=0.1, eps=0.1, pooling_mode=PoolingMode.SUM)
        self.weights = self.tbe.split_embedding_weights()
        with torch.no_grad():
            for w in self.weights:
                w.uniform_(-0.01, 0.01)

    def prepare(self, indices, offsets):
        return indices, offsets

    def forward(self, indices, offsets):
        return self.tbe(indices, offsets)  # [B, T*D]

    def update(self):
        pass

    def check_bag(self, out, indices, offsets, bag):
        """|output - sum of rows| of bag t*B + b (table t, sample b)."""
        t, b = divmod(bag, self.B)
        want = self.weights[t][indices[offsets[bag]:offsets[bag + 1]]].sum(0)
        return float((out[b, t * self.D:(t + 1) * self.D] - want).abs().max())


class Torch:
    """One nn.EmbeddingBag over the T tables concatenated: table t's index i is row t*E + i."""

    def __init__(self, shape, mode, torch, device="cpu"):
        self.torch = torch
        self.B, self.T, self.E, _ = shape
        self.bag = torch.nn.EmbeddingBag(self.T * self.E, shape[3], mode="sum", sparse=True, include_last_offset=True,
                                         device=device)
        self.optimizer = torch.optim.SGD(self.bag.parameters(), lr=0.1) if mode == "sgd" else None

    def prepare(self, indices, offsets):
        """The concatenated table's indices, made once per batch before any timing."""
        counts = offsets[1:] - offsets[:-1]
        table = self.torch.arange(self.T, dtype=self.torch.int64).repeat_interleave(self.B).repeat_interleave(counts)
        device = self.bag.weight.device
        return (indices + table * self.E).to(device), offsets.to(device)

    def forward(self, indices, offsets):
        return self.bag(indices, offsets)  # [T*B, D]

    def update(self):
        if self.optimizer:
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)

    def check_bag(self, out, indices, offsets, bag):
        want = self.bag.weight[indices[offsets[bag]:offsets[bag + 1]]].sum(0)
        return float((out[bag] - want).abs().max())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("batches")
    parser.add_argument("--impl", choices=["fbgemm", "torch"], required=True)
    parser.add_argument("--mode", choices=["forward", "sgd", "rowwise_adagrad"], required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    args = parser.parse_args()
    if args.impl == "fbgemm" and args.device == "cuda":
        print("peers.py: FBGEMM here is its CPU build (fbgemm-gpu-cpu): --device cuda is torch's only", file=sys.stderr)
        return 2
    if args.impl == "torch" and args.mode == "rowwise_adagrad":
        print("peers.py: torch has no row-wise AdaGrad (torch.optim.Adagrad is element-wise)", file=sys.stderr)
        return 2
    # Before torch's first op: its OpenMP pool takes its size from these.
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import torch
    torch.set_num_threads(args.threads)
    torch.manual_seed(20261125)

    raw, shape = read_batches(args.batches, np)
    B, T, _, _ = shape
    if args.device == "cuda" and not torch.cuda.is_available():
        print("peers.py: --device cuda: torch finds no GPU", file=sys.stderr)
        return 2
    impl = Fbgemm(shape, args.mode, torch) if args.impl == "fbgemm" else Torch(shape, args.mode, torch, args.device)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    batches = [impl.prepare(torch.from_numpy(i), torch.from_numpy(o)) for i, o in raw]

    with torch.no_grad():  # the check: a sample of bags against the sums of their rows
        out = impl.forward(*batches[0])
        worst = max(impl.check_bag(out, *batches[0], bag) for bag in range(0, T * B, max(1, T * B // CHECKED_BAGS)))
    if worst > 1e-4:
        print(f"peers.py: check failed: {args.impl} output differs from its rows' sums by {worst}", file=sys.stderr)
        return 1

    if args.mode == "forward":
        def step(idx, off):
            with torch.no_grad():
                impl.forward(idx, off)
    else:
        grad = torch.rand(out.shape, device=out.device)  # fixed: the values do not change the work

        def step(idx, off):
            impl.forward(idx, off).backward(grad)
            impl.update()

    for idx, off in batches:  # untimed pass
        step(idx, off)
    sync()
    per_batch = []
    for _ in range(args.repetitions):
        start = time.perf_counter()
        for idx, off in batches:
            step(idx, off)
        sync()
        per_batch.append((time.perf_counter() - start) / len(batches))
    print(json.dumps({"impl": args.impl, "mode": args.mode, "device": args.device,
                      "gpu": torch.cuda.get_device_name() if args.device == "cuda" else None,
                      "threads": torch.get_num_threads(),
                      "batches": len(batches), "per_batch_s": per_batch,
                      "torch": torch.__version__,
                      "fbgemm_gpu": __import__("fbgemm_gpu").__version__ if args.impl == "fbgemm" else None,
                      "cpu_capability": torch.backends.cpu.get_cpu_capability()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
