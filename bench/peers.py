"""The certified Lipschitz bound on networks built to be certified (deel-torchlip, orthogonium): the bound, the product
of the layers' certified norms where the network is a chain, and the largest ‖J(x)‖₂ that gradient ascent on x finds
(a lower bound of the true constant); plus Linear–GroupSort2–Linear against the product of its two matrices' norms.
Untrained networks at their initialisation (seed 0).

    python bench/peers.py [--out bench/results/peers.md]
"""
import argparse, math, time, warnings
import torch
from torch import nn
warnings.filterwarnings('ignore')
from jacmargin.certify import lipschitz_bound, norm_product

def ascent(m, shape, steps=30, starts=3):
    dt, best = next(m.parameters()).dtype, 0.
    for s in range(starts):
        x = torch.randn(1, *shape, dtype=dt, generator=torch.Generator().manual_seed(s)).requires_grad_(True)
        opt = torch.optim.Adam([x], lr=0.05)
        for _ in range(steps):
            J = torch.autograd.functional.jacobian(lambda z: m(z)[0], x, create_graph=True).reshape(-1, x.numel())
            sv = torch.linalg.matrix_norm(J, 2)
            best = max(best, sv.item())
            opt.zero_grad(); (-sv).backward(); opt.step()
    return best

def nets():
    from deel import torchlip as tl
    from orthogonium.layers import AdaptiveOrthoConv2d, MaxMin, OrthoLinear
    from orthogonium.layers.conv.AOL import AOLConv2D
    from orthogonium.layers.conv.SLL import SDPBasedLipschitzResBlock
    torch.manual_seed(0)
    yield 'Linear-GroupSort2-Linear (float64)', nn.Sequential(nn.Flatten(), nn.Linear(16, 16), tl.GroupSort2(),
                                                              nn.Linear(16, 4)).double(), (16,)
    yield 'deel-torchlip SpectralConv/GroupSort2 CNN, 1x8x8', nn.Sequential(
        tl.SpectralConv2d(1, 8, 3, padding=1), tl.GroupSort2(), tl.SpectralConv2d(8, 8, 3, stride=2, padding=1),
        tl.GroupSort2(), nn.Flatten(), tl.SpectralLinear(128, 32), tl.GroupSort2(), tl.FrobeniusLinear(32, 10)), (1, 8, 8)
    yield 'orthogonium AOC/MaxMin/OrthoLinear, 1x8x8', nn.Sequential(
        AdaptiveOrthoConv2d(1, 8, 3, padding='same'), MaxMin(), AdaptiveOrthoConv2d(8, 8, 3, padding='same'), MaxMin(),
        nn.Flatten(), OrthoLinear(512, 10)), (1, 8, 8)
    yield 'orthogonium AOL/MaxMin, 1x8x8', nn.Sequential(AOLConv2D(1, 8, 3, padding=1), MaxMin(), nn.Flatten(),
                                                          nn.Linear(512, 10)), (1, 8, 8)
    yield 'orthogonium SLL block, 4x6x6', nn.Sequential(SDPBasedLipschitzResBlock(4, 8, 3), nn.Flatten(),
                                                         nn.Linear(144, 10)), (4, 6, 6)
    # last, so that the networks above keep their weights (one random stream)
    yield 'orthogonium strided AOC (BCOP x RKO)/MaxMin, 1x28x28', nn.Sequential(
        AdaptiveOrthoConv2d(1, 16, 3, padding='same'), MaxMin(), AdaptiveOrthoConv2d(16, 16, 4, stride=2, padding=1),
        MaxMin(), nn.Flatten(), OrthoLinear(16 * 14 * 14, 10)), (1, 28, 28)
    from orthogonium.layers.conv.SLL import SDPBasedLipschitzDense
    yield 'orthogonium dense SLL, 16', nn.Sequential(SDPBasedLipschitzDense(16, 16, 32), nn.Linear(16, 10)), (16,)

def main(out):
    lines = ['| network | bound | product of layer norms | ascent ‖J‖₂ | bound / ascent | s |', '|---|---|---|---|---|---|']
    for name, m, shape in nets():
        m.eval()
        t = time.perf_counter()
        try: L = f'{lipschitz_bound(m, shape):.6f}'
        except Exception as e: L = f'refused ({type(e).__name__}: {str(e)[:80]})'
        dt = time.perf_counter() - t
        try: P = f'{norm_product(m, shape):.6f}'
        except Exception as e: P = f'not a chain' if 'not a chain' in str(e) else f'refused'
        if name.startswith('Linear'):
            P = f"{(torch.linalg.matrix_norm(m[1].weight, 2) * torch.linalg.matrix_norm(m[3].weight, 2)).item():.6f} (SVDs)"
        a = ascent(m, shape)
        r = f'{float(L) / a:.3f}' if L[0].isdigit() else '—'
        lines.append(f'| {name} | {L} | {P} | {a:.6f} | {r} | {dt:.1f} |')
        print(lines[-1], flush=True)
    text = ("# The certificate on Lipschitz-network libraries\n\n`python bench/peers.py` (deel-torchlip 1.0.5, orthogonium "
            f"0.0.4, torch {torch.__version__}, 2 CPU cores): untrained networks, seed 0.\n\n" + '\n'.join(lines) + '\n')
    if out: open(out, 'w').write(text)

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default='bench/results/peers.md')
    main(ap.parse_args().out)
