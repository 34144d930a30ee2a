"""Is the attack distance a tight upper bound of the margin? On the demo's two paper CNNs (retrained as in
`bench/local_margin.py`), the default attack of `input_margin` (DeepFool refined by bisection and boundary projection)
against Fast Minimum-Norm with one targeted attack per wrong class and two random restarts, on the correctly
classified points among the first n test points; with the certified local margin for scale.

    OMP_NUM_THREADS=1 python bench/attack_strength.py [--n 30]
"""
import argparse, sys, time, warnings
from pathlib import Path
import torch
warnings.filterwarnings('ignore')
sys.path.insert(0, str(Path(__file__).parent))
from local_margin import demo_cnns

if __name__ == '__main__':
    ap = argparse.ArgumentParser(); ap.add_argument('--n', type=int, default=30); a = ap.parse_args()
    torch.set_num_threads(1)
    from jacmargin.margins import input_margin
    from jacmargin.local import local_margin
    for name, (m, x, y) in demo_cnns(a.n).items():
        ok = m(x).argmax(1) == y
        x, y = x[ok], y[ok]
        t = time.time(); d0, _ = input_margin(m, x, y); t0 = time.time() - t
        t = time.time()
        d1, _ = input_margin(m, x, y, method='fmn', targets='all', restarts=2, generator=torch.Generator().manual_seed(0))
        t1 = time.time() - t
        gl = local_margin(m, x, y)
        print(f"{name}: {len(x)} points | median distance: default {d0.median():.4f} ({t0 / len(x):.2f} s/pt), "
              f"FMN all targets + 2 restarts {d1.median():.4f} ({t1 / len(x):.2f} s/pt) | FMN / default: median "
              f"{(d1 / d0).median():.4f}, smallest {(d1 / d0).min():.4f} | γ_local / default {(gl / d0).median():.4f}, "
              f"γ_local / FMN {(gl / d1).median():.4f}", flush=True)
