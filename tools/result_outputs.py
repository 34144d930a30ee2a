"""The saved outputs of the notebooks' result cells must show the committed results.

A result cell reads committed files under nbs/results/ (a `Path('results/...')` in its source) to show a table or a
figure, without training. The docs site, README.md (from nbs/index.ipynb) and GitHub show the outputs saved in the
notebook, so a stale one would show an old result; `tools/check_docs.py` also checks the built pages against them.

    python tools/result_outputs.py            # check: re-run every result cell, compare with its saved outputs (CI)
    python tools/result_outputs.py --write    # re-run them and save the fresh outputs (then commit)
    python tools/result_outputs.py --write nbs/index.ipynb   # only these notebooks

The notebook a reader meets first (`WHOLE`: nbs/index.ipynb, whose code cells README.md shows) is checked whole:
every code cell runs in order, as the reader would run them, and each cell's saved outputs (its
printed text and displayed results; warnings and progress bars on stderr aside) must be what the code gives today.
The tutorial (`NEAR`) is checked whole too, in a reference arithmetic and with its numbers within a relative
tolerance. It trains, and training amplifies the last digits of float32 (and float64) arithmetic: PyTorch picks its
kernels by the processor (ATen's vector width, oneDNN's instruction set, MKL's code path), so another machine prints
other losses and margins (up to 7 % apart after five epochs, seen with the same wheel, the same seed). The tutorial is
therefore run, for the check and for `--write`, in a child process whose arithmetic does not depend on the processor
(`REFERENCE_ENV`: ATen's scalar kernels, MKL's reproducible path, one thread, oneDNN off); its words, layout and the
count of its numbers must match exactly, its numbers within 2 % (a residual allowance, not the cross-machine spread).

Elsewhere only the result cells run (in the notebook's folder, with `Path`, `pd`, `display`, `Image` / `ShowImage`, `Markdown` and
the public names of the notebook's own module defined), so the check takes seconds. A result cell imports nothing:
docs processing runs every cell that imports (nbdev), in another folder, and would replace its output. Exit code 1
when a saved output differs from what the committed files give.
"""
import argparse, json, os, re, subprocess, sys
from pathlib import Path
from execnb.shell import CaptureShell

NBS = Path(__file__).resolve().parent.parent / 'nbs'
PREAMBLE = ("from pathlib import Path\nimport pandas as pd\nfrom IPython.display import display, Image, Markdown\n"
            "from IPython.display import Image as ShowImage\n")

def result_cells(nb:dict) -> list:
    "Code cells that show committed results: they read `results/...` and neither export, test nor train."
    return [c for c in nb['cells'] if c['cell_type'] == 'code'
            and re.search(r"Path\(['\"]results/", ''.join(c['source']))
            and not re.search(r'#\|\s*export|rebuild_from_cache|test_eq|tempfile', ''.join(c['source']))]

def _norm(outputs:list) -> list:
    "What a reader sees: stream text and the rich payloads (image bytes, markdown, html), whitespace-normalised."
    seen = []
    for o in outputs:
        if o.get('output_type') == 'stream': seen.append(('text', ''.join(o.get('text', ''))))
        for k, v in sorted(o.get('data', {}).items()):
            if k == 'text/plain' and len(o['data']) > 1: continue        # the repr of a rich object
            seen.append((k, re.sub(r'\s+', '', ''.join(v)) if k.startswith('image/') else ''.join(v)))
    merged = []                                                              # consecutive streams count as one text
    for kind, v in seen:
        if merged and kind == 'text' and merged[-1][0] == 'text': merged[-1] = ('text', merged[-1][1] + v)
        else: merged.append((kind, v))
    return merged

def module_of(nb:dict) -> str|None:
    "The module a notebook exports to (its `#| default_exp`), whose public names its result cells may use."
    for c in nb['cells']:
        m = re.search(r'^#\|\s*default_exp\s+(\S+)', ''.join(c['source']), re.M)
        if c['cell_type'] == 'code' and m: return m.group(1)

def run_cell(src:str, module:str|None=None) -> list:
    "The outputs of `src` run on its own in the notebooks' folder (with the public names of `jacmargin.<module>`)."
    cwd = os.getcwd()
    os.chdir(NBS)
    try:
        sh = CaptureShell()
        sh.run(PREAMBLE + (f"from jacmargin.{module} import *\n" if module else ''))
        out = sh.run(src)
        if sh.exc: raise RuntimeError(f"the cell failed: {sh.exc!r}\n{src}")
        return out
    finally: os.chdir(cwd)

# checked whole: every code cell, in order; NEAR: the same, each number within its relative tolerance (the tutorial
# trains: its printed losses and measures differ between processors, see REFERENCE_ENV)
WHOLE = ('index.ipynb', 'tutorial.ipynb')
NEAR = {'tutorial.ipynb': 0.02}
# the arithmetic NEAR notebooks are run in: the same kernels and summation orders on every x86-64 processor
REFERENCE_ENV = {'ATEN_CPU_CAPABILITY': 'default', 'MKL_CBWR': 'COMPATIBLE', 'OMP_NUM_THREADS': '1',
                 'MKL_NUM_THREADS': '1', 'JACMARGIN_REFERENCE_ARITHMETIC': '1'}
REFERENCE_SETUP = "import torch; torch.backends.mkldnn.enabled = False; torch.set_num_threads(1)\n"

