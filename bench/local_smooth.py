"""γ_local on 2-D networks of smooth activations (GELU, SiLU, Mish, Hardswish, ELU; ReLU for reference): the median over
networks of the median γ_local / true margin, the true margin found by brute force on a dense grid
(`margins.input_margin_grid`). Three 2-32-32-3 MLPs per activation (seeds 0-2), trained with Adam on three Gaussian
blobs, 40 correctly classified test points each, float64.

    python bench/local_smooth.py [--out bench/results/local_smooth.csv]
"""
import argparse, time, warnings
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
warnings.filterwarnings('ignore')
import jacmargin as jm
from jacmargin.margins import input_margin_grid
from jacmargin.experiment import markdown_table

ACTS = {'relu': nn.ReLU, 'gelu': nn.GELU, 'silu': nn.SiLU, 'mish': nn.Mish, 'hardswish': nn.Hardswish, 'elu': nn.ELU}

def blobs(n, seed):
    g = torch.Generator().manual_seed(seed)
    c = torch.tensor([[0., 1.2], [-1.1, -.7], [1.1, -.7]], dtype=torch.float64)
    y = torch.arange(n) % 3
    return c[y] + .6 * torch.randn(n, 2, generator=g, dtype=torch.float64), y

def net(act, seed):
    torch.manual_seed(seed)
    A = ACTS[act]
    m = nn.Sequential(nn.Linear(2, 32), A(), nn.Linear(32, 32), A(), nn.Linear(32, 3)).double()
    x, y = blobs(600, seed)
    opt = torch.optim.Adam(m.parameters(), 1e-2)
    for _ in range(400):
        loss = F.cross_entropy(m(x), y); opt.zero_grad(); loss.backward(); opt.step()
    return m.eval().requires_grad_(False)

def main(out):
    rows = []
    for act in ACTS:
        for seed in range(3):
            m = net(act, seed)
            x, y = blobs(200, 100 + seed)
            ok = m(x).argmax(1) == y
            x, y = x[ok][:40], y[ok][:40]
            true = input_margin_grid(m, x, y, extent=(-5., 5., -5., 5.), n=801)
            t = time.perf_counter()
            gl = jm.local_margin(m, x, y)
            dt = (time.perf_counter() - t) / len(x)
            g3 = jm.margin_lower_bounds(m, x, y, output='logits', gamma1=False)['gamma3']
            assert (gl <= true * (1 + 1e-6)).all(), (act, seed)
            rows.append(dict(activation=act, seed=seed, local_over_true=float((gl / true).median()),
                             gamma3_over_true=float((g3 / true).median()), s_per_point=dt))
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    summ = df.groupby('activation', sort=False)[['local_over_true', 'gamma3_over_true', 's_per_point']].median()
    print(summ.to_string(float_format='%.3f'))
    df.to_csv(out, index=False, float_format='%.6g')
    with open(out.replace('.csv', '.md'), 'w') as f:
        f.write(f"# γ_local on 2-D smooth-activation MLPs\n\n`python bench/local_smooth.py` — medians over 3 networks of the "
                f"median over 40 points; 2 CPU cores (one busy with a training run), torch {torch.__version__}.\n\n"
                + markdown_table(summ.round(3).reset_index()) + '\n')

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default='bench/results/local_smooth.csv')
    main(ap.parse_args().out)
