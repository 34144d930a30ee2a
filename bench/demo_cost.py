"""What the certified local margin adds to `jacmargin demo`'s wall time.

The demo trains the paper CNN twice (weight decay, Jacobian regularization) and measures the margin sandwich of
200 test points per model. This script times, in one run, the parts of that pipeline: each training (once: it is
the same with or without γ_local) and the demo's sandwich (`margin_lower_bounds(..., gamma1=False, local=...)`
and the attack, `input_margin`) without and with γ_local, `--repeats` times each, alternating (medians; γ_local's
cost is the difference of each pair). The demo's time without γ_local is the trainings plus the sandwich; with it,
plus γ_local. Run it on an otherwise idle machine.

    python bench/demo_cost.py [--n 200] [--repeats 3] [--out bench/results/demo_cost.csv]
"""
import argparse, platform, statistics, time, os
import pandas as pd
import torch

def main(n:int, repeats:int, epochs:int, out:str|None):
    from jacmargin.cli import _demo_runs, demo_data
    from jacmargin.runs import run, run_data
    from jacmargin.margins import margin_lower_bounds, input_margin
    from jacmargin.experiment import markdown_table
    dataset, kw = demo_data(None)
    rows = []
    for reg, cfg in _demo_runs(dataset, kw, 1000, epochs, 0, 0).items():
        t = time.perf_counter()
        res, model = run(cfg, device='cpu', progress=False, return_model=True)
        train = time.perf_counter() - t
        test = run_data(cfg, None)[2]
        idx = torch.randperm(len(test), generator=torch.Generator().manual_seed(0))[:n]
        x, y = test.x[idx], test.y[idx]
        base, full = [], []
        for _ in range(repeats):                        # the demo's `margin_sandwich`, without and with γ_local
            for local, ts in ((False, base), (True, full)):
                t = time.perf_counter()
                lb = margin_lower_bounds(model, x, y, gamma1=False, local=local)
                input_margin(model, x, y)
                ts.append(time.perf_counter() - t)
        loc = [b - a for a, b in zip(base, full)]
        g = lb['gamma_local']
        rows.append(dict(model=reg, test_acc=res['acc'], train_s=train, sandwich_s=statistics.median(base),
                         sandwich_local_s=statistics.median(full),
                         local_s=statistics.median(loc), local_s_per_point=statistics.median(loc) / n,
                         gamma_local_median=float(g[lb['score'] > 0].double().quantile(.5))))
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    without = df.train_s.sum() + df.sandwich_s.sum()
    added = df.local_s.sum()
    machine = f"{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, {torch.get_num_threads()} thread(s)"
    print(df.round(4).to_string(index=False))
    print(f"demo without γ_local {without:.0f} s, γ_local adds {added:.0f} s: +{100 * added / without:.0f} % ({machine})")
    if out:
        df.assign(machine=machine).to_csv(out, index=False)
        with open(out.replace('.csv', '.md'), 'w') as f:
            f.write(f"# What γ_local adds to `jacmargin demo`\n\n`python bench/demo_cost.py --n {n} --repeats {repeats}`"
                    f" ({machine}; margin parts: median of {repeats}).\n\n{markdown_table(df.round(4))}\n\n"
                    f"The demo without γ_local: {without:.0f} s (trainings + sandwich); γ_local adds {added:.0f} s, "
                    f"+{100 * added / without:.0f} %.\n")

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--n', type=int, default=200)
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--epochs', type=int, default=120)
    p.add_argument('--out', default=None)
    a = p.parse_args()
    main(a.n, a.repeats, a.epochs, a.out)
