"""Benchmark: batched `jacmargin.margins.input_margin` vs torchattacks' per-sample DeepFool on 1000 MNIST test points.

Reports the median L2 distance of the adversarial points (over samples correctly classified and attacked by all)
and the wall and process CPU times with speed-ups relative to torchattacks, side by side in one process,
single-threaded (the CPU time is the robust figure on a shared machine). All attacks keep points in [0, 1]. torchattacks is a benchmark-only dependency:
    pip install --no-deps torchattacks        # its DeepFool needs no torchvision
Run:  OMP_NUM_THREADS=1 python bench/input_margin.py [--n 1000] [--epochs 3]
"""
import math, time, argparse
import torch
import torch.nn.functional as F
from jacmargin.core import seed_everything
from jacmargin.data import load_dataset, stratified_subset
from jacmargin.models import PaperCNN
from jacmargin.margins import input_margin


def train(model, ds, epochs, lr=1e-3, bs=64, seed=0):
    g = seed_everything(seed); opt = torch.optim.Adam(model.parameters(), lr); model.train()
    for _ in range(epochs):
        for j in torch.randperm(len(ds), generator=g).split(bs):
            loss = F.cross_entropy(model(ds.x[j]), ds.y[j]); opt.zero_grad(); loss.backward(); opt.step()
    return model.eval().requires_grad_(False)


def distances(model, x, y, xa):
    "L2 distances of verified adversarial points; inf where the class did not change."
    with torch.no_grad(): ok = model(xa).argmax(1) != y
    d = (xa - x).flatten(1).norm(dim=1)
    return torch.where(ok, d, torch.full_like(d, math.inf))


def main(n=1000, n_train=3000, epochs=3, threads=1):
    torch.set_num_threads(threads)
    tr, te = load_dataset('mnist')
    sub = stratified_subset(tr, n_train); seed_everything(0)                 # the initialisation is seeded too
    model = train(PaperCNN(1, 10, 2, input_size=28, channels=16), sub, epochs)
    x, y = te.x[:n], te.y[:n]
    with torch.no_grad(): correct = model(x).argmax(1) == y
    print(f"model: PaperCNN(16 channels) on {n_train} MNIST images, {epochs} epochs; test accuracy on the {n} points "
          f"{correct.double().mean():.3f}; {threads} CPU thread(s)")
    import torchattacks
    rows = {}
    clock = lambda: (time.perf_counter(), time.process_time())
    since = lambda t0: tuple(b - a for a, b in zip(t0, clock()))
    t = clock(); xa = torchattacks.DeepFool(model, steps=50, overshoot=0.02)(x, y); rows['torchattacks DeepFool'] = (since(t), distances(model, x, y, xa))
    for name, kw in [('jacmargin deepfool', dict(method='deepfool')), ('jacmargin fmn', dict(method='fmn'))]:
        t = clock(); d, _ = input_margin(model, x, y, box=(0., 1.), **kw); rows[name] = (since(t), d)
    both = correct & torch.stack([d.isfinite() for _, d in rows.values()]).all(0)
    print(f"{both.sum().item()} samples correctly classified and attacked by all methods")
    ref = rows['torchattacks DeepFool'][0]
    for name, ((wall, cpu), d) in rows.items():
        print(f"{name:>22}: median L2 {d[both].median():.4f}  mean {d[both].mean():.4f}  found {(d[correct].isfinite()).double().mean():.3f}"
              f"  wall {wall:7.1f} s (x{ref[0] / wall:4.1f})  cpu {cpu:7.1f} s (x{ref[1] / cpu:4.1f})")


if __name__ == '__main__':
    p = argparse.ArgumentParser(); p.add_argument('--n', type=int, default=1000); p.add_argument('--epochs', type=int, default=3)
    p.add_argument('--threads', type=int, default=1); a = p.parse_args()
    main(a.n, epochs=a.epochs, threads=a.threads)
