"""How far can single-neuron linear relaxations certify the demo's paper CNNs?

`local_margin` certifies a radius with interval bounds of the logit-difference gradients over the ball, or with a
linear relaxation (CROWN) of the logits whose intermediate bounds are the forward interval boxes. This script asks
whether a stronger relaxation of the same kind would reach the issue's goal (γ_local ≥ 0.2 × the attack distance on
the demo's two CNNs). For the paper CNN (conv → ReLU → 2×2 max pool, twice, then a linear layer) it computes, per
correctly classified test point, the largest radius (geometric bisection) that each of these certifies:

- `ibp_crown`: CROWN on the logits, intermediate bounds from interval propagation (the relaxation in `local_margin`);
- `crown`: CROWN whose second-layer pre-activation bounds are themselves back-substituted to the input (full CROWN,
  Zhang et al. 2018; the first layer's bounds are exact over the ℓ2 ball);
- `alpha_crown`: full CROWN with the lower ReLU slopes optimised per radius (α-CROWN, Xu et al. 2021; Adam, 30 steps).

beside `local_margin`'s γ_local and the attack distance (`input_margin`, DeepFool refined). Every radius must lie
below the attack distance (checked). The relaxations here are written for this architecture only (dense float64,
a reference computation, not the library's).

    python bench/relaxation_ceiling.py [--n 20] [--out bench/results/relaxation_ceiling.csv]
"""
import argparse, math, time, warnings
import pandas as pd
import torch
import torch.nn.functional as F
warnings.filterwarnings('ignore')

def _relu_relax(l, u):
    "Upper line s (z − l) on unstable neurons (s = 1 / 0 on stable ones), intercept −s l; default lower slope α."
    on, un = l >= 0, (l < 0) & (u > 0)
    s = torch.where(un, u / (u - l).clamp_min(1e-300), on.double())
    return s, torch.where(un, -s * l, torch.zeros_like(l)), torch.where(un, (u >= -l).double(), on.double()), un

