"""Why γ_local is loosest on residual CNNs with eval-mode batch norm: the same small CNN on scikit-learn's digits
(8×8; a 3×3 stem and two blocks of two 3×3 convolutions, 16 channels, average pooling, a Linear), trained with and
without batch norm, with and without its skip connections, and with its batch norms folded into the convolutions
before them (`torch.nn.utils.fusion.fuse_conv_bn_eval`: the same function to float rounding). Columns: medians over
the correctly classified test points of γ_local / attack, γ3 / attack and of the first-order radius
min_j (z_y − z_j) / ‖∇(z_y − z_j)(x)‖ / attack (what γ_local would reach if the gradient did not change over the
ball: the ceiling of any bound built on gradient enclosures), the certified global bound L, and how fast the
certified gradient bound grows with the ball's radius: median of max_j G_j(r) / max_j G_j(0) at r = 1e-4, 1e-3, 1e-2
(`local.local_gradient_bounds`; G is capped at √2 L).

    OMP_NUM_THREADS=1 python bench/local_bn.py [--n 60] [--out bench/results/local_bn.csv]
"""
import argparse, copy, time, warnings
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.fusion import fuse_conv_bn_eval
warnings.filterwarnings('ignore')

class Block(nn.Module):
    "Two 3×3 convolutions, each followed by batch norm (or nothing), ReLU between, the skip added before the last ReLU."
    def __init__(self, c:int, bn:bool, skip:bool):
        super().__init__()
        norm = (lambda: nn.BatchNorm2d(c)) if bn else nn.Identity
        self.c1, self.b1, self.c2, self.b2, self.skip = nn.Conv2d(c, c, 3, padding=1, bias=not bn), norm(), \
            nn.Conv2d(c, c, 3, padding=1, bias=not bn), norm(), skip
    def forward(self, x):
        h = self.b2(self.c2(F.relu(self.b1(self.c1(x)))))
        return F.relu(x + h if self.skip else h)

class Net(nn.Module):
    def __init__(self, bn:bool, skip:bool, c:int=16):
        super().__init__()
        self.c0, self.b0 = nn.Conv2d(1, c, 3, padding=1, bias=not bn), (nn.BatchNorm2d(c) if bn else nn.Identity())
        self.blocks, self.fc = nn.Sequential(Block(c, bn, skip), Block(c, bn, skip)), nn.Linear(c * 16, 10)
    def forward(self, x):
        return self.fc(F.avg_pool2d(self.blocks(F.relu(self.b0(self.c0(x)))), 2).flatten(1))

def folded(m:Net) -> Net:
    "The same network with every batch norm folded into the convolution before it."
    m = copy.deepcopy(m)
    for mod, c, b in [(m, 'c0', 'b0')] + [(bl, c, b) for bl in m.blocks for c, b in (('c1', 'b1'), ('c2', 'b2'))]:
        setattr(mod, c, fuse_conv_bn_eval(getattr(mod, c), getattr(mod, b))); setattr(mod, b, nn.Identity())
    return m

def first_order(m, x, y) -> torch.Tensor:
    "min_j (z_y − z_j) / ‖∇_x (z_y − z_j)‖ per point (float64)."
    m, x = copy.deepcopy(m).double(), x.double()
    J = torch.func.vmap(torch.func.jacrev(lambda v: m(v[None])[0]))(x).flatten(2)      # (B, C, D)
    z = m(x)
    g = J.gather(1, y[:, None, None].expand(-1, 1, J.shape[2])) - J                   # (B, C, D)
    r = (z.gather(1, y[:, None]) - z) / g.norm(dim=2)
    return r.scatter(1, y[:, None], float('inf')).amin(1)

def main(n:int=60, out:str='bench/results/local_bn.csv'):
    import jacmargin as jm
    from jacmargin.local import local_gradient_bounds
    from sklearn.datasets import load_digits
    torch.set_num_threads(1)
    X, Y = load_digits(return_X_y=True)
    X, Y = torch.tensor(X / 16., dtype=torch.float32).reshape(-1, 1, 8, 8), torch.tensor(Y)
    rows = []
    for bn in (True, False):
        for skip in (True, False):
            torch.manual_seed(0)
            m = Net(bn, skip)
            opt = torch.optim.Adam(m.parameters(), 1e-3)
            for _ in range(400):                                   # 400 Adam steps, batch 64, on the first 1500
                i = torch.randint(0, 1500, (64,))
                loss = F.cross_entropy(m(X[i]), Y[i]); opt.zero_grad(); loss.backward(); opt.step()
            m.eval().requires_grad_(False)
            x, y = X[1500:1500 + n], Y[1500:1500 + n]
            ok = m(x).argmax(1) == y
            x, y = x[ok], y[ok]
            d, _ = jm.input_margin(m, x, y, method='fmn')
            for fold in ((False, True) if bn else (False,)):
                mm = folded(m) if fold else m
                t = time.time()
                gl = jm.local_margin(mm, x, y)
                sec = (time.time() - t) / len(x)
                g3 = jm.margin_lower_bounds(mm, x, y, gamma1=False, output='logits')['gamma3']
                G0 = local_gradient_bounds(mm, x, y, 0.).amax(1)
                growth = {f'grad_growth_{r:g}': float((local_gradient_bounds(mm, x, y, r).amax(1) / G0).median())
                          for r in (1e-4, 1e-3, 1e-2)}
                rows.append(dict(batch_norm=('folded' if fold else 'yes') if bn else 'no', skip=skip,
                                 test_acc=float(ok.float().mean()), points=len(x),
                                 local_over_attack=float((gl / d).median()), g3_over_attack=float((g3 / d).median()),
                                 first_order_over_attack=float((first_order(mm, x, y) / d).median()),
                                 lipschitz_bound=jm.lipschitz_bound(mm, (1, 8, 8)), sec_per_point=sec,
                                 below_attack=bool((gl <= d).all() and (g3 <= d).all()), **growth))
                print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(out, index=False)
    print(df.round(4).to_string(index=False))

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--n', type=int, default=60); ap.add_argument('--out', default='bench/results/local_bn.csv')
    main(**vars(ap.parse_args()))
