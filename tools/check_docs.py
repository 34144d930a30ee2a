#!/usr/bin/env python
"""Check the site that `tools/build_docs.py` built into `_docs/`; exit 1 with a message per problem.

    python tools/check_docs.py                     # all checks
    python tools/check_docs.py --no-browser        # without headless Chromium (pages, links, figures only)
    python tools/check_docs.py --screenshot nbs/images/docs_jacobian.png --page jacobian.html

Checks:
- pages: one page per notebook, each in the navigation, none with an empty body;
- links: every relative link and anchor resolves (file exists, `#id` exists on the target page), no link
  left to the published site, nothing loaded from the network (script, stylesheet, image, font);
- figures: every `<img>` file exists;
- equations (headless Chromium, Debian package `chromium`): each page is loaded over a loopback HTTP server,
  MathJax runs, and the page's DOM has no MathJax error, no formula left as TeX source, every formula typeset
  with MathJax's STIX-Web fonts.
"""
from __future__ import annotations
import argparse, functools, html.parser, http.server, json, os, re, shutil, subprocess, sys, threading
from concurrent.futures import ThreadPoolExecutor
from html import unescape
from pathlib import Path
from urllib.parse import urlsplit, unquote

sys.path.insert(0, str(Path(__file__).parent))
import build_docs  # noqa: E402

SKIP_PAGES = {'404.html'}   # Material's 404 page links by absolute site URL


class _Page(html.parser.HTMLParser):
    "ids, links and resources of one HTML page."
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.resources, self.imgs = set(), [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get('id'): self.ids.add(a['id'])
        if tag == 'a' and a.get('name'): self.ids.add(a['name'])
        if tag == 'a' and a.get('href') is not None: self.links.append(a['href'])
        if tag == 'img' and a.get('src'): self.imgs.append(a['src']); self.resources.append(a['src'])
        if tag in ('script', 'iframe', 'source', 'video', 'audio') and a.get('src'): self.resources.append(a['src'])
        if tag == 'link' and a.get('href') and 'stylesheet' in (a.get('rel') or ''): self.resources.append(a['href'])


def _parse(p: Path) -> _Page:
    pg = _Page()
    pg.feed(p.read_text(encoding='utf-8', errors='replace'))
    return pg


def expected_pages(proc: Path) -> dict[str, Path]:
    "Notebook (relative to nbs/) -> the page it must have, from the processed notebooks in `proc`."
    out = {}
    for p in sorted(proc.rglob('*.ipynb')):
        rel = p.relative_to(proc)
        if build_docs._skipped(rel): continue
        out[rel.as_posix()] = build_docs.page_path(rel, json.loads(p.read_text(encoding='utf-8')))
    return out


def check_pages(site: Path, proc: Path, cfg_yml: Path) -> list[str]:
    import yaml
    errs, exp = [], expected_pages(proc)
    nb_dir = build_docs._cfg().nbs_path
    srcs = sorted(p.relative_to(nb_dir).as_posix() for p in nb_dir.rglob('*.ipynb')
                  if not build_docs._skipped(p.relative_to(nb_dir)))
    for s in srcs:
        if s not in exp: errs.append(f'pages: {s} was not processed (no _proc/{s})')
    nav = json.dumps(yaml.safe_load(cfg_yml.read_text()).get('nav', []))
    for nb, page in exp.items():
        f = site / page
        if not f.exists(): errs.append(f'pages: {nb} has no page ({page} missing)'); continue
        if f'"{page.with_suffix(".ipynb").as_posix()}"' not in nav: errs.append(f'pages: {nb} is not in the navigation')
        text = f.read_text(encoding='utf-8')
        if 'jupyter-wrapper' not in text or text.count('jp-Cell') < 2:
            errs.append(f'pages: {page} has no notebook content')
    print(f'pages: {len(exp)} notebooks, {sum((site / p).exists() for p in exp.values())} pages')
    return errs


def check_links(site: Path, site_url: str, page_src: dict[str, str]) -> tuple[list[str], int, int]:
    "Relative links, anchors, figures and network resources of every page."
    pages = {p: _parse(p) for p in sorted(site.rglob('*.html'))}
    bad: dict[tuple[str, str], int] = {}
    errs, n_links, n_imgs = [], 0, 0
    for p, pg in pages.items():
        if p.name in SKIP_PAGES: continue
        rel = p.relative_to(site).as_posix()
        where = f'{rel} (nbs/{page_src[rel]})' if rel in page_src else rel
        for href in pg.links:
            u = urlsplit(href)
            if href.startswith(site_url.rstrip('/')):
                bad[(where, f'{href}: a link to the published site (should be relative)')] = 1; continue
            if u.scheme or href.startswith('//'): continue          # external: not checked offline
            n_links += 1
            target = (p.parent / unquote(u.path)).resolve() if u.path else p
            if target.is_dir(): target = target / 'index.html'
            if not target.exists():
                bad[(where, f'{href}: no such file')] = bad.get((where, f'{href}: no such file'), 0) + 1; continue
            frag = unquote(u.fragment)
            if frag and target.suffix == '.html':
                tp = pages.get(target) or _parse(target)
                if frag not in tp.ids:
                    why = f'{href}: no such anchor' + (' (a private name: only public names get a heading)'
                                                       if frag.startswith('_') else '')
                    bad[(where, why)] = bad.get((where, why), 0) + 1
        for src in pg.resources:
            u = urlsplit(src)
            if u.scheme in ('http', 'https') or src.startswith('//'):
                errs.append(f'network: {where} loads {src}'); continue
            if u.scheme: continue                                       # data: URIs
            if not (p.parent / unquote(u.path)).exists(): errs.append(f'figures: {where}: {src} does not exist')
        n_imgs += len(pg.imgs)
    errs += [f'links: {where}: {why}' + (f' ({n} links)' if n > 1 else '') for (where, why), n in bad.items()]
    for css in site.rglob('*.css'):
        if re.search(r'url\(\s*[\'"]?(https?:)?//', css.read_text(errors='replace')):
            errs.append(f'network: {css.relative_to(site)} loads a font or image from the network')
    print(f'links: {n_links} internal links on {len(pages) - len(SKIP_PAGES)} pages; figures: {n_imgs} images')
    return errs, n_links, n_imgs


def _chromium() -> str | None:
    for c in ('chromium', 'chromium-browser', 'google-chrome'):
        if shutil.which(c): return shutil.which(c)


def _chrome_cmd(budget_ms: int) -> list[str]:
    return [_chromium(), '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
            '--no-first-run', '--hide-scrollbars', f'--virtual-time-budget={budget_ms}']


class _Server:
    "The site on a loopback HTTP server (Chromium blocks web fonts on file:// pages)."
    def __init__(self, site: Path):
        handler = functools.partial(_QuietHandler, directory=str(site))
        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
        self.url = f'http://127.0.0.1:{self.httpd.server_address[1]}/'
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self): self.httpd.shutdown(); self.httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    "Serves quietly and records each request's path and status (a missing font or image is a 404)."
    requests: list[tuple[str, int]] = []

    def log_message(self, *a): pass
    def log_request(self, code='-', size='-'):
        _QuietHandler.requests.append((self.path, int(getattr(code, 'value', code))))


