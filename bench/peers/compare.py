"""embscale against FBGEMM's CPU TBE and torch's nn.EmbeddingBag on the same batches: runs
embscale_peers_bench and peers.py (each configuration its own process), in rounds that alternate the
implementations (the machine may be shared: a burst of load then hits every implementation alike),
and prints one table of per-batch times and ratios. bench/peers/run calls it with the venv's python.

  compare.py --binary BUILD/bench/peers/embscale_peers_bench --config bench/peers/peers.json
             [--threads 1,2] [--distributions uniform,zipf] [--modes forward,sgd,rowwise_adagrad]
             [--rounds 3] [--batches 8] [--repetitions 10] [--json FILE] [--baseline OTHER_BINARY]
             [--set FIELD=VALUE ...] [--device gpu]

A cell's time is the median over every timed pass of every round (a pass's time: its mean per
batch), with the lowest and highest pass beside it; a ratio is embscale's median over the peer's,
with the range of the per-round ratios (each round's medians) beside it. --baseline runs another
build's embscale_peers_bench (an earlier commit's engine) at one thread in the same rounds, and a
second table compares the two embscale builds. --device gpu: embscale's GPU step beside torch's
nn.EmbeddingBag on the same GPU (one thread, no FBGEMM: its package here is the CPU build), each
pass's time the device's (scripts/gpu-check --cli runs it on the GPU machine with its python3).
"""
import argparse
import json
import os
import platform
import statistics
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# The key distributions, as settings of peers.json (embscale's generator makes both).
DISTRIBUTIONS = {
    "uniform": ["layers.data.synthetic.key_distribution=uniform"],
    "zipf": ["layers.data.synthetic.key_distribution=zipf", "layers.data.synthetic.zipf_alpha=1.05"],
}
IMPLS = ["embscale", "fbgemm", "torch"]


def run_json(command, env):
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def applies(impl, mode):
    return not (impl == "torch" and mode == "rowwise_adagrad")  # torch has no row-wise AdaGrad


def versions(binary, gpu):
    import torch
    fbgemm = "not used" if gpu else __import__("fbgemm_gpu").__version__
    commit = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty", "--abbrev=12"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    flags = open("/proc/cpuinfo").read()
    model = next((line.split(":", 1)[1].strip() for line in flags.splitlines() if line.startswith("model name")), "?")
    isa = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "SSE"
    return {"embscale": commit, "torch": torch.__version__, "fbgemm_gpu": fbgemm,
            "python": platform.python_version(), "cpu": model, "isa": isa,
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "gpu": torch.cuda.get_device_name() if gpu else "not used"}


def cell(runs):
    """'median [min-max]' in ms over every pass of every round."""
    passes = [p for r in runs for p in r]
    return statistics.median(passes), f"{1e3 * statistics.median(passes):7.1f} [{1e3 * min(passes):.1f}-{1e3 * max(passes):.1f}]"


