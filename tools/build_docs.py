#!/usr/bin/env python
"""Build the documentation site offline, without Quarto, into `_docs/` (settings.ini `doc_path`).

    python tools/build_docs.py            # clean build into _docs/, then open _docs/index.html
    python tools/build_docs.py --serve    # the same, then serve _docs/ at http://127.0.0.1:8000 for preview
    python tools/build_docs.py --readme   # write README.md from nbs/index.ipynb (settings.ini `readme_nb`) only
    python tools/build_docs.py --check-readme   # exit 1 when README.md differs from what the notebook gives (CI)

Needs the `dev` extra (MkDocs and its plugins are in it): `pip install -e ".[dev]"`. Where Quarto is installed, `nbdev_docs` builds the
Quarto site from the same notebooks instead.

1. nbdev's own notebook processing into `_proc/` (what `nbdev_proc_nbs` does, without its attempt to install
   Quarto and the library): imports and `show_doc` cells are executed, exported code is replaced by its docs,
   `#| hide` cells dropped, backticked names linked to their docs.
2. Each processed notebook becomes a MkDocs page named as Quarto would name it (`01_jacobian.ipynb` ->
   `jacobian.html`): the front matter becomes the title and description, `#|` cell options are applied
   (`echo: false` hides the code, `output: false` the outputs, `include: false` the cell), links to the
   published site become relative, Pandoc link attributes become HTML.
3. MkDocs with Material (`font: false`: no Google Fonts) and mkdocs-jupyter renders them into `_docs/`;
   navigation from `nbs/sidebar.yml`; MathJax 2 (HTML-CSS output, STIX-Web fonts) is copied from the
   `jupyter-server-mathjax` package, so the pages load nothing from the network.

README.md is the index notebook through the same route (what `nbdev_readme` does with Quarto): nbdev's processing of
`nbs/index.ipynb`, the cell options of step 2, then nbconvert's Markdown export; links into `nbs/` are rewritten to
work from the repository root and links to the docs site become plain text.
"""
from __future__ import annotations
import argparse, fnmatch, functools, http.server, json, os, re, shutil, subprocess, sys, tempfile, time
from pathlib import Path

import yaml

IMAGE_EXTS = {'.png', '.jpg', '.jpeg', '.gif', '.svg', '.webp'}
HIDE_INPUT_TAG = 'hide-input'
MATHJAX_URL = 'assets/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full'
# MathJax 2 reads `window.MathJax` as its configuration when it loads; the package ships STIX-Web web fonts only.
# mkdocs-jupyter keeps each code cell's source a second time, as text in a hidden <div class="clipboard-copy-txt">
# that the copy button copies: MathJax must not typeset it (a `$` pair in code became a formula, or a TeX error, and
# the copied code came out mangled). mkdocs-jupyter's own Hub.Config later adds its delimiters; ignoreClass stays.
MATHJAX_CONFIG = """<script>
window.MathJax = {"HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null},
                  tex2jax: {ignoreClass: "tex2jax_ignore|clipboard-copy-txt"}, messageStyle: "none"};
</script>"""
EXTRA_CSS = """\
/* show_doc: the source link floats right of the signature, as on the Quarto site */
.jupyter-wrapper .jp-RenderedMarkdown a[target="_blank"] { font-size: smaller; }
.jupyter-wrapper .jp-RenderedMarkdown h3 { margin-top: 0.4em; }
.md-typeset .jupyter-wrapper blockquote { color: var(--md-default-fg-color--light); }
/* markdown cells' code blocks: the code cells' font, lines kept (a wrapped comment reads as code), long ones scroll */
.jupyter-wrapper .jp-RenderedMarkdown .highlight pre { white-space: pre; overflow-x: auto;
  font-size: var(--jp-code-font-size, 13px); line-height: var(--jp-code-line-height, 1.3077); }
"""


def _cfg():
    from nbdev.config import get_config
    return get_config()


