"""Device check: every engine / regularizer / margin quantity on a GPU (float32, TF32 on globally) against the CPU in
float64, for every model family of `jacmargin.models`, then the Table VI step costs on the same device. One table each.

Run on a machine with a GPU:  python bench/device_check.py [--device cuda] [--no-timing] [--out DIR]
Without CUDA it checks the CPU in float32 (what the GPU must match) and says so.
Tolerances: Jacobians, norms, values and bounds 1e-5; regularizer gradients 1e-4 (relative, whole tensor).
"""
import argparse, platform, sys, tempfile
import pandas as pd
import torch
from jacmargin.devicecheck import small_models, device_agreement
from jacmargin.cli import experiments

def device_name(device) -> str:
    d = torch.device(device)
    if d.type == 'cuda': return f"{torch.cuda.get_device_name(d)} (CUDA {torch.version.cuda})"
    return f"CPU {platform.processor() or platform.machine()}"

def agreement(device, tf32:bool=True) -> tuple[pd.DataFrame, bool]:
    "Max relative error per quantity (rows) and model family (columns), and whether every tolerance holds."
    if torch.device(device).type == 'cuda' and tf32:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True   # the rule must hold anyway
    frames, refusals = [], []
    for name, (model, shape) in small_models().items():
        d = device_agreement(model, shape, device)
        refusals += [f"{name}: {n}" for n in d.note.unique() if n]
        frames.append(d.groupby('quantity', sort=False).rel_error.max().rename(name))
    t = pd.concat(frames, axis=1)
    grads = t.index.str.endswith('gradient')
    # NaN: refused on both devices (reason printed below); inf: refused on one only, a failure; other errors raise
    within = lambda part, tol: bool(((part <= tol) | part.isna()).all().all())
    ok = within(t[~grads], 1e-5) and within(t[grads], 1e-4)
    for r in refusals: print(f"refused (by design): {r}")
    return t, ok

def main(device:str='cuda', timing:bool=True, out:str|None=None):
    if torch.device(device).type == 'cuda' and not torch.cuda.is_available():
        print("No CUDA device: checking the CPU in float32 instead (the GPU rows are unmeasured)."); device = 'cpu'
    print(f"device: {device_name(device)}, torch {torch.__version__}, python {sys.version.split()[0]}")
    t, ok = agreement(device)
    with pd.option_context('display.width', 200, 'display.max_columns', 20, 'display.float_format', '{:.1e}'.format):
        print(f"\nrelative error on {device} (float32) against the CPU (float64), max over BN eval/train modes:\n{t}")
    print(f"\nall within tolerance: {ok}")
    if timing:
        table6 = experiments()['sokolic2017-table6']        # by its command-line name: bench/ imports no paper
        res = table6(scale='paper', out=out or tempfile.mkdtemp(), device=device, progress=False)
        tab = res['table'] if isinstance(res, dict) and 'table' in res else res
        print(f"\nTable VI step costs on {device_name(device)}:\n{tab}")
    return ok

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--device', default='cuda'); p.add_argument('--no-timing', action='store_true')
    p.add_argument('--out', default=None, help='folder for the Table VI result (default: a temporary folder)')
    a = p.parse_args()
    sys.exit(0 if main(a.device, not a.no_timing, a.out) else 1)
