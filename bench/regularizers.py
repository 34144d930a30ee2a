"""Cost of a training step with each Jacobian regularizer relative to the plain cross-entropy step (issues 5, 14).

Run: OMP_NUM_THREADS=1 python bench/regularizers.py [--batch 128] [--reps 25] [--threads 1] [--device cpu]
                                                    [--resnet none|small|reduced|full] [--malloc retain|default] [--profile N]
                                                    [--bf16] [--ops-only] [--graph]
A step is forward, loss, regularizer, backward and an SGD step. All cases run round-robin in one process
(repetition r runs every case once), so slow drifts of a shared machine hit all cases alike; medians are
printed, with the ratio to the plain step of the same repetition round. The step and the timer are
`train_step` and `step_times` of `jacmargin.runs` (Table VI uses them too).

`--malloc retain` (the default on Linux/glibc) makes glibc keep freed memory instead of returning it to the
system: with glibc's defaults a step's large tensors are sometimes fresh pages from the kernel (a page fault
per 4 KiB) and sometimes reused, depending on the allocation history of the process (measured: the plain
paper-CNN step had 0 or ~6900 minor page faults per step in two runs of one timing script), which makes CPU
ratios jump by ±0.3. `--malloc default` measures glibc as it comes. CUDA devices have a caching allocator.
`--profile N` also prints the ops with the largest self time per step (torch.profiler, N consecutive
steps of each case, exact R_F and the class loop left out). `--resnet reduced` adds the pre-activation
ResNet-18 of Table VI (widths 16-128, 64 px, batch 32, 1000 classes); `--resnet full` the ImageNet one (224 px,
batch 32, 1000 classes: for a GPU). `--bf16` times every case a second time under bf16 autocast, side by side
with the fp32 steps (ratios to the plain fp32 step; autocast's weight cache off, as a captured step needs).
Every table also has the aten ops dispatched per step and the host reads per step (`jacmargin.core.DispatchCounter`, counted on one step after warm-up): the op count is the CPU proxy for
GPU kernel launches, a host read makes a GPU wait. `--ops-only` prints the counts without timing (seconds on a CPU).
`--graph` (CUDA only) also times every step captured in a CUDA graph and replayed (`torch.cuda.graph` after three
warm-up steps on a side stream, as `Learner(cuda_graph=True)` does): ratios to the graphed plain step and to the eager
plain step. A case whose capture fails is printed with the error.
"""
import argparse, ctypes, os, platform, resource
import torch
from jacmargin.core import DispatchCounter
from jacmargin.models import PaperCNN, make_model
from jacmargin.regularizers import JacobianRegularizer, SpectralJacobianRegularizer, PerLayerJacobianRegularizer
from jacmargin.runs import train_step, step_times
from torch import nn

def mlp():
    "The 784-784-784-10 ReLU network of Sokolić et al. 2017 (Fig. 3)."
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 784), nn.ReLU(), nn.Linear(784, 784), nn.ReLU(),
                         nn.Linear(784, 10))

class ClassLoop:
    "The obvious exact R_F a user would write: one autograd.grad(create_graph=True) per class."
    needs_input_grad, needs_taps, needs_index = True, False, False
    def __call__(self, model, x, y, logits):
        p = logits.softmax(-1); r = 0.
        for k in range(p.shape[1]):
            g, = torch.autograd.grad(p[:, k].sum(), x, create_graph=True)
            r = r + g.pow(2).sum() / len(x)
        return r

