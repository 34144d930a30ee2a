"""The certified local margin γ_local (`jacmargin.local.local_margin`): its ratio to γ3 and to the attack distance,
with and without the linear-relaxation certificate, with the deviation certificate (`sharp=True`) and with the bounds
summed along the radius (`radial=4`, alone and with `sharp`), and seconds per sample, on a small MLP trained on scikit-learn's digits, the demo's two MNIST CNNs (Table II's protocol at 1000
samples, weight decay and Jacobian regularization, retrained here: the cache keeps no weights) and an untrained
PreAct-ResNet-18 at 32 px (cost only).

    python bench/local_margin.py [--n 200] [--out bench/results/local_margin.csv]
"""
import argparse, copy, time, warnings
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
warnings.filterwarnings('ignore')

def digits_mlp(n):
    "64-64-64-10 ReLU MLP, 300 Adam steps (batch 64, lr 1e-3) on the first 1500 digits; the next n points."
    from sklearn.datasets import load_digits
    X, Y = load_digits(return_X_y=True)
    X, Y = torch.tensor(X / 16., dtype=torch.float32), torch.tensor(Y)
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.Adam(m.parameters(), 1e-3)
    for _ in range(300):
        i = torch.randint(0, 1500, (64,))
        loss = F.cross_entropy(m(X[i]), Y[i]); opt.zero_grad(); loss.backward(); opt.step()
    return m.eval().requires_grad_(False), X[1500:1500 + n], Y[1500:1500 + n]

def demo_cnns(n):
    "The demo's two trained CNNs and its n test points (the same seed-0 draw as `jacmargin demo`)."
    from jacmargin.cli import _demo_runs, demo_data
    from jacmargin.runs import run, run_data
    dataset, kw = demo_data(None)
    out = {}
    for reg, cfg in _demo_runs(dataset, kw, 1000, 120, 0, 0).items():
        res, model = run(cfg, device='cpu', progress=False, return_model=True)
        test = run_data(cfg, None)[2]
        idx = torch.randperm(len(test), generator=torch.Generator().manual_seed(0))[:n]
        out[f"paper CNN, {'weight decay' if reg == 'wd' else 'Jacobian reg.'} ({res['acc']:.2f} %)"] = (
            model.eval().requires_grad_(False), test.x[idx], test.y[idx])
    return out

def preact(n=8):
    from jacmargin.models import PreActResNet18
    torch.manual_seed(0)
    m = PreActResNet18(10, 3, stem='cifar')
    with torch.no_grad(): m.train(); m(torch.randn(64, 3, 32, 32)); m.eval()     # non-trivial BN statistics
    x = torch.rand(n, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad(): y = m(x).argmax(1)
    return m.requires_grad_(False), x, y

def row(name, m, x, y, attack=True) -> dict:
    from jacmargin.margins import margin_lower_bounds, input_margin
    from jacmargin.local import local_margin
    from jacmargin.certify import lipschitz_log_bounds
    t = time.perf_counter(); lb = margin_lower_bounds(m, x, y, gamma1=False); s0 = time.perf_counter() - t
    lL = lipschitz_log_bounds(m, tuple(x.shape[1:]))[0]                  # the global bound once, outside the timings
    t = time.perf_counter(); gl = local_margin(m, x, y, log_lipschitz=lL); s1 = time.perf_counter() - t
    t = time.perf_counter(); gi = local_margin(m, x, y, log_lipschitz=lL, relax=False); s2 = time.perf_counter() - t
    t = time.perf_counter(); gs = local_margin(m, x, y, log_lipschitz=lL, sharp=True); s4 = time.perf_counter() - t
    t = time.perf_counter(); gr = local_margin(m, x, y, log_lipschitz=lL, radial=4); s5 = time.perf_counter() - t
    t = time.perf_counter(); grs = local_margin(m, x, y, log_lipschitz=lL, radial=4, sharp=True); s6 = time.perf_counter() - t
    ok = lb['score'] > 0
    med = lambda a, b: (a[ok].double() / b[ok].double()).median().item()
    r = dict(model=name, points=len(x), correct=int(ok.sum()), seconds_gamma3_gamma4=s0,
             local_s_per_sample=s1 / len(x), intervals_only_s_per_sample=s2 / len(x),
             sharp_s_per_sample=s4 / len(x), radial_s_per_sample=s5 / len(x), radial_sharp_s_per_sample=s6 / len(x),
             local_over_gamma3=med(gl, lb['gamma3']), radial_over_local=med(gr, gl), radial_sharp_over_sharp=med(grs, gs),
             intervals_only_over_gamma3=med(gi, lb['gamma3']), sharp_over_gamma3=med(gs, lb['gamma3']),
             local_ge_gamma3=bool((gl[ok] >= lb['gamma3'][ok].double() * (1 - 1e-6)).all()),
             sharp_ge_local=bool((gs >= gl * (1 - 1e-9)).all()))   # radial ≥ its own start by construction
    if attack:
        t = time.perf_counter(); d, xa = input_margin(m, x, y); s3 = time.perf_counter() - t
        m64 = copy.deepcopy(m).double()
        with torch.no_grad(): flips64 = m64(xa.double()).argmax(1) != y     # the attack's point, in the certificate's arithmetic
        held = lambda g: bool(((g[ok] <= d[ok].double()) | ~flips64[ok]).all())
        r |= dict(attack_s_per_sample=s3 / len(x), local_over_attack=med(gl, d), intervals_only_over_attack=med(gi, d),
                  sharp_over_attack=med(gs, d), radial_over_attack=med(gr, d), radial_sharp_over_attack=med(grs, d),
                  gamma3_over_attack=med(lb['gamma3'], d), local_le_attack=held(gl), sharp_le_attack=held(gs),
                  radial_le_attack=held(gr), radial_sharp_le_attack=held(grs),
                  sharp_above_float32_attack=int(((gs > d.double()) & ok).sum()),
                  radial_sharp_above_float32_attack=int(((grs > d.double()) & ok).sum()))
    return r

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=200); ap.add_argument('--out', default='bench/results/local_margin.csv')
    a = ap.parse_args()
    torch.set_num_threads(1)
    rows = [row('digits MLP 64-64-64-10', *digits_mlp(a.n))]
    print(rows[-1], flush=True)
    for name, data in demo_cnns(a.n).items():
        rows.append(row(name, *data)); print(rows[-1], flush=True)
    rows.append(row('PreAct-ResNet-18, 32 px (untrained)', *preact(), attack=False)); print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(a.out, index=False)
    print(df.T.to_string())