def process_notebooks(force: bool = True, n_workers: int = 2) -> Path:
    "nbdev's notebook processing into `_proc/` (`nbdev_proc_nbs` without its Quarto and pip install steps)."
    from nbdev.serve import proc_nbs
    cfg = _cfg()
    # the workers print each cell that mixes imports with other code (they run it): keep that in a log
    log = tempfile.TemporaryFile(mode='w+', encoding='utf-8')
    sys.stdout.flush(); sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(log.fileno(), 1); os.dup2(log.fileno(), 2)
    try: proc = Path(proc_nbs(str(cfg.nbs_path), n_workers=n_workers, force=force)); err = None
    except BaseException as e: err = e
    finally:
        sys.stdout.flush(); sys.stderr.flush()
        os.dup2(saved[0], 1); os.dup2(saved[1], 2)
        log.seek(0); text = log.read(); log.close()
    if err is not None:
        # a worker's exception arrives with its traceback as __cause__ (concurrent.futures)
        tb = str(err.__cause__ or '')
        log_path = Path(tempfile.gettempdir()) / 'jacmargin_docs_proc.log'
        log_path.write_text(text + '\n' + tb, encoding='utf-8')
        why = [l for l in tb.splitlines() if re.match(r'[A-Za-z_][\w.]*(Error|Exception)\b', l)]
        msg = str(err).splitlines() or ['']
        raise SystemExit(f'docs: notebook processing failed: {msg[0]}\n'
                         + ''.join(f'  | {l}\n' for l in msg[1:4]) + ('  | ...\n' if len(msg) > 4 else '')
                         + ''.join(f'  {l}\n' for l in why)
                         + 'Docs processing runs each cell that contains an import: a cell that mixes imports with '
                         f'code that needs earlier cells fails there. Log and traceback: {log_path}') from err
    (proc / '_build.log').write_text(text, encoding='utf-8')
    n = text.count('Found cells containing imports and other code')
    if n: print(f'docs: {n} cells mix imports with other code, so docs processing runs them '
                f'(nbdev FAQ; listed in {proc.relative_to(cfg.config_path)}/_build.log)')
    return proc


def _front_matter(nb: dict) -> dict:
    "The YAML front matter that nbdev's `FrontmatterProc` puts in a raw first cell, or {}."
    for c in nb['cells'][:1]:
        src = ''.join(c['source']).strip()
        if c['cell_type'] == 'raw' and src.startswith('---'):
            return yaml.safe_load(src.strip('-').strip()) or {}
    return {}


def page_path(rel_nb: Path, nb: dict) -> Path:
    "Where Quarto would put the page of notebook `rel_nb` (relative to nbs/): its `output-file`, as .html."
    out = _front_matter(nb).get('output-file') or rel_nb.with_suffix('.html').name
    return rel_nb.parent / out


_re_directive = re.compile(r'^\s*#\s*\|\s*([\w-]+)\s*:\s*(.*?)\s*$')
_re_attr_link = re.compile(r'\[([^\]\n]*)\]\(([^)\s]+)\)\{([^}\n]*)\}')
_re_attr = re.compile(r'([\w-]+)="([^"]*)"|([.#])([\w-]+)')


def _attr_link(m: re.Match) -> str:
    """Pandoc `[text](url){key="v" .cls #id}` -> an HTML anchor (Python-Markdown would print the braces)."""
    text, url, attrs = m.groups()
    kv = []
    for k, v, sigil, name in _re_attr.findall(attrs):
        if k: kv.append(f'{k}="{v}"')
        else: kv.append(f'{"class" if sigil == "." else "id"}="{name}"')
    return f'<a href="{url}" {" ".join(kv)}>{text}</a>'


def make_link_fixer(site_url: str, page: Path, page_of: dict[Path, Path], nb_rel: Path):
    "Rewrite links in page `page`: published-site and `.ipynb` links become relative links to the built pages."
    up = '../' * len(page.parent.parts)
    site = re.compile(re.escape(site_url.rstrip('/')) + r'(/[^)\s"\'<>]*)?')

    def _site(m):
        path = (m.group(1) or '/').lstrip('/')
        return up + (path if path and not path.startswith('#') else 'index.html' + path)

    nb_link = re.compile(r'(\]\(|href=")(?![a-z]+:|/|#)([^)\s"#]+\.ipynb)(#[^)\s"]*)?')

    def _nb(m):
        target = os.path.normpath(nb_rel.parent / m.group(2))
        p = page_of.get(Path(target))
        if p is None: return m.group(0)
        return m.group(1) + os.path.relpath(p, page.parent or '.') + (m.group(3) or '')

    def fix(text: str) -> str:
        text = _re_attr_link.sub(_attr_link, text)
        text = site.sub(_site, text)
        return nb_link.sub(_nb, text)
    return fix


