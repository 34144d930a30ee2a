"""Seconds per point of `local_margin` with today's code against an earlier revision's, side by side in one process
(alternating, medians of repeats), so that both see the same load: the paper CNN (untrained, MNIST-sized random
inputs) and the digits CNN of `bench/local_bn.py` with batch norm and skips (trained 400 steps), each as a whole call
and with the global bound passed in (`log_lipschitz`, computed once outside the timing); with `--resnet`, also the
PreAct-ResNet-18 of `bench/local_margin.py` (32 px, untrained, in float64, 4 points, the global bound passed in, one
repeat).

    OMP_NUM_THREADS=1 python bench/local_cost.py [--old 05a877b] [--repeats 5] [--resnet]
"""
import argparse, importlib.util, subprocess, sys, time, warnings
from pathlib import Path
import torch
warnings.filterwarnings('ignore')

def old_module(rev:str):
    "jacmargin/local.py as it was at `rev`, imported beside today's (its relative imports resolved in jacmargin)."
    src = subprocess.run(['git', 'show', f'{rev}:jacmargin/local.py'], capture_output=True, text=True, check=True).stdout
    import jacmargin
    p = Path(jacmargin.__file__).parent / '_local_bench_old.py'
    p.write_text(src)
    try:
        spec = importlib.util.spec_from_file_location('jacmargin._local_bench_old', p)
        m = importlib.util.module_from_spec(spec); sys.modules[spec.name] = m; spec.loader.exec_module(m)
    finally: p.unlink()
    return m

def main(old:str='05a877b', repeats:int=5, resnet:bool=False):
    import jacmargin as jm
    from jacmargin import local as new
    sys.path.insert(0, str(Path(__file__).parent))
    from local_bn import Net
    import torch.nn.functional as F
    from sklearn.datasets import load_digits
    torch.set_num_threads(1)
    prev = old_module(old)
    torch.manual_seed(0)
    cnn = jm.make_model('paper_cnn').eval().requires_grad_(False)
    xc = torch.rand(8, 1, 28, 28); yc = cnn(xc).argmax(1)
    X, Y = load_digits(return_X_y=True)
    X, Y = torch.tensor(X / 16., dtype=torch.float32).reshape(-1, 1, 8, 8), torch.tensor(Y)
    torch.manual_seed(0); m = Net(True, True)
    opt = torch.optim.Adam(m.parameters(), 1e-3)
    for _ in range(400):
        i = torch.randint(0, 1500, (64,)); loss = F.cross_entropy(m(X[i]), Y[i]); opt.zero_grad(); loss.backward(); opt.step()
    m.eval().requires_grad_(False)
    xd, yd = X[1500:1532], Y[1500:1532]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread; old = {old}")
    cases = [('paper CNN (untrained, 8 points)', cnn, xc, yc, repeats),
             ('digits CNN, batch norm + skips (32 points)', m, xd, yd, repeats)]
    if resnet:
        from local_margin import preact
        r, xr, yr = preact(4)             # in float64: an untrained float32 network's logit gaps are within its
        cases.append(('PreAct-ResNet-18, 32 px (untrained, float64, 4 points)', r.double(), xr.double(), yr, 1))
        #                                    rounding, where the new code certifies 0 and the search does not run
    for name, mod, x, y, reps in cases:
        lL = jm.certify.lipschitz_log_bounds(mod, tuple(x.shape[1:]))[0]
        for how, kw in (('whole call', {}), ('global bound passed in', {'log_lipschitz': lL})):
            if 'ResNet' in name and not kw: continue
            T, R = {'new': [], 'old': []}, {}
            for _ in range(reps):
                for k, f in (('old', prev.local_margin), ('new', new.local_margin)):
                    t = time.perf_counter(); R[k] = f(mod, x, y, **kw); T[k].append((time.perf_counter() - t) / len(x))
            med = {k: sorted(v)[len(v) // 2] for k, v in T.items()}
            pos = R['old'] > 0
            ratio = (R['new'][pos] / R['old'][pos]).median().item() if bool(pos.any()) else float('nan')
            print(f"{name}, {how}: s / point old {med['old']:.4f}, new {med['new']:.4f}, "
                  f"new / old {med['new'] / med['old']:.2f}; radii new / old (median) {ratio:.3f}", flush=True)

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--old', default='05a877b'); ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--resnet', action='store_true')
    main(**vars(ap.parse_args()))
