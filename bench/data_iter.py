"""One epoch of the paper CNN on 60k MNIST: in-memory `TensorLoader` vs a standard `DataLoader`.

The CNN of Sokolić et al. 2017 (Table II): two (32, 5, 5) convolutions each followed by ReLU and 2x2 max-pooling,
then a linear softmax layer; batch 128, cross-entropy, plain SGD (lr 0.01). Both loaders shuffle the same
`ArrayDataset` (float32, on the CPU); the DataLoader indexes sample by sample and collates (num_workers=0 by
default, as a user would write it). Reported: median wall time of a data-only epoch (iterate the batches, touch
them) over `--reps` runs, and one training epoch (forward + backward + SGD step) with each loader, alternated.

    OMP_NUM_THREADS=1 python bench/data_iter.py --threads 1            # full epoch
    OMP_NUM_THREADS=1 python bench/data_iter.py --threads 1 --steps 100 # shorter variant on a busy machine
"""
import time, statistics, platform, os
import torch
from torch import nn
from fastcore.script import call_parse
from jacmargin.data import load_dataset, TensorLoader, make_loader


def paper_cnn() -> nn.Module:
    "(32,5,5)-conv, ReLU, 2x2 max-pool, twice, then a linear layer to 10 classes (softmax in the loss)."
    return nn.Sequential(nn.Conv2d(1, 32, 5), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 32, 5), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 4 * 4, 10))


def data_epoch(loader, steps=None) -> float:
    t0, s = time.perf_counter(), 0.
    for i, (xb, yb) in enumerate(loader):
        if steps is not None and i >= steps: break
        s += float(xb[0, 0, 0, 0]) + int(yb[0])
    return time.perf_counter() - t0


def train_epoch(loader, steps=None, seed=0) -> tuple:
    torch.manual_seed(seed)
    model = paper_cnn(); opt = torch.optim.SGD(model.parameters(), lr=0.01); lossf = nn.CrossEntropyLoss()
    t0, n = time.perf_counter(), 0
    for i, (xb, yb) in enumerate(loader):
        if steps is not None and i >= steps: break
        opt.zero_grad(set_to_none=True); loss = lossf(model(xb), yb); loss.backward(); opt.step(); n += 1
    return time.perf_counter() - t0, n, loss.item()


@call_parse
def main(threads:int=1,   # torch intra-op threads
         steps:int=None,  # limit the training epoch to this many steps (None: the full 469)
         reps:int=3,      # repetitions of the data-only epoch
         workers:int=0,   # DataLoader num_workers
         bs:int=128):     # batch size
    torch.set_num_threads(threads)
    train, _ = load_dataset('mnist')
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
          f"threads {threads}; load average {os.getloadavg()}")
    print(f"data: {train}")
    mk = {'TensorLoader': lambda: TensorLoader(train, bs, shuffle=True, seed=0),
          'DataLoader': lambda: make_loader(train, bs, shuffle=True, seed=0, num_workers=workers)}
    times = {k: [] for k in mk}
    for _ in range(reps):
        for k, f in mk.items(): times[k].append(data_epoch(f()))
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in times.items(): print(f"data-only epoch  {k:12s}: median {med[k]:.3f} s  (runs {', '.join(f'{t:.3f}' for t in v)})")
    print(f"data-only ratio DataLoader / TensorLoader: {med['DataLoader'] / med['TensorLoader']:.1f}x")
    res = {}
    for k, f in mk.items():
        t, n, loss = train_epoch(f(), steps); res[k] = t
        print(f"train epoch      {k:12s}: {t:.1f} s for {n} steps ({1e3 * t / n:.1f} ms/step), last loss {loss:.3f}")
    print(f"train ratio DataLoader / TensorLoader: {res['DataLoader'] / res['TensorLoader']:.2f}x; "
          f"load average after {os.getloadavg()}")
