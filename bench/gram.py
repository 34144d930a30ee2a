"""Gram iteration on convolution kernels: `jacmargin.operators.conv_norm_gram` beside orthogonium's `delattre24` (the same
iteration, spatial conv2d, output side), on random kernels. Columns: each bound / the norm of the convolution on Z^2
(lower estimate: the largest σ₁ of K̂ over a 128×128 grid, the circular embedding), seconds (median of 3), whether each
is ≥ that estimate. Run: `OMP_NUM_THREADS=1 python bench/gram.py` (writes bench/results/gram.md)."""
import platform, statistics, time, os
import torch
from jacmargin.operators import conv_norm_gram, conv_norm_circular
from orthogonium.layers.conv.singular_values.delattre24 import compute_delattre2024

def med(f, r=3):
    ts, v = [], None
    for _ in range(r):
        t = time.perf_counter(); v = f(); ts.append(time.perf_counter() - t)
    return v, statistics.median(ts)

if __name__ == '__main__':
    torch.manual_seed(0)
    rows = []
    shapes = [(o, c, k) for k in (3, 5) for o, c in ((4, 4), (8, 8), (16, 16), (32, 32), (64, 64), (8, 32), (32, 8),
                                                      (3, 16), (16, 3), (64, 16))]
    for o, c, k in shapes:
        w = torch.randn(o, c, k, k, dtype=torch.float64) / (c * k * k) ** .5
        sup = conv_norm_circular(w, (128, 128), (1, 1), (0, 0), (1, 1))
        T = 4 if k == 3 else 3
        ours, t1 = med(lambda: conv_norm_gram(w, n_iter=T).item())
        ref, t2 = med(lambda: compute_delattre2024(w.clone(), T).item())
        rows.append(f"| {o}→{c} {k}×{k} | {T} | {ours / sup:.4f} | {ref / sup:.4f} | {t1:.3f} | {t2:.3f} | "
                    f"{'yes' if ours >= sup else 'NO'} | {'yes' if ref >= sup else 'NO'} |")
    head = ("| kernel | T | ours / sup | delattre24 / sup | ours s | delattre24 s | ours ≥ sup | delattre24 ≥ sup |\n"
            "| --- | --- | --- | --- | --- | --- | --- | --- |")
    out = (f"# Gram iteration on kernels\n\nMachine: {platform.machine()}, {os.cpu_count()} cores, torch "
           f"{torch.__version__}, {torch.get_num_threads()} thread(s). `OMP_NUM_THREADS=1 python bench/gram.py`.\n"
           "sup: the largest σ₁(K̂(ω)) over a 128×128 grid (a lower estimate of the norm on Z², which both bound).\n\n"
           + head + "\n" + "\n".join(rows) + "\n")
    open(os.path.join(os.path.dirname(__file__), 'results', 'gram.md'), 'w').write(out)
    print(out)
