#!/usr/bin/env python
"""Check the site that `tools/build_docs.py` built into `_docs/`; exit 1 with a message per problem.

    python tools/check_docs.py                     # all checks (the equations skipped, with a note, without Chromium)
    python tools/check_docs.py --require-browser   # all checks, Chromium required (CI)
    python tools/check_docs.py --no-browser        # without headless Chromium (pages, links, figures only)
    python tools/check_docs.py --screenshot nbs/images/docs_jacobian.png --page jacobian.html
    python tools/check_docs.py --self-test         # mutation test: broken tables and changed results must fail

Checks:
- pages: one page per notebook, each in the navigation, none with an empty body;
- links: every relative link and anchor resolves (file exists, `#id` exists on the target page), no link
  left to the published site, nothing loaded from the network (script, stylesheet, image, font);
- figures: every `<img>` file exists;
- rendering: no Markdown left unrendered in what a reader sees — a table rule (`| --- |`) or `**bold**` in the
  rendered prose or in a cell's text output (a table printed instead of displayed) fails; code is not looked at;
- results: every result cell (`tools/result_outputs.py`: a cell that reads committed files under nbs/results) is
  re-run; its output must equal the one the page was built from, and every value of the tables it shows must be on
  the page;
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
import result_outputs  # noqa: E402

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


# what a reader must never see: a pipe-table rule or bold markers that no renderer turned into a table / <strong>
_re_table_rule = re.compile(r'\|\s*:?-{3,}:?\s*\|')
_re_bold = re.compile(r'\*\*[^*\s][^*\n]*?\*\*')
_VOID = {'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr'}


class _Text(html.parser.HTMLParser):
    "The text a reader sees on a notebook page, split into rendered prose and cell outputs; code cells' inputs skipped."
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str]] = []     # (tag, role): role in '', 'input', 'code', 'prose', 'output'
        self.prose, self.output = [], []

    def _role(self) -> str:
        "The innermost role decides (a Markdown cell renders inside an input area); code anywhere above is skipped."
        roles = [r for _, r in self.stack if r]
        if 'code' in roles: return 'skip'
        inner = roles[-1] if roles else ''
        return 'skip' if inner == 'input' else inner

    def handle_starttag(self, tag, attrs):
        if tag in _VOID: return
        cls = dict(attrs).get('class') or ''
        role = ''
        if 'jp-InputArea' in cls or 'jp-InputPrompt' in cls or 'jp-OutputPrompt' in cls: role = 'input'
        elif tag in ('script', 'style', 'code', 'textarea', 'nav', 'header', 'footer'): role = 'code'
        elif 'jp-RenderedMarkdown' in cls: role = 'prose'
        elif 'jp-OutputArea-output' in cls or 'jp-RenderedText' in cls: role = 'output'
        elif tag == 'pre' and self._role() == 'prose': role = 'code'       # a code block in Markdown
        self.stack.append((tag, role))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag: del self.stack[i:]; return

    def handle_data(self, data):
        r = self._role()
        if r == 'prose': self.prose.append(data)
        elif r == 'output': self.output.append(data)


def rendering_errors(text: str, where: str) -> list[str]:
    "Literal table rules and bold markers in the rendered prose and the outputs of one page's HTML."
    t = _Text()
    t.feed(text)
    errs = []
    for kind, parts in (('text', t.prose), ('a cell output', t.output)):
        body = ''.join(parts)
        for rx, what in ((_re_table_rule, 'a Markdown table left as text'), (_re_bold, 'Markdown bold left as text')):
            hits = rx.findall(body)
            if hits:
                m = rx.search(body)
                ctx = ' '.join(body[max(0, m.start() - 40):m.end() + 40].split())
                errs.append(f'rendering: {where}: {what} in {kind} ({len(hits)}x), e.g. "{ctx[:110]}"')
    return errs


def check_rendering(site: Path, page_src: dict[str, str]) -> list[str]:
    "Every notebook page: nothing left as raw Markdown where the reader sees rendered text."
    errs, n = [], 0
    for p in sorted(site.rglob('*.html')):
        text = p.read_text(encoding='utf-8', errors='replace')
        if p.name in SKIP_PAGES or 'jupyter-wrapper' not in text: continue
        rel = p.relative_to(site).as_posix()
        n += 1
        errs += rendering_errors(text, f'{rel} (nbs/{page_src[rel]})' if rel in page_src else rel)
    print(f'rendering: {n} notebook pages checked for unrendered tables and Markdown')
    return errs


def _table_values(outputs: list) -> list[str]:
    "The cell values of the Markdown tables a result cell shows (as displayed Markdown or printed text)."
    vals = []
    for kind, v in result_outputs._norm(outputs):
        if kind not in ('text', 'text/markdown'): continue
        for line in v.splitlines():
            if line.strip().startswith('|') and not _re_table_rule.search(line):
                vals += [c.strip() for c in line.strip().strip('|').split('|') if c.strip()]
    return vals


_re_doc_link = re.compile(r'\[(`[^`\]]+`)\]\([^)\s]+\)')


def _unlinked(outputs: list) -> list:
    "`_norm`ed outputs without the links to the docs that nbdev's processing adds to backticked names."
    return [(k, _re_doc_link.sub(r'\1', v) if k in ('text/markdown', 'text/html') else v)
            for k, v in result_outputs._norm(outputs)]


def result_errors(nb: dict, page_text: str | None, where: str, module: str | None = None) -> tuple[list[str], int]:
    "Re-run the result cells of processed notebook `nb` (of `module`): the page shows what the committed files give."
    errs, cells = [], result_outputs.result_cells(nb)
    shown = None if page_text is None else {' '.join(unescape(re.sub(r'<[^>]+>', ' ', c)).split())
                                            for c in re.findall(r'<t[dh]\b[^>]*>(.*?)</t[dh]>', page_text, re.S)}
    for c in cells:
        fresh = result_outputs.run_cell(''.join(c['source']), module)
        head = ''.join(c['source']).replace('#| echo: false', '').strip().splitlines()[0][:60]
        if _unlinked(fresh) != _unlinked(c.get('outputs', [])):
            errs.append(f'results: {where}: the page shows an output that differs from the committed results '
                        f'(cell "{head}"): python tools/result_outputs.py --write, then rebuild')
        elif shown is not None:
            missing = [v for v in _table_values(fresh) if ' '.join(v.split()) not in shown]
            if missing:
                errs.append(f'results: {where}: {len(missing)} values of the committed table are not on the page '
                            f'(cell "{head}"), e.g. {missing[:3]}')
    return errs, len(cells)


def check_results(site: Path, proc: Path) -> list[str]:
    "Every page built from a notebook with result cells shows the committed results."
    errs, n = [], 0
    for rel, page in expected_pages(proc).items():
        nb = json.loads((proc / rel).read_text(encoding='utf-8'))
        src = build_docs._cfg().nbs_path / rel                   # the processed copy has lost its `#| default_exp`
        module = result_outputs.module_of(json.loads(src.read_text(encoding='utf-8'))) if src.exists() else None
        f = site / page
        e, k = result_errors(nb, f.read_text(encoding='utf-8') if f.exists() else None, f'{page} (nbs/{rel})', module)
        errs += e; n += k
    print(f'results: {n} result cells re-run against their pages')
    return errs


def self_test(site: Path | None = None) -> int:
    "Mutation test: the checks pass on good pages and fail on a broken table, raw Markdown and a changed result."
    ok_table = ('<div class="jp-RenderedMarkdown"><p>Text with <strong>bold</strong> and a table:</p><table><tr>'
                '<th>n</th><th>acc</th></tr><tr><td>1000</td><td>94.51 ± 0.51</td></tr></table></div>'
                '<div class="jp-InputArea"><pre>print("| n | acc |\n| --- | --- |")  # **code**</pre></div>')
    cases = {   # name: (html, must fail)
        'a rendered table, code that prints one': (ok_table, False),
        'a table rendered as one paragraph (pipes in the prose)':
            ('<div class="jp-RenderedMarkdown"><p>| n | acc | |---|---| | 1000 | 94.51 |</p></div>', True),
        'the same in a Markdown cell (rendered inside its input area)':
            ('<div class="jp-InputArea jp-Cell-inputArea"><div class="jp-RenderedHTMLCommon jp-RenderedMarkdown">'
             '<p>| n | acc |\n|---|---|\n| 1000 | 94.51 |</p></div></div>', True),
        'a code cell that writes a table (its input area)':
            ('<div class="jp-InputArea jp-Cell-inputArea"><div class="jp-CodeMirrorEditor"><div class="highlight">'
             '<pre><span>md = "| n |\n| --- |"  # **x**</span></pre></div></div></div>', False),
        'a table printed into a text output':
            ('<div class="jp-OutputArea-output"><pre>| n | acc |\n| --- | --- |\n| 1000 | 94.51 |</pre></div>', True),
        'bold left as text in an output':
            ('<div class="jp-RenderedText"><pre>**Provenance.** Written</pre></div>', True),
        'bold left as text in prose': ('<div class="jp-RenderedMarkdown"><p>**Table II** shows</p></div>', True),
    }
    bad = []
    for name, (page, must_fail) in cases.items():
        if bool(rendering_errors(page, name)) != must_fail:
            bad.append(f'rendering check {"passed" if must_fail else "failed"}: {name}')
    # results: a result cell of the index notebook with its committed output passes; one changed value fails
    nb = json.loads((build_docs._cfg().nbs_path / 'index.ipynb').read_text(encoding='utf-8'))
    cell = next(c for c in result_outputs.result_cells(nb) if 'sokolic2017-table2' in ''.join(c['source']))
    fresh = result_outputs.run_cell(''.join(cell['source']))
    md = ''.join(next(o['data']['text/markdown'] for o in fresh if 'text/markdown' in o.get('data', {})))
    import mistune
    page = '<div class="jp-RenderedMarkdown">' + mistune.create_markdown(plugins=['table'])(md) + '</div>'
    good = {'cells': [{**cell, 'outputs': fresh}]}
    if result_errors(good, page, 'good')[0]: bad.append('results check failed on the committed output')
    val = _table_values(fresh)[-2]                     # a value of the last row
    changed = json.loads(json.dumps(fresh, ensure_ascii=False).replace(val, val + '1', 1))
    if not result_errors({'cells': [{**cell, 'outputs': changed}]}, page, 'stale')[0]:
        bad.append('results check passed a saved output that differs from the committed files')
    if not result_errors(good, page.replace(val, val + '1'), 'stale page')[0]:
        bad.append('results check passed a page that does not show the committed values')
    # the built site, when there is one: break its home page's first rendered table
    idx = site / 'index.html' if site else None
    if idx and idx.exists():
        text = idx.read_text(encoding='utf-8')
        m = re.search(r'<table>.*?</table>', text, re.S)
        if m is None: bad.append('the built index.html has no rendered table to break')
        else:
            rows = re.findall(r'<tr>(.*?)</tr>', m.group(0), re.S)
            as_text = '<p>' + ' '.join('| ' + ' | '.join(re.findall(r'<t[hd][^>]*>(.*?)</t[hd]>', r, re.S)) + ' |'
                                         for r in rows[:1]) + ' | --- | --- |</p>'
            if rendering_errors(text, 'index.html'): bad.append('the built index.html fails before the mutation')
            if not rendering_errors(text.replace(m.group(0), as_text, 1), 'index.html, table broken'):
                bad.append('the rendering check passed the built index.html with its first table left as text')
    for b in bad: print(f'docs check self-test FAILED: {b}')
    print(f'docs check self-test: {sum(v for _, v in cases.values()) + 3 + bool(idx and idx.exists())} mutations, '
          f'{"all caught" if not bad else f"{len(bad)} not caught"}')
    return 1 if bad else 0


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
_re_copy = re.compile(r'<div class="clipboard-copy-txt"[^>]*>.*?</div>', re.S)


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
    copies = _re_copy.findall(body)                # code cells' hidden copy-button text: code, never typeset
    if any('MathJax' in c for c in copies): errs.append(f'equations: {rel}: MathJax typeset code in a copy-button text')
    text = re.sub(r'<[^>]+>', ' ', _re_tag.sub(' ', _re_copy.sub(' ', body)))
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
    ap.add_argument('--require-browser', action='store_true',
                    help='fail where Chromium is missing (CI installs it); by default the equation check is skipped '
                         'with a note')
    ap.add_argument('--jobs', type=int, default=2, help='Chromium instances at a time')
    ap.add_argument('--screenshot', type=Path, help='write a screenshot of --page to this PNG and stop')
    ap.add_argument('--page', default='jacobian.html')
    ap.add_argument('--self-test', action='store_true', help='the mutation test of the rendering and result checks')
    a = ap.parse_args(argv)
    cfg = build_docs._cfg()
    os.chdir(cfg.config_path)
    site, proc = cfg.doc_path.resolve(), (cfg.config_path / '_proc')
    if a.self_test: sys.exit(self_test(site))
    if not (site / 'index.html').exists():
        sys.exit(f'docs check: no site in {site}: run python tools/build_docs.py first')
    if a.screenshot: return screenshot(site, a.page, a.screenshot.resolve())
    site_url = cfg.doc_host.rstrip('/') + '/' + cfg.doc_baseurl.strip('/')
    errs = check_pages(site, proc, proc / '_mkdocs' / 'mkdocs.yml')
    page_src = {page.as_posix(): nb for nb, page in expected_pages(proc).items()}
    errs += check_links(site, site_url, page_src)[0]
    errs += check_rendering(site, page_src)
    errs += check_results(site, proc)
    if not a.no_browser and not a.require_browser and not _chromium():
        print('docs check: equations skipped: headless Chromium not found (Debian: apt-get install -y chromium; '
              'CI runs this check with --require-browser)')
    elif not a.no_browser: errs += check_equations(site, a.jobs)
    for e in errs: print(f'docs check FAILED: {e}')
    print(f'docs check: {"OK" if not errs else f"{len(errs)} problems"}')
    sys.exit(1 if errs else 0)


if __name__ == '__main__': main()
