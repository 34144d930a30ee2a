"""Certified Lipschitz bound: tightness (bound / largest measured ‖J(x)‖₂) and seconds per bound, for the package's
models. Run with the package on the path; `--old PATH` also runs the same models through another checkout's
`lipschitz_bound` (e.g. a worktree of an earlier commit) in a subprocess, side by side.

    python bench/certify.py [--old /path/to/checkout] [--out bench/results/certify.csv]

`--layers` measures single 3x3 convolutions instead (certified / exact norm, seconds), printed only.
"""
import argparse, json, math, os, subprocess, sys, time, warnings
import torch
warnings.filterwarnings('ignore')

MODELS = {  # name: (constructor source, per-sample input shape)
    'paper_cnn': ("PaperCNN()", (1, 28, 28)),
    'mlp_784x2': ("MLP(784, [784, 784], 10)", (784,)),
    'mlp_784x4': ("MLP(784, [784, 784, 784, 784], 10)", (784,)),
    'preact_resnet18_32px': ("PreActResNet18(10, 3, stem='cifar')", (3, 32, 32)),
}

def _model(src:str):
    from jacmargin.models import PaperCNN, MLP, PreActResNet18
    torch.manual_seed(0)
    m = eval(src).eval()
    if any(isinstance(x, torch.nn.BatchNorm2d) for x in m.modules()):    # non-trivial running statistics
        with torch.no_grad():
            m.train(); m(torch.randn(64, 3, 32, 32)); m.eval()
    return m

def _max_jac(m, shape, n=8) -> float:
    "Largest exact ‖J(x)‖₂ of the logits over n random points (float64)."
    m = m.double()
    from jacmargin.jacobian import jacobian_spectral_norm
    g = torch.Generator().manual_seed(1)
    x = torch.rand(n, *shape, generator=g, dtype=torch.float64)
    return jacobian_spectral_norm(m, x, 'logits').max().item()

LAYERS = [(64, 4, 1), (64, 4, 2), (64, 8, 1), (64, 8, 2), (512, 4, 1), (512, 4, 2), (512, 8, 1), (512, 8, 2)]

def layer(c:int, n:int, s:int) -> dict:
    "A c -> c 3x3 conv (padding 1, stride s, torch's init, seed 0) on c x n x n: certified and circular / exact, seconds."
    from jacmargin.operators import conv_norm_certified, conv_norm_circular, dense_operator, operator_norm
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(c, c, 3, stride=s, padding=1, bias=False).double()
    w, args = conv.weight.detach(), ((n, n), (s, s), (1, 1), (1, 1))
    t = time.perf_counter(); cert = conv_norm_certified(w, *args); t_cert = time.perf_counter() - t
    t = time.perf_counter(); circ = conv_norm_circular(w, *args); t_circ = time.perf_counter() - t
    m = (n + 2 - 3) // s + 1
    if c * n * n * c * m * m <= 2 ** 27:                # the dense float64 matrix: its smaller Gram's top eigenvalue
        A = dense_operator(conv, (c, n, n))
        G = A.T @ A if A.shape[1] <= A.shape[0] else A @ A.T
        exact, kind = math.sqrt(torch.linalg.eigvalsh(G)[-1].item()), 'dense float64'
    else: exact, kind = operator_norm(conv, (c, n, n), tol=1e-9), 'Lanczos (a lower value)'
    return dict(conv=f'{c}->{c} 3x3', input=f'{c}x{n}x{n}', stride=s, certified_over_exact=cert / exact,
                circular_over_exact=circ / exact, exact_from=kind, certified_seconds=t_cert, circular_seconds=t_circ)

def bound(name:str) -> dict:
    "The bound of one model with this checkout's `lipschitz_bound`, and its wall time."
    import jacmargin as jm
    src, shape = MODELS[name]
    m = _model(src)
    t = time.perf_counter(); b = jm.lipschitz_bound(m, shape); s = time.perf_counter() - t
    return dict(model=name, bound=b, seconds=s)

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--old'); ap.add_argument('--out', default='bench/results/certify.csv')
    ap.add_argument('--one'); ap.add_argument('--layers', action='store_true')
    a = ap.parse_args()
    if a.layers:                                        # single convolutions: the certificate's tightness per layer
        import pandas as pd
        rows = []
        for cfg in LAYERS: rows.append(layer(*cfg)); print(rows[-1], flush=True)
        df = pd.DataFrame(rows)
        print(f"torch {torch.__version__}, {os.cpu_count()} CPU cores, {torch.get_num_threads()} torch threads")
        print(df.to_string(index=False)); sys.exit()
    if a.one:                                           # child mode: one model, JSON on stdout
        print(json.dumps(bound(a.one))); sys.exit()
    rows = []
    for name, (src, shape) in MODELS.items():
        new = bound(name)
        row = dict(model=name, max_measured=_max_jac(_model(src), shape), new_bound=new['bound'], new_seconds=new['seconds'])
        if a.old:
            env = dict(os.environ, PYTHONPATH=a.old)
            out = subprocess.run([sys.executable, __file__, '--one', name], env=env, capture_output=True, text=True, cwd=a.old)
            old = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else dict(bound=math.nan, seconds=math.nan)
            row |= dict(old_bound=old['bound'], old_seconds=old['seconds'], new_over_old=new['bound'] / old['bound'])
        row['new_over_measured'] = row['new_bound'] / row['max_measured']
        rows.append(row); print(row, flush=True)
    import pandas as pd
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    df = pd.DataFrame(rows); df.to_csv(a.out, index=False)
    print(f"torch {torch.__version__}, {os.cpu_count()} CPU cores, {torch.get_num_threads()} torch threads")
    print(df.to_string(index=False))