def _directives(src: str) -> tuple[dict, str]:
    "Leading `#| key: value` cell options of a code cell, and the source without them."
    lines, opts = src.splitlines(), {}
    while lines and (m := _re_directive.match(lines[0])):
        opts[m.group(1)] = m.group(2).strip().strip('"\'').lower()
        lines.pop(0)
    return opts, '\n'.join(lines)


def translate(nb: dict, fix) -> dict:
    "A processed notebook as a mkdocs-jupyter page: front matter as title, cell options applied, links fixed."
    fm, cells = _front_matter(nb), []
    for i, c in enumerate(nb['cells']):
        if i == 0 and fm:
            head = f"# {fm.get('title', '')}".rstrip()
            if fm.get('description'): head += f"\n\n> {fm['description']}"
            cells.append({'cell_type': 'markdown', 'metadata': {}, 'source': head})
            continue
        src = ''.join(c['source'])
        if c['cell_type'] == 'markdown':
            c['source'] = fix(src)
        elif c['cell_type'] == 'code':
            opts, src = _directives(src)
            if opts.get('include') == 'false': continue
            if opts.get('output') == 'false': c['outputs'] = []
            if opts.get('echo') == 'false':
                c['metadata'].setdefault('tags', []).append(HIDE_INPUT_TAG)
            c['source'] = src
            for o in c.get('outputs', []):
                for mime in ('text/markdown', 'text/html'):
                    if mime in o.get('data', {}): o['data'][mime] = fix(''.join(o['data'][mime]))
            if not src.strip() and not c.get('outputs'): continue
        cells.append(c)
    nb['cells'] = cells
    return nb


def _skipped(rel: Path) -> bool:
    "Files nbdev does not publish: under a folder or with a name that starts with `_` or `.`."
    return any(q.startswith(('_', '.')) for q in rel.parts)


def _page_title(nb: dict, rel: Path) -> str:
    return str(_front_matter(nb).get('title') or rel.stem)


def nav_from_sidebar(sidebar: Path, pages: dict[Path, tuple[Path, str]]) -> tuple[list, list[Path]]:
    "MkDocs `nav` from Quarto's `sidebar.yml` (files, sections, `auto` globs); also the notebooks it leaves out."
    used: set[Path] = set()

    def entry(rel: Path):
        used.add(rel)
        page, title = pages[rel]
        return {title: page.as_posix()}

    def walk(items):
        out = []
        for it in items or []:
            if isinstance(it, str):
                if Path(it) in pages: out.append(entry(Path(it)))
            elif 'auto' in it:
                globs = it['auto'] if isinstance(it['auto'], list) else [it['auto']]
                for rel in sorted(pages):
                    if rel not in used and any(fnmatch.fnmatch(rel.as_posix(), g) for g in globs):
                        out.append(entry(rel))
            elif 'section' in it:
                sub = walk(it.get('contents'))
                if sub: out.append({it['section']: sub})
            elif 'href' in it and Path(it['href']) in pages:
                out.append(entry(Path(it['href'])))
        return out

    data = yaml.safe_load(sidebar.read_text()) if sidebar.exists() else {}
    contents = (((data or {}).get('website') or {}).get('sidebar') or {}).get('contents')
    nav = walk(contents) if contents else [entry(rel) for rel in sorted(pages)]
    return nav, sorted(set(pages) - used)


def _mathjax_dir() -> Path:
    import jupyter_server_mathjax
    return Path(jupyter_server_mathjax.__file__).parent / 'static'