def ratio(ours, theirs):
    """Ratio of the medians, and the range of the per-round ratios."""
    if not ours or not theirs:
        return "n/a"
    overall = cell(ours)[0] / cell(theirs)[0]
    rounds = [statistics.median(a) / statistics.median(b) for a, b in zip(ours, theirs)]
    return f"{overall:5.2f} [{min(rounds):.2f}-{max(rounds):.2f}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--config", default=os.path.join(HERE, "peers.json"))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--distributions", default="uniform,zipf")
    parser.add_argument("--modes", default="forward,sgd,rowwise_adagrad")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--repetitions", type=int, default=10)
    parser.add_argument("--json", help="write every pass's time and the versions here")
    parser.add_argument("--baseline", help="another build's embscale_peers_bench, timed at 1 thread beside")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="a setting of the config for every run (embscale run --set)")
    parser.add_argument("--device", choices=["host", "gpu"], default="host",
                        help="gpu: embscale's GPU step and torch on the GPU (no FBGEMM)")
    args = parser.parse_args()
    gpu = args.device == "gpu"
    if gpu:
        args.threads = "1"
    impls_here = ["embscale", "torch"] if gpu else IMPLS
    threads = [int(t) for t in args.threads.split(",")]
    modes = args.modes.split(",")
    dists = args.distributions.split(",")
    for d in dists:
        if d not in DISTRIBUTIONS:
            parser.error(f"--distributions: unknown {d!r} (expected {', '.join(DISTRIBUTIONS)})")

    info = versions(args.binary, gpu)
    keys_per_bag = float("nan")  # from embscale's report of its batches
    times = {}  # (dist, threads, mode, impl) -> [passes of round 0, of round 1, ...]
    with tempfile.TemporaryDirectory() as scratch:
        for dist in dists:
            settings = [a for s in DISTRIBUTIONS[dist] + args.set for a in ("--set", s)]
            common = ["--config", args.config, "--batches", str(args.batches)] + settings
            batches = os.path.join(scratch, f"{dist}.bin")
            subprocess.run([args.binary, "--write-batches", batches] + common, check=True)
            with open(batches, "rb") as f:
                shape = struct.unpack("<8x5q", f.read(48))[1:]  # B, T, E, D after the magic and the count
            for n in threads:
                env = dict(os.environ, OMP_NUM_THREADS=str(n), MKL_NUM_THREADS=str(n))
                for r in range(args.rounds):
                    for mode in modes:
                        # Rotated per round, so that no implementation always runs first.
                        impls = impls_here + (["baseline"] if args.baseline and n == 1 else [])
                        for impl in impls[r % len(impls):] + impls[:r % len(impls)]:
                            if not applies(impl, mode):
                                continue
                            if impl in ("embscale", "baseline"):
                                binary = args.binary if impl == "embscale" else args.baseline
                                cmd = [binary, "--mode", mode, "--repetitions", str(args.repetitions),
                                       "--device", args.device] + common
                            else:
                                cmd = [sys.executable, os.path.join(HERE, "peers.py"), batches, "--impl", impl,
                                       "--mode", mode, "--threads", str(n), "--repetitions", str(args.repetitions),
                                       "--device", "cuda" if gpu else "cpu"]
                            out = run_json(cmd, env)
                            if out["threads"] != n and impl != "baseline":
                                raise RuntimeError(f"{impl} ran on {out['threads']} threads, asked for {n}")
                            times.setdefault((dist, n, mode, impl), []).append(out["per_batch_s"])
                            if "keys_per_batch" in out:
                                keys_per_bag = out["keys_per_batch"] / (shape[0] * shape[1])
                            print(f"  {dist} threads={n} {mode} {impl} round {r + 1}: "
                                  f"{1e3 * statistics.median(out['per_batch_s']):.1f} ms/batch", file=sys.stderr)

    print(f"embscale {info['embscale']}, torch {info['torch']}, fbgemm_gpu {info['fbgemm_gpu']}, "
          f"python {info['python']}; {info['cpu']}, {info['isa']} (torch: {info['torch_cpu_capability']})"
          f"{'; GPU ' + info['gpu'] if gpu else ''}")
    print(f"B={shape[0]} T={shape[1]} E={shape[2]} D={shape[3]} L={keys_per_bag:g} fp32 ({os.path.relpath(args.config)}"
          f"{' ' + ' '.join(args.set) if args.set else ''}); {args.batches} batches, "
          f"{args.rounds} rounds x {args.repetitions} passes; ms per batch: median [min-max]; "
          f"ratio embscale/peer: of medians [range over rounds]")
    header = f"{'keys':8} {'thr':>3} {'mode':16} {'embscale':>22} {'FBGEMM':>22} {'torch':>22} {'emb/FBGEMM':>18} {'emb/torch':>18}"
    print(header)
    print("-" * len(header))
    for dist in dists:
        for n in threads:
            for mode in modes:
                row = {impl: times.get((dist, n, mode, impl), []) for impl in IMPLS}
                text = {impl: cell(row[impl])[1] if row[impl] else "n/a" for impl in IMPLS}
                print(f"{dist:8} {n:>3} {mode:16} {text['embscale']:>22} {text['fbgemm']:>22} {text['torch']:>22} "
                      f"{ratio(row['embscale'], row['fbgemm']):>18} {ratio(row['embscale'], row['torch']):>18}")
    if args.baseline:
        print(f"\nembscale before (--baseline {args.baseline}) and after, 1 thread, ms per batch:")
        print(f"{'keys':8} {'mode':16} {'before':>22} {'after':>22} {'after/before':>18} {'before/FBGEMM':>18}")
        for dist in dists:
            for mode in modes:
                before, after = times.get((dist, 1, mode, "baseline"), []), times.get((dist, 1, mode, "embscale"), [])
                if before and after:
                    print(f"{dist:8} {mode:16} {cell(before)[1]:>22} {cell(after)[1]:>22} {ratio(after, before):>18} "
                          f"{ratio(before, times.get((dist, 1, mode, 'fbgemm'), [])):>18}")
    if "rowwise_adagrad" in modes:
        print("torch has no row-wise AdaGrad (torch.optim.Adagrad is element-wise): n/a")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"versions": info, "args": vars(args),
                       "times": [{"distribution": k[0], "threads": k[1], "mode": k[2], "impl": k[3], "passes": v}
                                 for k, v in times.items()]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
