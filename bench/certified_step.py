"""Cost of a certified-margin training step (`regularizers.CertifiedMargin`, one power step per layer) relative to the
plain cross-entropy step on the same network and batch: the 4C3F MinMax network and the paper CNN, MNIST-shaped
batches. Both steps are `runs.train_step` (forward, loss, penalty, backward, SGD step), timed round-robin in one
process by `runs.step_times` (medians, and the median of the per-round ratios); the aten ops dispatched and the
host reads per step are counted once after warm-up (`core.DispatchCounter`).

    OMP_NUM_THREADS=2 python bench/certified_step.py [--batch 256] [--reps 15] [--threads 2] [--device cpu]
"""
import argparse, os, platform
import torch
from jacmargin.core import DispatchCounter
from jacmargin.models import make_model
from jacmargin.regularizers import CertifiedMargin
from jacmargin.runs import train_step, step_times

def main(a):
    torch.set_num_threads(a.threads)
    dev = torch.device(a.device)
    rows = []
    for name, kw in (('cnn_4c3f', {'act': 'minmax'}), ('paper_cnn', {})):
        torch.manual_seed(0)
        m = make_model(name, **kw).to(dev)
        x, y = torch.rand(a.batch, 1, 28, 28, device=dev), torch.randint(0, 10, (a.batch,), device=dev)
        opt = torch.optim.SGD(m.parameters(), 1e-3, momentum=0.9)
        reg = CertifiedMargin(eps=1.58)
        reg.bind(m, x)                                       # once per training run: the certificate's rows
        steps = {'plain': train_step(m, opt, x, y), 'certified margin': train_step(m, opt, x, y, reg, 1.)}
        t = step_times(steps, reps=a.reps, device=dev)
        for k, s in steps.items():
            with DispatchCounter() as c: s()
            t.loc[t.case == k, 'ops'] = c.total
            t.loc[t.case == k, 'host_reads'] = sum(c.host_reads.values())
        t.insert(0, 'model', name)
        rows.append(t)
        print(t.to_string(index=False, float_format='%.3f'), flush=True)
    import pandas as pd
    df = pd.concat(rows)
    where = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {a.threads} torch threads" \
        if dev.type == 'cpu' else torch.cuda.get_device_name(dev)
    if a.out:
        df.to_csv(a.out, index=False, float_format='%.4g')
        from jacmargin.experiment import markdown_table
        with open(a.out.replace('.csv', '.md'), 'w') as f:
            f.write(f"# Certified-margin step vs plain step\n\n`{' '.join(['python bench/certified_step.py'] + a.argv)}` — "
                    f"batch {a.batch}, {a.reps} rounds, {where}, torch {torch.__version__}.\n\n"
                    + markdown_table(df.round(3)) + '\n')

if __name__ == '__main__':
    import sys
    ap = argparse.ArgumentParser()
    ap.add_argument('--batch', type=int, default=256)
    ap.add_argument('--reps', type=int, default=15)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--device', default='cpu')
    ap.add_argument('--out', default='bench/results/certified_step.csv')
    a = ap.parse_args()
    a.argv = sys.argv[1:]
    main(a)
