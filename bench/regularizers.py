"""Cost of a training step with each Jacobian regularizer relative to the plain cross-entropy step (issue 5 targets).

Run: OMP_NUM_THREADS=1 python bench/regularizers.py [--batch 128] [--reps 25] [--threads 1]
A step is forward, loss, regularizer, backward and an SGD step. All cases run round-robin in one process
(repetition r runs every case once), so slow drifts of a shared machine hit all cases alike; medians are
printed, with the ratio to the plain step of the same repetition round. The step and the timer are
`train_step` and `step_times` of `jacmargin.papers.sokolic2017` (Table VI uses them too).
"""
import argparse, os, platform
import torch
from torch import nn
import torch.nn.functional as F
from jacmargin.regularizers import JacobianRegularizer, SpectralJacobianRegularizer, PerLayerJacobianRegularizer
from jacmargin.papers.sokolic2017 import train_step, step_times

def paper_cnn():
    "The MNIST CNN of Sokolić et al. 2017 (Sec. VI-B): two (32,5,5) conv + (2,2) max-pool layers, softmax layer."
    return nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 7 * 7, 10))

def mlp():
    "The 784-784-784-10 ReLU network of Sokolić et al. 2017 (Fig. 3)."
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 784), nn.ReLU(), nn.Linear(784, 784), nn.ReLU(), nn.Linear(784, 10))

class ClassLoop:
    "The obvious exact R_F a user would write: one autograd.grad(create_graph=True) per class."
    needs_input_grad, needs_taps, needs_index = True, False, False
    def __call__(self, model, x, y, logits):
        p = logits.softmax(-1); r = 0.
        for k in range(p.shape[1]):
            g, = torch.autograd.grad(p[:, k].sum(), x, create_graph=True)
            r = r + g.pow(2).sum() / len(x)
        return r

def main(batch=128, reps=25):
    torch.manual_seed(0)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, "
          f"threads {torch.get_num_threads()}, batch {batch}, median of {reps} steps, round-robin")
    for name, model in [('paper CNN', paper_cnn()), ('MLP 784-784-784-10', mlp())]:
        x, y = torch.rand(batch, 1, 28, 28), torch.randint(0, 10, (batch,))
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        cases = {'plain cross-entropy': None,
                 'per-layer (eq. 52, one-hot)': PerLayerJacobianRegularizer(),
                 'R_F one_hot': JacobianRegularizer(method='one_hot'),
                 'R_F projection n=1': JacobianRegularizer(method='projection'),
                 'R_F exact': JacobianRegularizer(method='exact'),
                 'R_F obvious class loop': ClassLoop(),
                 'R_J spectral, 1 warm step': SpectralJacobianRegularizer(n_iter=1)}
        t = step_times({k: train_step(model, opt, x, y, r) for k, r in cases.items()}, reps=reps, warmup=2)
        print(f"\n{name}: plain step {t.ms[0]:.1f} ms")
        print(f"{'':30} {'ms':>8} {'× plain':>8} {'ratio per round':>16}")
        for r in t.itertuples():
            print(f"{r.case:30} {r.ms:8.1f} {r.x_plain:8.2f} {r.x_plain_per_round:16.2f}")

if __name__ == '__main__':
    p = argparse.ArgumentParser(); p.add_argument('--batch', type=int, default=128)
    p.add_argument('--reps', type=int, default=25); p.add_argument('--threads', type=int, default=0)
    a = p.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    main(a.batch, a.reps)
