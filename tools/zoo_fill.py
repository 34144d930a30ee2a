"""Train the networks of a zoo that are missing from the result cache, with GPU and CPU workers side by side, until a
deadline; each finished network is stored in the cache at once, the ones still training at the deadline are dropped.

    python tools/zoo_fill.py zoo-fashion --seconds 3000 --gpu-workers 4 --cpu-workers 12
    python tools/zoo_fill.py zoo --seconds 600 --cpu-workers 2 --tar new.tgz    # also pack the new records

`jacmargin run NAME --jobs N --device D` does the same on one kind of device without a deadline. Here every worker
takes the next missing network from one queue (CNNs first, the costlier ones), so a machine with a GPU and many CPU
cores uses both; each record names the device it was trained on. Rank the zoo afterwards with
`jacmargin run NAME --scale cpu --out nbs/results --executor cache`.
"""
import argparse, json, os, sys, tarfile, time, traceback
import multiprocessing as mp


def _worker(k:int, dev:str, q, deadline:float, cache_root:str, log:str):
    "Train networks from `q` on `dev` until the queue is empty or the deadline passes; log one JSON line each."
    os.environ['OMP_NUM_THREADS'] = '1'
    import torch
    torch.set_num_threads(1)
    from functools import partial
    from jacmargin.experiment import ResultCache, _timed
    from jacmargin.runs import run
    cache = ResultCache(cache_root)
    while time.time() < deadline:
        try: i, cfg = q.get(timeout=10)
        except Exception: break
        t = time.time()
        try:
            res, meta = _timed(partial(run, device=dev, on_diverge='record'), cfg)
            cache.put(cfg, res, meta)
            line = dict(worker=k, device=dev, index=i, seconds=round(time.time() - t, 1), file=cache.path(cfg).name)
        except Exception:
            line = dict(worker=k, device=dev, index=i, error=traceback.format_exc()[-2000:])
            if dev == 'cuda': dev = 'cpu'                   # a GPU failure: this worker goes on on the CPU
        with open(log, 'a') as f: f.write(json.dumps(line) + '\n')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('name', choices=('zoo', 'zoo-fashion'), help='the zoo (its CPU grid)')
    p.add_argument('--seconds', type=float, required=True, help='stop (dropping unfinished networks) after this long')
    p.add_argument('--gpu-workers', type=int, default=0)
    p.add_argument('--cpu-workers', type=int, default=1)
    p.add_argument('--cache', default='nbs/results/cache', help='the result cache folder')
    p.add_argument('--log', default='zoo_fill.jsonl', help='one JSON line per network (device, seconds, record file)')
    p.add_argument('--tar', default=None, help='also pack the records trained now into this .tgz')
    p.add_argument('--from-end', action='store_true',
                   help='take the networks from the end of the grid (beside a run that trains it from the start)')
    p.add_argument('--mlp-first', action='store_true',
                   help='the MLPs before the CNNs (CPU workers only: the MLP half of the zoo is complete soonest)')
    a = p.parse_args()
    if a.gpu_workers:
        import torch
        if not torch.cuda.is_available(): sys.exit('--gpu-workers needs CUDA, which this torch does not see: use --cpu-workers.')
    from jacmargin.papers.zoo import ZOO_CPU, ZOO_FASHION_CPU, zoo_points, zoo_config
    from jacmargin.experiment import ResultCache
    t0 = time.time()
    z, cache = {'zoo': ZOO_CPU, 'zoo-fashion': ZOO_FASHION_CPU}[a.name], ResultCache(a.cache)
    todo = [c for c in (zoo_config(z, pt) for pt in zoo_points(z)) if c not in cache]
    todo = sorted(todo[::-1] if a.from_end else todo, key=lambda c: (c.model == 'mlp') != a.mlp_first)
    print(f'{a.name}: {len(todo)} networks missing from {a.cache}', flush=True)
    ctx = mp.get_context('spawn')
    q = ctx.Queue()
    for i, c in enumerate(todo): q.put((i, c))
    start = os.path.getsize(a.log) if os.path.exists(a.log) else 0
    ps = [ctx.Process(target=_worker, args=(k, 'cuda' if k < a.gpu_workers else 'cpu', q, t0 + a.seconds, a.cache, a.log))
          for k in range(a.gpu_workers + a.cpu_workers)]
    for w in ps: w.start()
    while time.time() < t0 + a.seconds and any(w.is_alive() for w in ps): time.sleep(2)
    for w in ps:
        if w.is_alive(): w.terminate()
    for w in ps: w.join(5)
    done = []
    if os.path.exists(a.log):
        with open(a.log) as f: f.seek(start); done = [json.loads(l) for l in f]
    files = [d['file'] for d in done if 'file' in d]
    if a.tar:
        with tarfile.open(a.tar, 'w:gz') as tf:
            for f in files: tf.add(os.path.join(a.cache, 'Run', f), arcname=f)
    print(f"{len(files)} networks stored, {sum('error' in d for d in done)} errors (in {a.log}), "
          f"{len(todo) - len(files)} still missing; {time.time() - t0:.0f} s", flush=True)
    os._exit(0)                                           # the queue may still hold networks: do not wait to flush it


if __name__ == '__main__': main()