def stage(proc: Path, dest: Path) -> dict:
    "Write the MkDocs project (`mkdocs.yml`, `docs/`) for the processed notebooks in `proc` into `dest`."
    cfg = _cfg()
    if dest.exists(): shutil.rmtree(dest)
    docs = dest / 'docs'
    docs.mkdir(parents=True)
    nbs = {p.relative_to(proc): json.loads(p.read_text(encoding='utf-8')) for p in sorted(proc.rglob('*.ipynb'))
           if not _skipped(p.relative_to(proc))}
    page_of = {rel: page_path(rel, nb) for rel, nb in nbs.items()}
    site_url = cfg.doc_host.rstrip('/') + '/' + cfg.doc_baseurl.strip('/')
    for rel, nb in nbs.items():
        page = page_of[rel]
        fix = make_link_fixer(site_url, page, page_of, rel)
        out = docs / page.with_suffix('.ipynb')
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(translate(nb, fix), indent=1), encoding='utf-8')
    # figures the pages reference by path (embedded outputs need nothing)
    for p in proc.rglob('*'):
        rel = p.relative_to(proc)
        if p.suffix.lower() in IMAGE_EXTS and not _skipped(rel):
            (docs / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, docs / rel)
    shutil.copytree(_mathjax_dir(), docs / 'assets' / 'mathjax')
    (docs / 'assets' / 'jacmargin.css').write_text(EXTRA_CSS)
    (dest / 'overrides').mkdir()
    (dest / 'overrides' / 'main.html').write_text(
        '{% extends "base.html" %}\n{% block extrahead %}\n' + MATHJAX_CONFIG + '\n{% endblock %}\n')

    pages = {rel: (page_of[rel].with_suffix('.ipynb'), _page_title(nbs[rel], rel)) for rel in nbs}
    nav, left_out = nav_from_sidebar(cfg.nbs_path / 'sidebar.yml', pages)
    for rel in left_out: print(f'docs: {rel} is not in sidebar.yml; built, but not in the navigation')
    mk = {
        'site_name': cfg.get('title', cfg.lib_name),
        'site_description': cfg.get('description', ''),
        'site_url': site_url + '/',
        'docs_dir': 'docs',
        'site_dir': str(cfg.doc_path.resolve()),
        'use_directory_urls': False,      # jacobian.html as on the Quarto site; browsable from disk
        'theme': {'name': 'material', 'font': False, 'custom_dir': 'overrides',
                  'features': ['navigation.sections', 'navigation.top', 'toc.follow']},
        'markdown_extensions': ['toc', 'tables', 'admonition'],
        'extra_css': ['assets/jacmargin.css'],
        'plugins': ['search', {'mkdocs-jupyter': {
            'include': ['*.ipynb'], 'execute': False, 'include_source': False, 'cache': False,
            'custom_mathjax_url': MATHJAX_URL, 'toc_depth': 3, 'no_prompt': True,
            'remove_tag_config': {'remove_input_tags': [HIDE_INPUT_TAG]}}}],
        'hooks': [str(Path(__file__).resolve().parent / 'mkdocs_hooks.py')],
        'nav': nav,
    }
    (dest / 'mkdocs.yml').write_text(yaml.safe_dump(mk, sort_keys=False, allow_unicode=True))
    return mk


def build(force: bool = True, n_workers: int = 2, verbose: bool = False) -> Path:
    "Process the notebooks, stage the MkDocs project in `_proc/_mkdocs/`, build the site into `doc_path`."
    cfg = _cfg()
    t0 = time.time()
    proc = process_notebooks(force=force, n_workers=n_workers)
    t1 = time.time()
    dest = proc / '_mkdocs'
    stage(proc, dest)
    cmd = [sys.executable, '-m', 'mkdocs', 'build', '--clean', '-f', str(dest / 'mkdocs.yml')]
    if not verbose: cmd.append('--quiet')
    subprocess.run(cmd, check=True, cwd=dest, env={**os.environ, 'NO_MKDOCS_2_WARNING': '1'})
    site = cfg.doc_path.resolve()
    n = len(list(site.rglob('*.html')))
    print(f'docs: built {site} ({n} html files) in {time.time() - t0:.0f} s '
          f'(notebook processing {t1 - t0:.0f} s, MkDocs {time.time() - t1:.0f} s)')
    return site


_PROC_ONE = """import sys
from pathlib import Path
import nbdev.serve_drv
from nbdev.processors import FilterDefaults
nbdev.serve_drv.main((Path(sys.argv[1]), Path(sys.argv[2]), FilterDefaults))
"""


def process_one(src: Path, dst: Path) -> dict:
    "nbdev's processing of one notebook (what `nbdev_proc_nbs` runs per file, in a process of its own) into `dst`."
    cfg = _cfg()
    r = subprocess.run([sys.executable, '-c', _PROC_ONE, str(src), str(dst)], cwd=cfg.config_path,
                       capture_output=True, text=True)
    if r.returncode: raise SystemExit(f'docs: processing {src} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}')
    return json.loads(dst.read_text(encoding='utf-8'))


