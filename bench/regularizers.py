"""Cost of a training step with each Jacobian regularizer relative to the plain cross-entropy step (issues 5, 14).

Run: OMP_NUM_THREADS=1 python bench/regularizers.py [--batch 128] [--reps 25] [--threads 1] [--device cpu]
                                                    [--resnet none|reduced|full] [--malloc retain|default]
A step is forward, loss, regularizer, backward and an SGD step. All cases run round-robin in one process
(repetition r runs every case once), so slow drifts of a shared machine hit all cases alike; medians are
printed, with the ratio to the plain step of the same repetition round. The step and the timer are
`train_step` and `step_times` of `jacmargin.papers.sokolic2017` (Table VI uses them too).

`--malloc retain` (the default on Linux/glibc) makes glibc keep freed memory instead of returning it to the
system: with glibc's defaults a step's large tensors are sometimes fresh pages from the kernel (a page fault
per 4 KiB) and sometimes reused, depending on the allocation history of the process (measured: the plain
paper-CNN step had 0 or ~6900 minor page faults per step in two runs of this script), which makes CPU
ratios jump by ±0.3. `--malloc default` measures glibc as it comes. CUDA devices have a caching allocator.
`--resnet reduced` adds the pre-activation ResNet-18 of Table VI (widths 16-128, 64 px, batch 32, 1000
classes); `--resnet full` the ImageNet one (224 px, batch 32, 1000 classes: for a GPU).
"""
import argparse, ctypes, os, platform, resource
import torch
from jacmargin.models import PaperCNN, make_model
from jacmargin.regularizers import JacobianRegularizer, SpectralJacobianRegularizer, PerLayerJacobianRegularizer
from jacmargin.papers.sokolic2017 import train_step, step_times
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
    if resnet == 'reduced':
        out.append(('ResNet-18 (16-128), 64 px', res(widths=(16, 32, 64, 128)), (3, 64, 64), 32, 1000))
    elif resnet == 'full': out.append(('ResNet-18, 224 px', res(), (3, 224, 224), 32, 1000))
    return out

def main(batch=128, reps=25, device='cpu', resnet='none', malloc='retain'):
    torch.manual_seed(0)
    dev = torch.device(device)
    mem = (('glibc retains freed memory' if retain_freed_memory() else 'glibc defaults (mallopt failed)')
           if malloc == 'retain' and dev.type == 'cpu' else 'allocator defaults')
    name = torch.cuda.get_device_name(dev) if dev.type == 'cuda' else (platform.processor() or platform.machine())
    print(f"machine: {name}, {os.cpu_count()} CPU cores, torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"device {device}, {mem}, median of {reps} steps, round-robin; load average {os.getloadavg()[0]:.2f}")
    for mname, model, shape, b, n_cls in models(batch, resnet):
        model = model.to(dev)
        x, y = torch.rand(b, *shape, device=dev), torch.randint(0, n_cls, (b,), device=dev)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t = step_times({k: train_step(model, opt, x, y, r) for k, r in cases(n_cls <= 10).items()}, reps=reps, warmup=2,
                       device=dev)
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / ((reps + 2) * len(t))
        print(f"\n{mname}, batch {b}: plain step {t.ms[0]:.1f} ms ({faults:.0f} minor page faults per step)")
        print(f"{'':30} {'ms':>8} {'× plain':>8} {'ratio per round':>16}")
        for r in t.itertuples():
            print(f"{r.case:30} {r.ms:8.1f} {r.x_plain:8.2f} {r.x_plain_per_round:16.2f}")
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")

if __name__ == '__main__':
    p = argparse.ArgumentParser(); p.add_argument('--batch', type=int, default=128)
    p.add_argument('--reps', type=int, default=25); p.add_argument('--threads', type=int, default=0)
    p.add_argument('--device', default='cpu')
    p.add_argument('--resnet', default='none', choices=['none', 'reduced', 'full'])
    p.add_argument('--malloc', default='retain', choices=['retain', 'default'])
    a = p.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    main(a.batch, a.reps, a.device, a.resnet, a.malloc)
