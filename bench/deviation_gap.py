"""Where the deviation certificate (`local_margin(sharp=True)`) loses on the demo's paper CNNs.

Through the cut value a = the pooled second layer (the last Linear's input), the certificate proves the ball
B(x, r) when ‖w_y − w_j‖₂ D_a(r) < d_j(x) for every j ≠ y, with D_a(r) ≥ sup over the ball of ‖v_a(x') − v_a(x)‖₂
(notebook 02b). Per correctly classified test point and radius r = f × the attack distance, this script compares

- `certified`: D_a(r) / r from the library's bounds (`_Ball.forward` with `sharp`),
- `empirical`: a lower bound of the true sup over the ball of ‖v_a(x') − v_a(x)‖₂ / r, by projected gradient
  ascent (Adam, 200 steps, float64) from a small random start,
- `needed`: min_j d_j(x) / ‖w_y − w_j‖₂ / r, the largest D_a(r) / r with which the cut proves the ball: an exact
  deviation proves it iff the true sup is below it; where `empirical` < `needed` < `certified`, the loss is the
  bound of the deviation, not the cut,
- `interval Jacobian`: ‖J_c‖₂ + ‖J_r‖₂ of the prefix's Jacobian set in midpoint-radius form (ReLU slopes in [0, 1]
  where undecided, each undecided pool window the hull of its candidate rows), from the forward boxes of the exact
  first layer and one interval step to the second; the norms are power-iteration estimates (a diagnostic, not a bound);
  beside it the fractions of ReLUs provably off (`off1`, `off2`) and of the first pool's windows decided,
- `stage_product`: the product over the two conv → ReLU → max-pool stages of a lower bound (power ascent) of each
  stage's Lipschitz constant seen through its pre-activation boxes: no bound that takes the stages one at a time is
  below it.

    python bench/deviation_gap.py [--n 20] [--out bench/results/deviation_gap.csv]
"""
import argparse, copy, math, warnings
import pandas as pd
import torch
import torch.nn.functional as F
from jacmargin.local import _win
warnings.filterwarnings('ignore')

def _power(A:torch.Tensor, it:int=100) -> float:
    v = torch.randn(A.shape[1], dtype=A.dtype, generator=torch.Generator().manual_seed(0))
    for _ in range(it): v = A.T @ (A @ v); v = v / v.norm()
    return (A @ v).norm().item()

def _pool_hull(Jc, Jr, lo, hi):
    """Jacobian rows of a 2×2 max pool over value boxes [lo, hi], the hull of the candidate entries' rows; the pooled
    box; the fraction of windows decided (one candidate)."""
    w = lambda t: _win(t, (2, 2))
    cand = w(hi) >= w(lo).amax((-3, -1), keepdim=True)
    inf = torch.tensor(math.inf, dtype=Jc.dtype)
    plo = torch.where(cand, w(Jc - Jr), inf).amin((-3, -1))
    phi = torch.where(cand, w(Jc + Jr), -inf).amax((-3, -1))
    decided = (cand.sum((-3, -1)) == 1).double().mean().item()
    return (plo + phi) / 2, (phi - plo) / 2, w(lo).amax((-3, -1)), w(hi).amax((-3, -1)), decided

def _relu_scale(Jc, Jr, lo, hi):
    "Slope ∈ {0}, {1} or [0, 1] times the interval Jacobian (midpoint-radius product)."
    un = (lo < 0) & (hi > 0)
    lc = torch.where(lo >= 0, 1., torch.where(un, .5, 0.)).to(Jc)
    lr = torch.where(un, .5, 0.).to(Jc)
    return lc * Jc, lc * Jr + lr * (Jc.abs() + Jr)

def _allowed(lo, hi):
    "Pre-activations (c, h, w) whose ReLU is not provably off and that can be the maximum of their 2×2 window."
    top = _win(lo.clamp_min(0), (2, 2)).amax((-3, -1))                      # (c, h/2, w/2): each window's largest low end
    return (hi > 0) & (hi >= top.repeat_interleave(2, -2).repeat_interleave(2, -1))