def readme_link_fixer(site_url: str, nbs: str = 'nbs'):
    "Links as README.md needs them: relative ones point into `nbs/`, links to the docs site become their text."
    site = re.compile(r'\[([^\]\n]*)\]\(' + re.escape(site_url.rstrip('/')) + r'[^)\s]*\)')
    rel = re.compile(r'(\]\(|src="|href=")(?![a-z][\w+.-]*:|/|#)([^)\s"]+)')

    def fix(text: str) -> str:
        text = _re_attr_link.sub(_attr_link, text)
        text = site.sub(r'\1', text)
        return rel.sub(lambda m: m.group(1) + f'{nbs}/' + m.group(2), text)
    return fix


def readme_text() -> str:
    "README.md as `nbs/<readme_nb>` gives it: processed by nbdev, cell options applied, exported to Markdown."
    import nbformat
    from nbconvert import MarkdownExporter
    from traitlets.config import Config
    cfg = _cfg()
    src = cfg.nbs_path / cfg.get('readme_nb', 'index.ipynb')
    with tempfile.TemporaryDirectory() as d: nb = process_one(src, Path(d) / src.name)
    site_url = cfg.doc_host.rstrip('/') + '/' + cfg.doc_baseurl.strip('/')
    nb = translate(nb, readme_link_fixer(site_url, cfg.nbs_path.relative_to(cfg.config_path).as_posix()))
    c = Config()
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_input_tags = {HIDE_INPUT_TAG}
    for i, cell in enumerate(nb['cells']): cell.setdefault('id', f'readme-{i}')
    nb['metadata'].setdefault('language_info', {'name': 'python'})      # code fences as ```python
    body, res = MarkdownExporter(config=c).from_notebook_node(nbformat.reads(json.dumps(nb), as_version=4))
    if res.get('outputs'):
        raise SystemExit(f'docs: {src.name} has outputs that Markdown cannot hold ({", ".join(res["outputs"])}): '
                         'show figures with a Markdown image link to the committed file instead')
    body = '\n'.join(l.rstrip() for l in body.splitlines())
    return re.sub(r'\n{3,}', '\n\n', body).strip() + '\n'


def write_readme(check: bool = False) -> int:
    "Write README.md from the index notebook; with `check`, only compare and return 1 when they differ."
    cfg = _cfg()
    path, text = cfg.config_path / 'README.md', readme_text()
    old = path.read_text(encoding='utf-8') if path.exists() else ''
    if not check:
        path.write_text(text, encoding='utf-8')
        src = cfg.get("readme_nb", "index.ipynb")
        print(f'docs: wrote {path.name} from nbs/{src}' + (' (unchanged)' if old == text else ''))
        return 0
    if old == text:
        print(f'docs: README.md is what nbs/{cfg.get("readme_nb", "index.ipynb")} gives')
        return 0
    import difflib
    diff = list(difflib.unified_diff(old.splitlines(), text.splitlines(), 'README.md', 'from nbs/index.ipynb',
                                     lineterm='', n=1))
    print('\n'.join(diff[:60]) + ('\n...' if len(diff) > 60 else ''))
    print('docs: README.md differs from what nbs/index.ipynb gives: edit the notebook, then run '
          'python tools/build_docs.py --readme and commit both')
    return 1


def serve(site: Path, port: int):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(('127.0.0.1', port), handler) as httpd:
        print(f'docs: serving {site} at http://127.0.0.1:{port}/ (Ctrl-C stops)')
        try: httpd.serve_forever()
        except KeyboardInterrupt: pass


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--serve', action='store_true', help='serve the built site at http://127.0.0.1:PORT')
    ap.add_argument('--port', type=int, default=8000)
    ap.add_argument('--incremental', action='store_true', help='re-process only notebooks changed since the last build')
    ap.add_argument('--workers', type=int, default=2, help='notebook processing workers')
    ap.add_argument('-v', '--verbose', action='store_true', help="show MkDocs' log")
    ap.add_argument('--readme', action='store_true', help='only write README.md from the index notebook')
    ap.add_argument('--check-readme', action='store_true', help='only check README.md against the index notebook')
    a = ap.parse_args(argv)
    os.chdir(_cfg().config_path)
    if a.readme or a.check_readme: sys.exit(write_readme(check=a.check_readme))
    site = build(force=not a.incremental, n_workers=a.workers, verbose=a.verbose)
    if a.serve: serve(site, a.port)


if __name__ == '__main__': main()
