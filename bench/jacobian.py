"""Cost of the Jacobian engine relative to one plain forward+backward, and to the naive per-sample loop.

Run: python bench/jacobian.py [--batch 64 128] [--reps 15]
Prints medians over `reps` repetitions, measured side by side in one process.
"""
import argparse, os, platform, statistics, time
import torch
from torch import nn
import torch.nn.functional as F
from jacmargin.jacobian import jacobian, jacobian_frobenius_sq, jacobian_spectral_norm, model_graph, output_vjp

def paper_cnn():
    "The MNIST CNN of Sokolić et al. 2017 (Sec. VI-B): two (32,5,5) conv + (2,2) max-pool layers, softmax layer."
    return nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10))

def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 784), nn.ReLU(), nn.Linear(784, 784), nn.ReLU(), nn.Linear(784, 10))

def median_time(fn, reps):
    fn()  # warm-up
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return statistics.median(ts)

def plain_step(model, x, y):
    model.zero_grad(); F.cross_entropy(model(x), y).backward()

def naive_loop(model, x):
    "What a user would write: torch.autograd.functional.jacobian one sample at a time."
    return torch.stack([torch.autograd.functional.jacobian(lambda xi: model(xi[None]).softmax(-1)[0], xi) for xi in x])

def frob_exact(model, x, batched):
    xg, out = model_graph(model, x)
    K = out.shape[1]; v = torch.eye(K)[:, None].expand(K, len(x), K)
    return output_vjp(out, xg, v, batched=batched).pow(2).flatten(1).sum(-1)

def main(batch=(64, 128), reps=15):
    torch.manual_seed(0)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}, no GPU" if not torch.cuda.is_available() else f"GPU {torch.cuda.get_device_name()}")
    for name, model in [('paper CNN', paper_cnn()), ('MLP 784-784-784-10', mlp())]:
        for B in batch:
            x, y = torch.rand(B, 1, 28, 28), torch.randint(0, 10, (B,))
            base = median_time(lambda: plain_step(model, x, y), reps)
            cases = {
                'jacobian (exact, full)': lambda: jacobian(model, x),
                'frobenius exact, vmap over K': lambda: frob_exact(model, x, True),
                'frobenius exact, loop over K': lambda: frob_exact(model, x, False),
                'frobenius exact (default)': lambda: jacobian_frobenius_sq(model, x),
                'frobenius projection n=1': lambda: jacobian_frobenius_sq(model, x, method='projection'),
                'frobenius one_hot': lambda: jacobian_frobenius_sq(model, x, method='one_hot'),
                'spectral svd': lambda: jacobian_spectral_norm(model, x),
                'spectral power (1 step)': lambda: jacobian_spectral_norm(model, x, method='power', n_iter=1, tol=0),
                'naive per-sample loop': lambda: naive_loop(model, x),
            }
            print(f"\n{name}, batch {B}: plain forward+backward = {base*1e3:.1f} ms (median of {reps})")
            res = {k: median_time(f, max(3, reps // 3) if 'naive' in k else reps) for k, f in cases.items()}
            naive = res['naive per-sample loop']
            print(f"{'':32} {'ms':>8} {'× plain f+b':>12} {'naive loop ×':>13}")
            for k, t in res.items(): print(f"{k:32} {t*1e3:8.1f} {t/base:12.2f} {naive/t:13.1f}")

if __name__ == '__main__':
    p = argparse.ArgumentParser(); p.add_argument('--batch', type=int, nargs='+', default=[64, 128])
    p.add_argument('--reps', type=int, default=15); a = p.parse_args()
    main(tuple(a.batch), a.reps)