def _pooled_norm(C, allowed, it=300, starts=3):
    """Lower bound (projected power ascent, `starts` random starts) of sup over unit u of the ℓ2 norm of the 2×2 max
    pool of |C u| over the allowed entries: the Lipschitz constant of a conv → ReLU → max-pool stage seen on its own,
    its pre-activations free within their boxes (ReLU and max are 1-Lipschitz per window). C: (c·h·w, n) dense rows."""
    c, h, w = allowed.shape
    a = allowed.flatten().to(C.dtype)
    best = 0.
    for s in range(starts):
        u = torch.randn(C.shape[1], dtype=C.dtype, generator=torch.Generator().manual_seed(s))
        for _ in range(it):
            z = (a * (C @ u)).view(c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 2, 4).reshape(c, h // 2, w // 2, 4)
            m = F.one_hot(z.abs().argmax(-1), 4).view(c, h // 2, w // 2, 2, 2).permute(0, 1, 3, 2, 4).reshape(-1)
            u = C.T @ (m.to(C.dtype) * a * (C @ u)); u = u / u.norm().clamp_min(1e-300)
        z = (a * (C @ u)).view(c, h // 2, 2, w // 2, 2).abs().amax((2, 4))
        best = max(best, z.norm().item())
    return best

def interval_jacobian(md, x, r) -> dict:
    """‖J_c‖ + ‖J_r‖ of the paper CNN's conv-ReLU-pool-conv-ReLU-pool Jacobian set over B(x, r) (x: (1, 1, H, W)), and
    the fractions of each layer's ReLUs provably off and of the first pool's windows decided."""
    c1, c2 = md.conv1, md.conv2
    z1 = c1(x)[0]
    l1 = z1 - r * c1.weight.flatten(1).norm(dim=1)[:, None, None]          # exact over the ℓ2 ball
    u1 = 2 * z1 - l1
    n = x[0].numel()
    E = torch.eye(n, dtype=x.dtype).view(n, *x.shape[1:])
    J = F.conv2d(E, c1.weight, None, c1.stride, c1.padding)
    Jc, Jr = _relu_scale(J, torch.zeros_like(J), l1, u1)
    Jc, Jr, plo, phi, decided = _pool_hull(Jc, Jr, l1.clamp_min(0), u1.clamp_min(0))
    zc = c2(((plo + phi) / 2)[None])[0]
    zr = F.conv2d(((phi - plo) / 2)[None], c2.weight.abs(), None, c2.stride, c2.padding)[0]
    Jc, Jr = F.conv2d(Jc, c2.weight, None, c2.stride, c2.padding), F.conv2d(Jr, c2.weight.abs(), None, c2.stride, c2.padding)
    Jc, Jr = _relu_scale(Jc, Jr, zc - zr, zc + zr)
    Jc, Jr, *_ = _pool_hull(Jc, Jr, (zc - zr).clamp_min(0), (zc + zr).clamp_min(0))
    C2 = F.conv2d(torch.eye(plo.numel(), dtype=x.dtype).view(-1, *plo.shape), c2.weight, None, c2.stride,
                  c2.padding).flatten(1).T
    stage = _pooled_norm(J.flatten(1).T, _allowed(l1, u1)) * _pooled_norm(C2, _allowed(zc - zr, zc + zr))
    return dict(interval_jacobian=_power(Jc.flatten(1).T) + _power(Jr.flatten(1).T), stage_product=stage,
                off1=(u1 <= 0).double().mean().item(), off2=(zc + zr <= 0).double().mean().item(), pool1_decided=decided)

def empirical(prefix, x, r, steps=200):
    "(N,) lower bounds of sup over B(x_i, r_i) of ‖prefix(x') − prefix(x_i)‖₂ (projected Adam ascent)."
    with torch.no_grad(): v0 = prefix(x).flatten(1)
    delta = (torch.randn(x.shape, dtype=x.dtype, generator=torch.Generator().manual_seed(1)) * 1e-3).requires_grad_()
    opt = torch.optim.Adam([delta], lr=0.01)
    shape = (-1, *[1] * (x.dim() - 1))
    for _ in range(steps):
        loss = -(prefix(x + delta).flatten(1) - v0).norm(dim=1).sum()
        opt.zero_grad(); loss.backward(); opt.step()
        with torch.no_grad(): delta.mul_((r / delta.flatten(1).norm(dim=1).clamp_min(1e-30)).clamp_max(1).view(shape))
    with torch.no_grad(): return (prefix(x + delta).flatten(1) - v0).norm(dim=1)

def rows_for(name, m, X, Y, fracs):
    from jacmargin.margins import input_margin
    from jacmargin.local import _local_chunks
    with torch.no_grad(): ok = m(X).argmax(1) == Y
    X, Y = X[ok], Y[ok]
    att = input_margin(m, X, Y)[0].double()
    md = copy.deepcopy(m).double().requires_grad_(False)
    prefix = torch.nn.Sequential(*list(md.children())[:-2])              # up to the second pool (before flatten)
    W = md.out.weight
    with torch.no_grad(): z = md(X.double())
    d = z.gather(1, Y[:, None]) - z
    wd = (W[Y][:, None, :] - W[None]).norm(dim=-1)
    R = torch.where(F.one_hot(Y, z.shape[1]).bool(), math.inf, d / wd).amin(1)   # feature distance the cut needs
    B, *_ = next(_local_chunks(m, X, Y, None, None, len(X)))
    B.sharp = True
    a = B.out.args[1]                                                    # the last Linear's input (addmm)
    out = []
    for f in fracs:
        r = f * att
        B.forward(r)
        Dc = B.D[a] / r
        De = empirical(prefix, X.double(), r) / r
        for i in range(len(X)):
            out.append(dict(model=name, point=i, frac=f, attack=float(att[i]), certified=float(Dc[i]),
                            empirical=float(De[i]), needed=float(R[i] / r[i]),
                            **(interval_jacobian(md, X[i:i + 1].double(), float(r[i])) if f == fracs[-1] else {})))
            print(out[-1], flush=True)
    return out

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=20); ap.add_argument('--out', default='bench/results/deviation_gap.csv')
    a = ap.parse_args()
    torch.set_num_threads(1)
    from local_margin import demo_cnns
    rows = []
    for name, (m, X, Y) in demo_cnns(a.n).items(): rows += rows_for(name, m, X, Y, (0.05, 0.1, 0.2))
    df = pd.DataFrame(rows)
    df.to_csv(a.out, index=False)
    assert (df.certified >= df.empirical).all(), "a deviation found above the certified bound"   # soundness
    print(df.drop(columns=['point', 'attack']).groupby(['model', 'frac']).median().round(3).to_string())