# a typeset formula: MathJax's frame, then the script with its TeX source; errors show as noError / merror /
# MathJax_Error, undefined macros in red (noUndefined)
_re_formula = re.compile(r'<span class="MathJax[^"]*" id="MathJax-Element-(\d+)-Frame"(.*?)'
                         r'<script type="math/tex[^"]*" id="MathJax-Element-\1">(.*?)</script>', re.S)
_re_math_error = re.compile(r'class="noError|class="MathJax_Error|<merror|&lt;merror|mathcolor="red"')
_re_tag = re.compile(r'<(script|style|pre|code|textarea)\b.*?</\1>', re.S | re.I)


def check_math(site: Path, url: str, page: Path, budget_ms: int = 30000) -> tuple[dict, list[str]]:
    "Load one page in headless Chromium; count typeset formulas, MathJax errors and TeX left untypeset."
    rel = page.relative_to(site).as_posix()
    r = subprocess.run(_chrome_cmd(budget_ms) + ['--dump-dom', url + rel], capture_output=True, text=True,
                       timeout=180)
    dom = r.stdout
    formulas = _re_formula.findall(dom)
    bad = [unescape(tex) for _, frame, tex in formulas if _re_math_error.search(frame)]
    stats = {'page': rel, 'formulas': len(formulas), 'errors': len(bad) + dom.count('Math Processing Error'),
             'stix': dom.count('STIXMathJax_')}
    n_tex = len(formulas)
    errs = []
    if not dom.strip(): return stats, [f'equations: {rel}: Chromium returned no DOM ({r.stderr.strip()[-300:]})']
    if stats['errors']:
        errs.append(f'equations: {rel}: {stats["errors"]} formulas with TeX errors: '
                    + ' | '.join(b[:100] for b in bad[:5]))
    if n_tex and not stats['stix']: errs.append(f'equations: {rel}: formulas not set in the STIX-Web fonts')
    # TeX left in the text: math delimiters outside code, scripts and typeset formulas
    body = dom.split('<article', 1)[-1].split('</article>', 1)[0]
    text = re.sub(r'<[^>]+>', ' ', _re_tag.sub(' ', body))
    left = re.findall(r'\$\$.+?\$\$|(?<![\\\w])\$[^$\s][^$]*?\$|\\\(.+?\\\)|\\\[.+?\\\]', text, re.S)
    if left:
        stats['untypeset'] = len(left)
        errs.append(f'equations: {rel}: {len(left)} formulas left as TeX, e.g. ' + ' | '.join(l[:80] for l in left[:3]))
    return stats, errs


