"""A padding mode before a convolution: the certified bound of one padded conv (16 → 16 channels, 3×3, torch's init,
seed 0, float64) over its norm, this checkout against another (`--old PATH`, e.g. a worktree of an earlier commit),
side by side in one run (the other checkout in a subprocess per bound); seconds per bound, after a warm-up export. The norm: the largest singular value of the dense float64 matrix where it
has at most 2^26 entries, else a converged Lanczos value (a lower value, so the ratio over-states the gap).

    OMP_NUM_THREADS=1 python bench/padded_conv.py [--old /path/to/checkout] [--out bench/results/padded_conv.md]
"""
import argparse, json, math, os, subprocess, sys, time, warnings
import torch
warnings.filterwarnings('ignore')
CASES = [(mode, c, n) for mode in ('reflect', 'replicate', 'circular', 'zeros') for c, n in ((3, 32), (16, 8), (16, 16), (16, 24))]

def _model(mode, c, n):
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(c, 16, 3, padding=1, padding_mode=mode).double()
    return conv, torch.nn.Sequential(conv, torch.nn.Flatten()).eval()

def one(mode, c, n) -> dict:
    import jacmargin as jm
    jm.lipschitz_bound(torch.nn.Sequential(torch.nn.Conv2d(1, 1, 3), torch.nn.Flatten()).double(), (1, 5, 5))  # warm-up
    _, m = _model(mode, c, n)
    t = time.perf_counter(); b = jm.lipschitz_bound(m, (c, n, n)); s = time.perf_counter() - t
    return dict(bound=b, seconds=s)

def norm(mode, c, n) -> tuple:
    conv, m = _model(mode, c, n)
    D = c * n * n
    if D * 16 * n * n <= 2 ** 26:
        J = torch.func.jacrev(lambda v: m(v[None])[0])(torch.zeros(c, n, n, dtype=torch.float64)).reshape(-1, D)
        return torch.linalg.matrix_norm(J, 2).item(), 'dense SVD'
    from jacmargin.operators import operator_norm
    return operator_norm(conv, (c, n, n), tol=1e-10), 'Lanczos'

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--old'); ap.add_argument('--out', default='bench/results/padded_conv.md'); ap.add_argument('--one')
    a = ap.parse_args()
    if a.one:
        mode, c, n = a.one.split(','); print(json.dumps(one(mode, int(c), int(n)))); sys.exit()
    rows = []
    for mode, c, n in CASES:
        new = one(mode, c, n)
        ref, kind = norm(mode, c, n)
        r = dict(padding=mode, input=f'{c}x{n}x{n}', norm_from=kind, new_over_norm=new['bound'] / ref, new_seconds=new['seconds'])
        if a.old:
            out = subprocess.run([sys.executable, __file__, '--one', f'{mode},{c},{n}'], capture_output=True, text=True,
                                 cwd=a.old, env=dict(os.environ, PYTHONPATH=a.old))
            old = json.loads(out.stdout.strip().splitlines()[-1])
            r |= dict(old_over_norm=old['bound'] / ref, old_seconds=old['seconds'])
        rows.append(r); print(r, flush=True)
    import pandas as pd
    df = pd.DataFrame(rows)
    head = (f"x86_64, {os.cpu_count()} CPU cores, torch {torch.__version__}, {torch.get_num_threads()} torch thread(s); "
            f"`{' '.join(['python'] + sys.argv)}`\n\n")
    fmt = lambda k, v: (f'{v:.6f}' if 'over' in k else f'{v:.2f}') if isinstance(v, float) else str(v)
    cols = ['padding', 'input', 'norm from', 'new / norm', 'new seconds'] + (['old / norm', 'old seconds'] if a.old else [])
    table = '\n'.join(['| ' + ' | '.join(cols) + ' |', '|---' * len(cols) + '|'] +
                      ['| ' + ' | '.join(fmt(k, v) for k, v in r.items()) + ' |' for r in rows])
    open(a.out, 'w').write("# Padded convolutions: certified bound / norm\n\n" + head + table + '\n')
    print(df.to_string(index=False))