def _pool_relax(lo, hi):
    "2×2 max pool over [lo, hi]: the entry of best lower bound (a lower line), whether it provably wins, max of uppers."
    C, H, W = lo.shape
    w = lambda t: t[:, :H // 2 * 2, :W // 2 * 2].reshape(C, H // 2, 2, W // 2, 2)
    Ulo, Uhi = w(lo), w(hi)
    flat = Ulo.permute(0, 1, 3, 2, 4).reshape(C, H // 2, W // 2, 4)
    sel = F.one_hot(flat.argmax(-1), 4).double().reshape(C, H // 2, W // 2, 2, 2).permute(0, 1, 3, 2, 4)
    won = torch.where(sel.bool(), -math.inf, Uhi).amax((2, 4)) <= (Ulo * sel).sum((2, 4))
    return sel, won, Uhi.amax((2, 4)), (Ulo * sel).sum((2, 4)), torch.where(won, (Uhi * sel).sum((2, 4)), Uhi.amax((2, 4)))

class Net:
    "The paper CNN's weights in float64 and the bounds of its layers over the ball B(x, r)."
    def __init__(self, m):
        d = lambda t: t.detach().double()
        self.W1, self.b1, self.W2, self.b2 = d(m.conv1.weight), d(m.conv1.bias), d(m.conv2.weight), d(m.conv2.bias)
        self.Wf, self.bf, self.p1, self.p2 = d(m.out.weight), d(m.out.bias), m.conv1.padding, m.conv2.padding

    def back(self, lam, const, pool, relu1, x, r):
        "min over the ball of lamᵀ pool1-output + const (K rows): through pool 1, ReLU 1 (its α), conv 1, the input."
        sel, won, umax = pool[:3]
        s1, ic1, al1 = relu1
        K, (C, Ho, _, Wo, _) = lam.shape[0], sel.shape
        lin = (lam >= 0) | won[None]
        const = const + torch.where(lin, 0., lam * umax[None]).flatten(1).sum(1)
        a = (torch.where(lin, lam, 0.)[:, :, :, None, :, None] * sel[None]).reshape(K, C, Ho * 2, Wo * 2)
        H, W = s1.shape[-2:]
        a = F.pad(a, (0, W - Wo * 2, 0, H - Ho * 2))
        const = const + torch.where(a < 0, a * ic1[None], 0.).flatten(1).sum(1)
        c = torch.where(a >= 0, al1[None], s1[None]) * a
        const = const + (c * self.b1[None, :, None, None]).flatten(1).sum(1)
        g = F.conv_transpose2d(c, self.W1, padding=self.p1)
        g = F.pad(g, (0, x.shape[-1] - g.shape[-1], 0, x.shape[-2] - g.shape[-2]))
        return (g * x[None]).flatten(1).sum(1) + const - r * g.flatten(1).norm(dim=1)

    def bounds(self, x, r, full):
        "Pre-activation bounds of both layers over B(x, r) and the first layer's relaxations."
        z1 = F.conv2d(x[None], self.W1, self.b1, padding=self.p1)[0]
        rn = F.conv2d(torch.ones_like(x)[None], self.W1 ** 2, padding=self.p1)[0].sqrt()
        l1, u1 = z1 - r * rn, z1 + r * rn                                     # exact over the ball
        s1, ic1, al1, un1 = _relu_relax(l1, u1)
        pool = _pool_relax(l1.clamp_min(0), u1.clamp_min(0))
        plo, phi = pool[3], pool[4]
        zc = F.conv2d(((plo + phi) / 2)[None], self.W2, self.b2, padding=self.p2)[0]
        zr = F.conv2d(((phi - plo) / 2)[None], self.W2.abs(), padding=self.p2)[0]
        l2, u2 = zc - zr, zc + zr
        if full:                                                              # back-substitute the unstable ones
            idx = ((l2 < 0) & (u2 > 0)).flatten().nonzero().flatten()
            n2, (C2, H2, W2) = l2.numel(), l2.shape
            for ch in idx.split(256):
                E = torch.zeros(len(ch), n2, dtype=torch.float64)
                E[torch.arange(len(ch)), ch] = 1
                lam = F.conv_transpose2d(E.reshape(-1, C2, H2, W2), self.W2, padding=self.p2)
                lam = F.pad(lam, (0, plo.shape[-1] - lam.shape[-1], 0, plo.shape[-2] - lam.shape[-2]))
                b = self.b2.repeat_interleave(H2 * W2)[ch]
                lo = self.back(lam, b, pool, (s1, ic1, al1), x, r)
                hi = -self.back(-lam, -b, pool, (s1, ic1, al1), x, r)
                l2.view(-1)[ch] = torch.maximum(l2.view(-1)[ch], lo)
                u2.view(-1)[ch] = torch.minimum(u2.view(-1)[ch], hi)
        return (s1, ic1, al1, un1), pool, (l2, u2)

    def logit_lower(self, x, y, r, relu1, pool, relu2):
        "Lower bounds of z_y − z_j (j ≠ y) over the ball, given the relaxations."
        s2, ic2, al2, (l2, u2) = relu2
        C = self.Wf.shape[0]
        e = torch.eye(C, dtype=torch.float64)
        cot = torch.cat([e[y][None] - e[:y], e[y][None] - e[y + 1:]])
        sel, won, umax = _pool_relax(l2.clamp_min(0), u2.clamp_min(0))[:3]
        K, (C2, Ho, _, Wo, _) = len(cot), sel.shape
        lam = (cot @ self.Wf).reshape(K, C2, Ho, Wo)
        const = cot @ self.bf
        lin = (lam >= 0) | won[None]
        const = const + torch.where(lin, 0., lam * umax[None]).flatten(1).sum(1)
        a = (torch.where(lin, lam, 0.)[:, :, :, None, :, None] * sel[None]).reshape(K, C2, Ho * 2, Wo * 2)
        a = F.pad(a, (0, s2.shape[-1] - Wo * 2, 0, s2.shape[-2] - Ho * 2))
        const = const + torch.where(a < 0, a * ic2[None], 0.).flatten(1).sum(1)
        c = torch.where(a >= 0, al2[None], s2[None]) * a
        const = const + (c * self.b2[None, :, None, None]).flatten(1).sum(1)
        lam = F.conv_transpose2d(c, self.W2, padding=self.p2)
        return self.back(lam, const, pool, relu1[:3], x, r)

    def certifies(self, x, y, r, full=True, alpha_steps=0) -> bool:
        relu1, pool, (l2, u2) = self.bounds(x, r, full)
        s2, ic2, al2, un2 = _relu_relax(l2, u2)
        if (self.logit_lower(x, y, r, relu1, pool, (s2, ic2, al2, (l2, u2))) > 0).all(): return True
        if not alpha_steps: return False
        s1, ic1, al1, un1 = relu1
        p1, p2 = al1.clone().requires_grad_(True), al2.clone().requires_grad_(True)
        opt = torch.optim.Adam([p1, p2], lr=0.1)
        for _ in range(alpha_steps):                  # any α in [0, 1] gives a valid lower line: each try is sound
            a1, a2 = torch.where(un1, p1.clamp(0, 1), al1), torch.where(un2, p2.clamp(0, 1), al2)
            v = self.logit_lower(x, y, r, (s1, ic1, a1, un1), pool, (s2, ic2, a2, (l2, u2)))
            if bool((v > 0).all()): return True
            loss = -v.clamp_max(0).sum()
            opt.zero_grad(); loss.backward(); opt.step()
        return False

def radius(test, lo, hi, steps=10) -> float:
    "Geometric bisection: the largest certified radius found in [lo, hi] (lo is certified)."
    for _ in range(steps):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if test(mid) else (lo, mid)
    return lo

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=20); ap.add_argument('--out', default='bench/results/relaxation_ceiling.csv')
    a = ap.parse_args()
    torch.set_num_threads(1)
    from local_margin import demo_cnns
    from jacmargin.margins import input_margin
    from jacmargin.local import local_margin
    rows = []
    for name, (m, X, Y) in demo_cnns(a.n).items():
        net, ok = Net(m), m(X).argmax(1) == Y
        d, _ = input_margin(m, X, Y)
        gl = local_margin(m, X, Y)
        for i in ok.nonzero().flatten().tolist():
            x, y, di, t = X[i].double(), int(Y[i]), float(d[i]), time.perf_counter()
            r0 = float(gl[i]) * 1e-3
            ibp = radius(lambda r: net.certifies(x, y, r, full=False), r0, di)
            full = radius(lambda r: net.certifies(x, y, r), max(r0, ibp), di)
            alpha = radius(lambda r: net.certifies(x, y, r, alpha_steps=30), full, di, steps=8)
            rows.append(dict(model=name, point=i, attack=di, gamma_local=float(gl[i]), ibp_crown=ibp, crown=full,
                             alpha_crown=alpha, seconds=time.perf_counter() - t))
            assert max(ibp, full, alpha, float(gl[i])) <= di, rows[-1]
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(a.out, index=False)
    ratio = df[['gamma_local', 'ibp_crown', 'crown', 'alpha_crown']].div(df.attack, axis=0).assign(model=df.model)
    print(ratio.groupby('model').median().round(3).to_string())