def in_reference() -> bool: return all(os.environ.get(k) == v for k, v in REFERENCE_ENV.items())
_NUM = re.compile(r'[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|\bnan\b|\bNaN\b')

def _same_text(a:str, b:str, rtol:float) -> bool:
    """`a` and `b` equal but for their numbers (whitespace runs read as one space), each pair of numbers within `rtol`
    of the larger's magnitude (or both NaN); rtol 0: equal texts."""
    if rtol == 0: return a == b
    a, b = re.sub(r'\s+', ' ', a), re.sub(r'\s+', ' ', b)
    if _NUM.split(a) != _NUM.split(b): return False
    for x, y in zip(_NUM.findall(a), _NUM.findall(b)):
        x, y = float(x), float(y)
        if x != x or y != y:
            if not (x != x and y != y): return False
        elif abs(x - y) > rtol * max(abs(x), abs(y)): return False
    return True

def same_outputs(a:list, b:list, rtol:float=0.) -> bool:
    "Normalised outputs `a` and `b` (of `_shown` / `_norm`) the same, numbers in text within `rtol` (images exactly)."
    return len(a) == len(b) and all(ka == kb and (_same_text(va, vb, rtol) if not ka.startswith('image/') else va == vb)
                                    for (ka, va), (kb, vb) in zip(a, b))

def run_all(cells:list) -> list:
    "The outputs of every code cell of `cells`, run in order in one shell in the notebooks' folder."
    cwd, outs = os.getcwd(), []
    os.chdir(NBS)
    try:
        sh = CaptureShell()
        sh.run("import os; os.environ.setdefault('MPLBACKEND', 'Agg')\n" + (REFERENCE_SETUP if in_reference() else ''))
        for c in cells:
            outs.append(sh.run(''.join(c['source'])))
            if sh.exc: raise RuntimeError(f"the cell failed: {sh.exc!r}\n{''.join(c['source'])}")
        return outs
    finally: os.chdir(cwd)

def _shown(outputs:list) -> list:
    "The outputs a reader sees as results: all but stderr streams (warnings, progress bars)."
    return _norm([o for o in outputs if not (o.get('output_type') == 'stream' and o.get('name') == 'stderr')])

def _self_test():
    "The tolerant comparison tells apart what it must (run before every check: a comparison that passes all is no check)."
    assert _same_text('loss 0.1230 at 5 of 10', 'loss  0.1231 at 5 of 10', 0.02)
    for a, b in [('loss 0.123', 'loss 0.15'), ('loss 0.123', 'lost 0.123'), ('5 of 10', '5 of 10 1'), ('nan', '1.0'),
                 ('<td>98.1</td>', '<td>-98.1</td>'), ('1e-5', '1e-4')]:
        assert not _same_text(a, b, 0.02) and not same_outputs([('text', a)], [('text', b)], 0.02), (a, b)
    assert not same_outputs([('text/html', 'a')], [('text/html', 'a'), ('text', 'b')], 0.02)

def main(write:bool=False, notebooks=()) -> int:
    _self_test()
    stale = []
    paths = [Path(n).resolve() for n in notebooks] or sorted(NBS.glob('*.ipynb'))
    for p in paths:
        if p.name in NEAR and not in_reference():                   # in a child process in the reference arithmetic
            r = subprocess.run([sys.executable, __file__, *(['--write'] if write else []), str(p)],
                               env={**os.environ, **REFERENCE_ENV}, capture_output=True, text=True)
            print(r.stdout + r.stderr, end='')
            if r.returncode: stale.append(f"{p.name} (in the reference arithmetic, above)")
            continue
        nb = json.loads(p.read_text(encoding='utf-8'))
        if p.name in WHOLE:
            cells = [c for c in nb['cells'] if c['cell_type'] == 'code']
            for c, fresh in zip(cells, run_all(cells)):
                if not same_outputs(_shown(fresh), _shown(c.get('outputs', [])), 0. if write else NEAR.get(p.name, 0.)):
                    stale.append(f"{p.name} cell {c.get('id')}: {''.join(c['source']).splitlines()[0][:70]}")
                    c['outputs'] = fresh
            if write and any(s.startswith(p.name) for s in stale):
                p.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
            continue
        cells = result_cells(nb)
        for c in cells:
            fresh = run_cell(''.join(c['source']), module_of(nb))
            if _norm(fresh) != _norm(c.get('outputs', [])):
                stale.append(f"{p.name} cell {c.get('id')}: {''.join(c['source']).splitlines()[0][:70]}")
                c['outputs'] = fresh
        if write and cells and any(s.startswith(p.name) for s in stale):
            p.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')
    for s in stale: print(('rewritten: ' if write else 'stale saved output: ') + s)
    n = sum(len(result_cells(json.loads(p.read_text(encoding='utf-8')))) for p in paths if p.name not in WHOLE)
    w = [p.name for p in paths if p.name in WHOLE]
    print(f"{n} result cells" + (f" and the whole of {', '.join(w)}" if w else '') +
          f", {len(stale)} {'rewritten' if write else 'stale'}")
    if stale and not write:
        print("Fix: python tools/result_outputs.py --write && nbdev_clean, then commit the notebooks.")
    return 1 if stale and not write else 0

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--write', action='store_true', help='save the fresh outputs into the notebooks')
    ap.add_argument('notebooks', nargs='*', help='only these notebooks (default: every notebook in nbs/)')
    a = ap.parse_args()
    sys.exit(main(a.write, a.notebooks))
