"""Would integrating the local gradient bound along the radius certify more than one ball's bound?

`local_margin` proves B(x, r) from L_j(r), a certified bound of ‖∇(z_y − z_j)‖₂ over the whole ball:
r L_j(r) < d_j(x) for every j ≠ y (the mean-value inequality). The bound grows with r, and a point at distance r is
reached through every smaller ball first. For radii 0 = s_0 < s_1 < ... < s_m, the piece of the segment from x to
x' = x + s_m u (‖u‖ = 1) between s_{k−1} and s_k lies in B(x, s_k), so

    d_j(x) − d_j(x') ≤ Σ_k (s_k − s_{k−1}) L_j(s_k)        (mean-value inequality on each piece, then telescoping),

and the ball B(x, s_m) is proved when the sum is below d_j(x) for every j: a certificate at least as large as the
single ball's (each L_j(s_k) ≤ L_j(s_m) where the bounds are monotone). This script measures how far it can go, with
the library's own L_j (`local_gradient_bounds`, intervals, the boxes of `local_margin`) on a fine grid of radii
s_k = k f_max / K × the attack distance (K = `--grid`): per correctly classified point, the largest grid radius that
the single ball proves ("one ball") and that the sum proves ("integral"), beside `local_margin`'s γ_local (intervals
and linear relaxation) and the global certificate's radius min_j d_j / (√2 L) (L the global bound) below which
γ_local never goes. The grid's radii are a ceiling for any search that evaluates L at fewer radii (a search does not
know the grid's best radius in advance). Logit gaps d_j in float64, without `local_margin`'s rounding allowance (a
ceiling; the allowance moves radii by < 0.05 %).

    python bench/radial_integral.py [--n 20] [--grid 100] [--out bench/results/radial_integral.csv]
"""
import argparse, math, time, warnings
import pandas as pd
import torch
warnings.filterwarnings('ignore')

def ceiling(name, m, x, y, f_max, K) -> tuple[dict, pd.DataFrame]:
    from jacmargin.local import local_gradient_bounds, local_margin
    from jacmargin.certify import lipschitz_log_bounds
    from jacmargin.margins import input_margin
    import copy
    att = input_margin(m, x, y)[0].double()
    with torch.no_grad(): z = copy.deepcopy(m).double()(x.double())
    ok = (z.argmax(1) == y) & (att > 0) & att.isfinite()
    x, y, z, att = x[ok], y[ok], z[ok], att[ok]
    n, C = z.shape
    lL = lipschitz_log_bounds(m, tuple(x.shape[1:]))[0]
    cap = math.sqrt(2) * math.exp(lL)
    other = torch.ones(n, C, dtype=torch.bool).scatter(1, y[:, None], False)
    d = torch.where(other, z.gather(1, y[:, None]) - z, torch.full_like(z, math.inf))    # z_y − z_j, ∞ at j = y
    t = time.perf_counter(); gl = local_margin(m, x, y, log_lipschitz=lL).double(); s_gl = time.perf_counter() - t
    s = torch.arange(1, K + 1, dtype=torch.float64)[:, None] * (f_max / K) * att[None]    # (K, n) grid radii
    t = time.perf_counter()
    L = torch.stack([local_gradient_bounds(m, x, y, s[k]).double() for k in range(K)])  # (K, n, C), capped by cap
    s_grid = time.perf_counter() - t
    not_monotone = int((L[1:] < L[:-1] * (1 - 1e-9)).any(2).any(0).sum())    # points where L_j(r) decreases
    ds = torch.diff(s, dim=0, prepend=torch.zeros(1, n, dtype=torch.float64))
    def largest(drop):                                    # largest grid radius whose drop bound is below every d_j
        proved = torch.cumprod((drop < d[None]).all(2).int(), 0).bool()       # nested: the first failure stops
        return torch.where(proved, s, torch.zeros_like(s)).amax(0)
    one, integ = largest(s[..., None] * L), largest(torch.cumsum(ds[..., None] * L, 0))
    glob = d.amin(1) / cap
    at_end = int((integ >= s[-1] * (1 - 1e-12)).sum())                 # grid too short for these points
    per = pd.DataFrame(dict(model=name, attack=att, global_radius=glob, gamma_local=gl, one_ball=one, integral=integ))
    med = lambda v: (v / att).median().item()
    row = dict(model=name, points=n, grid=K, f_max=f_max, global_over_attack=med(glob), gamma_local_over_attack=med(gl),
               one_ball_over_attack=med(one), integral_over_attack=med(integ),
               integral_over_one_ball=(integ / one.clamp_min(1e-300)).median().item(),
               integral_over_gamma_local=(integ / gl).median().item(), points_at_grid_end=at_end,
               integral_le_attack=bool((integ <= att).all()), points_not_monotone=not_monotone, s_per_point_gamma_local=s_gl / n,
               s_per_point_per_radius=s_grid / n / K)
    return row, per

if __name__ == '__main__':
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parent))
    from local_margin import digits_mlp, demo_cnns
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=20); ap.add_argument('--grid', type=int, default=100)
    ap.add_argument('--out', default='bench/results/radial_integral.csv')
    a = ap.parse_args()
    torch.set_num_threads(1)
    rows, pers = [], []
    for name, (m, x, y), f_max in [('digits MLP 64-64-64-10', digits_mlp(a.n), 1.0)] + \
                                   [(k, v, 0.15) for k, v in demo_cnns(a.n).items()]:
        r, p = ceiling(name, m, x, y, f_max, a.grid); rows.append(r); pers.append(p); print(r, flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(a.out, index=False)
    pd.concat(pers).to_csv(a.out.replace('.csv', '_points.csv'), index=False)
    print(df.T.to_string())
