"""Pilot runs for choosing a zoo grid: does a network of a given grid point reach the stopping criterion?

Trains single points of a `jacmargin.papers.zoo.Zoo` grid without the measures (only what convergence needs) and appends
one row per network to a CSV: the point, the schedule, `reached`, `epochs`, the final training cross-entropy and
accuracy, the test accuracy and the seconds it took. The hardest corners of a candidate grid (largest training set,
smallest learning rate, largest Jacobian factor, narrowest and deepest networks) tell, before hours of training,
whether the grid lets its networks reach the criterion.

    python tools/zoo_pilot.py --out nbs/results/zoo-pilot/pilot.csv --grid v1 --cnn-narrow 8 \
        cnn,deep,narrow,0.01,0.01,2000,64,0.1,0

A point is `family,depth,width,lr,jr,n_train,batch_size,label_noise,weight_decay`. `--grid v1` starts from
`ZOO_CPU_V1` (constant learning rate, `--max-epochs` cap), `--grid cpu` from `ZOO_CPU` (`--max-steps`, `--decay`).
"""
import argparse, time
from dataclasses import replace
from pathlib import Path
import pandas as pd
from jacmargin.papers.zoo import ZOO_CPU, ZOO_CPU_V1, zoo_config
from jacmargin.runs import run

FIELDS = ('family', 'depth', 'width', 'lr', 'jr', 'n_train', 'batch_size', 'label_noise', 'weight_decay')

def point(spec:str) -> dict:
    vals = spec.split(',')
    if len(vals) != len(FIELDS): raise SystemExit(f"{spec!r}: give {len(FIELDS)} values: {','.join(FIELDS)}")
    kind = (str, str, str, float, float, int, int, float, float)
    return {f: k(v) for f, k, v in zip(FIELDS, kind, vals)}

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('points', nargs='+', help=','.join(FIELDS))
    ap.add_argument('--out', required=True, help='CSV to append the rows to')
    ap.add_argument('--grid', choices=('v1', 'cpu'), default='cpu')
    ap.add_argument('--cnn-narrow', type=int, default=None, help='channels of the narrow CNN (default: the grid\'s)')
    ap.add_argument('--max-epochs', type=int, default=None)
    ap.add_argument('--max-steps', type=int, default=None)
    ap.add_argument('--decay', type=float, default=None)
    ap.add_argument('--device', default='cpu')
    a = ap.parse_args()
    zoo = ZOO_CPU_V1 if a.grid == 'v1' else ZOO_CPU
    kw = {k: v for k, v in (('max_epochs', a.max_epochs), ('max_steps', a.max_steps), ('decay', a.decay)) if v is not None}
    if a.cnn_narrow: kw['widths'] = tuple((f, a.cnn_narrow, w) if f == 'cnn' else (f, n, w) for f, n, w in zoo.widths)
    zoo = replace(zoo, **kw)
    out = Path(a.out); out.parent.mkdir(parents=True, exist_ok=True)
    for spec in a.points:
        p = dict(point(spec), seed=0)
        cfg = replace(zoo_config(zoo, p), stats=('accuracy',), measures=())
        t = time.time(); r = run(cfg, device=a.device, on_diverge='record')
        row = dict(p, grid=a.grid, cnn_narrow=dict((f, n) for f, n, _ in zoo.widths)['cnn'], schedule=str(cfg.lr_pairs),
                   reached=r['reached'], epochs=r['epochs'], train_loss=round(r['train_loss'], 5),
                   train_acc=r['train_acc'], acc=r['acc'], seconds=round(time.time() - t, 1))
        print(row, flush=True)
        pd.DataFrame([row]).to_csv(out, mode='a', header=not out.exists(), index=False)