def check_equations(site: Path, jobs: int = 2, budget_ms: int = 30000) -> list[str]:
    if not _chromium():
        return ['equations: headless Chromium not found (Debian: apt-get install -y chromium); '
                '--no-browser skips this check']
    srv = _Server(site)
    try:
        pages = [p for p in sorted(site.rglob('*.html'))
                 if p.name not in SKIP_PAGES and 'jupyter-wrapper' in p.read_text(encoding='utf-8')]
        with ThreadPoolExecutor(jobs) as ex:
            res = list(ex.map(lambda p: check_math(site, srv.url, p, budget_ms), pages))
    finally: srv.close()
    errs = [e for _, es in res for e in es]
    reqs = _QuietHandler.requests
    # MathJax's hidden assistive MathML asks for TeX fonts, which the package does not ship; what is shown uses
    # STIX-Web, checked below
    for path in sorted({p for p, code in reqs if code >= 400 and '/fonts/HTML-CSS/TeX/' not in p}):
        errs.append(f'resources: a page requested {path}, which the site does not have')
    fonts = {p for p, code in reqs if code == 200 and '/fonts/HTML-CSS/STIX-Web/' in p}
    if any(s['formulas'] for s, _ in res) and not fonts:
        errs.append('equations: no STIX-Web web font was loaded (MathJax fell back to local fonts)')
    print(f'resources: {len(reqs)} requests while loading the pages, {len(fonts)} web fonts loaded')
    n = sum(s['formulas'] for s, _ in res)
    nerr = sum(s['errors'] for s, _ in res)
    print(f'equations: {n} formulas typeset on {sum(s["formulas"] > 0 for s, _ in res)} of {len(res)} pages, '
          f'{nerr} MathJax errors, {sum(s.get("untypeset", 0) for s, _ in res)} left as TeX')
    for s, _ in res: print(f'  {s["page"]:<22} {s["formulas"]:>5} formulas, {s["errors"]} errors')
    return errs


def screenshot(site: Path, page: str, out: Path, width: int = 1280, height: int = 860, colors: int = 128):
    "A PNG of `page` as Chromium shows it (served over loopback), reduced to a palette to stay small."
    srv = _Server(site)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix('.tmp.png')
        subprocess.run(_chrome_cmd(30000) + [f'--window-size={width},{height}', f'--screenshot={tmp}', srv.url + page],
                       check=True, capture_output=True, timeout=180)
    finally: srv.close()
    from PIL import Image
    Image.open(tmp).convert('RGB').quantize(colors, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)
    tmp.unlink()
    print(f'screenshot: {out} ({out.stat().st_size // 1024} KiB)')


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--no-browser', action='store_true', help='skip the equation check (needs Chromium)')
    ap.add_argument('--jobs', type=int, default=2, help='Chromium instances at a time')
    ap.add_argument('--screenshot', type=Path, help='write a screenshot of --page to this PNG and stop')
    ap.add_argument('--page', default='jacobian.html')
    a = ap.parse_args(argv)
    cfg = build_docs._cfg()
    os.chdir(cfg.config_path)
    site, proc = cfg.doc_path.resolve(), (cfg.config_path / '_proc')
    if not (site / 'index.html').exists():
        sys.exit(f'docs check: no site in {site}: run python tools/build_docs.py first')
    if a.screenshot: return screenshot(site, a.page, a.screenshot.resolve())
    site_url = cfg.doc_host.rstrip('/') + '/' + cfg.doc_baseurl.strip('/')
    errs = check_pages(site, proc, proc / '_mkdocs' / 'mkdocs.yml')
    page_src = {page.as_posix(): nb for nb, page in expected_pages(proc).items()}
    errs += check_links(site, site_url, page_src)[0]
    if not a.no_browser: errs += check_equations(site, a.jobs)
    for e in errs: print(f'docs check FAILED: {e}')
    print(f'docs check: {"OK" if not errs else f"{len(errs)} problems"}')
    sys.exit(1 if errs else 0)


if __name__ == '__main__': main()