def cpu_name() -> str:
    "The CPU's model name (/proc/cpuinfo), else what `platform` knows."
    try: return next(l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name'))
    except (OSError, StopIteration): return platform.processor() or platform.machine()

def retain_freed_memory() -> bool:
    "glibc: keep freed memory (no trimming, large blocks from the heap up to 32 MiB): steady-state CPU timings."
    try:
        libc = ctypes.CDLL('libc.so.6')
        return bool(libc.mallopt(-1, 1 << 30)) and bool(libc.mallopt(-3, 32 << 20))   # M_TRIM_, M_MMAP_THRESHOLD
    except OSError: return False

def cases(small:bool):
    "The regularizers timed (exact R_F and the class loop only for 10-class models)."
    c = {'plain cross-entropy': None,
         'per-layer (eq. 52, one-hot)': PerLayerJacobianRegularizer(),
         'R_F one_hot': JacobianRegularizer(method='one_hot'),
         'R_F projection n=1': JacobianRegularizer(method='projection')}
    if small: c.update({'R_F exact': JacobianRegularizer(method='exact'), 'R_F obvious class loop': ClassLoop()})
    c['R_J spectral, 1 warm step'] = SpectralJacobianRegularizer(n_iter=1)
    return c

def models(batch:int, resnet:str):
    "(name, model, input shape, batch, classes) of every model timed."
    out = [('paper CNN', PaperCNN(), (1, 28, 28), batch, 10), ('MLP 784-784-784-10', mlp(), (1, 28, 28), batch, 10)]
    res = lambda **kw: make_model('preact_resnet18', stem='imagenet', n_classes=1000, **kw)
    if resnet == 'small':                                   # the op-count model: widths 4-8-8-8, 32 px, 10 classes
        out.append(('ResNet-18 (4-8-8-8), 32 px', make_model('preact_resnet18', stem='cifar', n_classes=10,
                                                             widths=(4, 8, 8, 8)), (3, 32, 32), 32, 10))
    elif resnet == 'reduced':
        out.append(('ResNet-18 (16-128), 64 px', res(widths=(16, 32, 64, 128)), (3, 64, 64), 32, 1000))
    elif resnet == 'full': out.append(('ResNet-18, 224 px', res(), (3, 224, 224), 32, 1000))
    return out

def profile_table(steps:dict, n:int, top:int=14) -> str:
    "Self time per step of the top ops of each step closure (torch.profiler, `n` consecutive steps after 2 warm-up)."
    from torch.profiler import profile, ProfilerActivity
    res = {}
    for k, s in steps.items():
        s(); s()
        acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
        with profile(activities=acts) as p:
            for _ in range(n): s()
        res[k] = {e.key: (e.self_cpu_time_total / n / 1e3, e.count // n) for e in p.key_averages()}
    keys = sorted(set().union(*res.values()), key=lambda o: -max(r.get(o, (0, 0))[0] for r in res.values()))[:top]
    w = max(len(k) for k in res) + 2
    rows = [f"{'op: self CPU ms per step (calls)':44}" + ''.join(f'{k[:w - 2]:>{w}}' for k in res)]
    cell = lambda r, o: f'{r.get(o, (0, 0))[0]:.2f} ({r.get(o, (0, 0))[1]})'
    rows += [f'{o[:44]:44}' + ''.join(f'{cell(r, o):>{w}}' for r in res.values()) for o in keys]
    rows.append(f"{'total':44}" + ''.join(f'{sum(v[0] for v in r.values()):>{w}.2f}' for r in res.values()))
    return '\n'.join(rows)

def op_counts(steps:dict) -> dict:
    "(aten ops, host reads) dispatched by one call of each step closure (after the warm-up calls)."
    out = {}
    for k, s in steps.items():
        with DispatchCounter() as dc: s()
        out[k] = (dc.total, sum(dc.host_reads.values()))
    return out

def graphed(step, device):
    "`step` captured in a CUDA graph after three warm-up calls on a side stream: calling the result replays it."
    cur, side = torch.cuda.current_stream(device), torch.cuda.Stream(device)
    side.wait_stream(cur)
    with torch.cuda.stream(side):
        for _ in range(3): step()
    cur.wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g): step()
    return g.replay

def graph_table(steps:dict, eager_plain_ms:float, reps:int, device) -> str:
    "Median replay time of each step closure captured in a CUDA graph, beside its ratios (rows: cases)."
    gs, failed = {}, {}
    for k, s in steps.items():
        if 'loop' in k: continue
        try: gs[k] = graphed(s, device)
        except Exception as e: failed[k] = f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"
    t = step_times(gs, reps=reps, warmup=2, device=device)
    rows = [f"{'':37} {'graphed ms':>11} {'× graphed plain':>16} {'× eager plain':>14}"]
    rows += [f"{r.case:37} {r.ms:11.2f} {r.x_plain:16.2f} {r.ms / eager_plain_ms:14.2f}" for r in t.itertuples()]
    rows += [f"{k:37} capture failed: {e}" for k, e in failed.items()]
    return '\n'.join(rows)

def under_bf16(step, device):
    "The step closure run under bf16 autocast on `device`'s type."
    def f():
        with torch.autocast(torch.device(device).type, dtype=torch.bfloat16, cache_enabled=False): step()
    return f

def main(batch=128, reps=25, device='cpu', resnet='none', malloc='retain', prof=0, bf16=False, ops_only=False,
         graph=False):
    torch.manual_seed(0)
    dev = torch.device(device)
    if graph and dev.type != 'cuda': raise SystemExit("--graph captures CUDA graphs: use it with --device cuda.")
    mem = (('glibc retains freed memory' if retain_freed_memory() else 'glibc defaults (mallopt failed)')
           if malloc == 'retain' and dev.type == 'cpu' else 'allocator defaults')
    name = torch.cuda.get_device_name(dev) if dev.type == 'cuda' else cpu_name()
    print(f"machine: {name}, {os.cpu_count()} CPU cores, torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"device {device}, {mem}, median of {reps} steps, round-robin; load average {os.getloadavg()[0]:.2f}")
    for mname, model, shape, b, n_cls in models(batch, resnet):
        model = model.to(dev)
        x, y = torch.rand(b, *shape, device=dev), torch.randint(0, n_cls, (b,), device=dev)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        steps = {k: train_step(model, opt, x, y, r) for k, r in cases(n_cls <= 10).items()}
        if bf16: steps.update({f'{k} [bf16]': under_bf16(train_step(model, opt, x, y, r), dev)
                               for k, r in cases(n_cls <= 10).items() if 'loop' not in k})
        if ops_only:
            for s in steps.values(): s()
            ops = op_counts(steps)
            print(f"\n{mname}, batch {b}: aten ops and host reads per step")
            print(f"{'':37} {'ops':>8} {'× plain':>8} {'host reads':>11}")
            for k, (n, h) in ops.items(): print(f"{k:37} {n:8d} {n / ops[next(iter(ops))][0]:8.2f} {h:11d}")
            continue
        t = step_times(steps, reps=reps, warmup=2, device=dev)
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / ((reps + 2) * len(t))
        ops = op_counts(steps)
        print(f"\n{mname}, batch {b}: plain step {t.ms[0]:.1f} ms ({faults:.0f} minor page faults per step)")
        print(f"{'':37} {'ms':>8} {'× plain':>8} {'ratio per round':>16} {'aten ops':>9} {'host reads':>11}")
        for r in t.itertuples():
            n, h = ops[r.case]
            print(f"{r.case:37} {r.ms:8.1f} {r.x_plain:8.2f} {r.x_plain_per_round:16.2f} {n:9d} {h:11d}")
        if graph:
            print(f"\n{mname}, batch {b}: each step captured in a CUDA graph and replayed")
            print(graph_table(steps, t.ms[0], reps, dev))
        if prof:
            short = {k: k.split(' (')[0].replace(' cross-entropy', '').replace(', 1 warm step', '') for k in steps}
            print(f"\n{mname}: where the time goes ({prof} consecutive steps per case)")
            print(profile_table({short[k]: s for k, s in steps.items() if 'exact' not in k and 'loop' not in k}, prof))
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")

if __name__ == '__main__':
    p = argparse.ArgumentParser(); p.add_argument('--batch', type=int, default=128)
    p.add_argument('--reps', type=int, default=25); p.add_argument('--threads', type=int, default=0)
    p.add_argument('--device', default='cpu')
    p.add_argument('--resnet', default='none', choices=['none', 'small', 'reduced', 'full'])
    p.add_argument('--malloc', default='retain', choices=['retain', 'default'])
    p.add_argument('--profile', type=int, default=0, help='also profile N consecutive steps of each case (0: no)')
    p.add_argument('--bf16', action='store_true', help='also time every case under bf16 autocast')
    p.add_argument('--ops-only', action='store_true', help='print aten ops and host reads per step, no timing')
    p.add_argument('--graph', action='store_true', help='also time every step captured in a CUDA graph (CUDA only)')
    a = p.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    main(a.batch, a.reps, a.device, a.resnet, a.malloc, a.profile, a.bf16, a.ops_only, a.graph)
