"""Aggregate throughput of a grid of training runs on one device: N runs with `--jobs N` vs one run alone.

Run: python bench/grid_throughput.py [--device cuda] [--jobs 1 4 8 16] [--n-train 20000] [--epochs 8]
                                     [--dataset mnist] [--cuda-graph] [--threads 1]
Each N trains N runs of the Sokolić et al. 2017 Table II protocol (the paper CNN, one-hot R_F with factor 1, SGD,
batch 128, `--epochs` epochs at lr 0.01, `--n-train` images; seeds 0..N-1) with `run_grid(..., jobs=N)` into a fresh
temporary cache, and times the whole call: worker start-up (process spawn, imports, CUDA context), data loading,
training and evaluation included, as a user of `jacmargin run --jobs N` waits for it. Throughput is runs per
minute; the speed-up is the throughput at N over the throughput at N = 1 (ideal: N). `--cuda-graph` trains every
run with `Learner(cuda_graph=True)` (`jacmargin run --cuda_graph`). `--threads` sets the intra-op threads of each
worker (`run_grid(threads=)`). On a CPU, use small numbers (e.g. `--device cpu --jobs 1 2 --n-train 1000
--epochs 1`) to check the script; the goal figures are for a GPU (issue 22: ≥ 6× at N = 8, ≥ 9× at N = 16).
"""
import argparse, os, platform, tempfile, time
from dataclasses import replace
from functools import partial
import torch
from jacmargin.runs import Run, run, reg_spec
from jacmargin.experiment import run_grid

def configs(n:int, n_train:int, epochs:int, dataset:str) -> list:
    "`n` Table II runs (one-hot R_F, factor 1) differing by seed."
    base = Run(dataset=dataset, model='paper_cnn', model_kw=(('padding', 'valid'),), n_val=10000, n_train=n_train,
               lr_pairs=((0.01, epochs),), batch_size=128, regs=(reg_spec('jr', 1., method='one_hot'),))
    return [replace(base, seed=s) for s in range(n)]

def device_name(device:str) -> str:
    d = torch.device(device)
    return torch.cuda.get_device_name(d) if d.type == 'cuda' else (platform.processor() or platform.machine())

def main(device='cuda', jobs=(1, 4, 8, 16), n_train=20000, epochs=8, dataset='mnist', cuda_graph=False, threads=None):
    if cuda_graph: os.environ['JACMARGIN_CUDA_GRAPH'] = '1'             # read by `run` in every worker
    print(f"machine: {device_name(device)}, {os.cpu_count()} CPU cores, torch {torch.__version__}, device {device}, "
          f"{n_train} {dataset} images, {epochs} epochs, one-hot R_F, cuda_graph={cuda_graph}, threads={threads}")
    print(f"{'jobs':>5} {'runs':>5} {'wall s':>9} {'s per run':>10} {'runs/min':>9} {'speed-up':>9}")
    base = None
    for n in jobs:
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            recs = run_grid(partial(run, device=device), configs(n, n_train, epochs, dataset), d, jobs=n,
                            threads=threads, progress=False)
            wall = time.perf_counter() - t
        assert len(recs) == n and all('acc' in r['result'] for r in recs), recs
        rate = n / wall * 60
        base = base or rate
        print(f"{n:5d} {n:5d} {wall:9.1f} {wall / n:10.1f} {rate:9.2f} {rate / base:9.2f}", flush=True)

if __name__ == '__main__':
    p = argparse.ArgumentParser()
    p.add_argument('--device', default='cuda'); p.add_argument('--jobs', type=int, nargs='+', default=[1, 4, 8, 16])
    p.add_argument('--n-train', type=int, default=20000); p.add_argument('--epochs', type=int, default=8)
    p.add_argument('--dataset', default='mnist'); p.add_argument('--cuda-graph', action='store_true')
    p.add_argument('--threads', type=int, default=None)
    a = p.parse_args()
    main(a.device, a.jobs, a.n_train, a.epochs, a.dataset, a.cuda_graph, a.threads)
