"""MkDocs hooks of the offline docs build (`tools/build_docs.py`).

Notebook pages get the heading ids Quarto (Pandoc) would give them, so that the links nbdev writes
(`jacobian.html#jacobian_spectral_norm`, `learner.html#learner.fit`) resolve as on the Quarto site, ids are
unique on a page, and the table of contents is rebuilt from those headings (mkdocs-jupyter computes its own
from a Markdown conversion, whose ids can differ from the page's). Two headings whose names differ only in case (a
class `Table2` and its function `table2`) are told apart in the table of contents: "Table2 (class)", "table2".
"""
from __future__ import annotations
import html, re

from mkdocs.structure.toc import get_toc

TOC_DEPTH = 3
_re_heading = re.compile(r'<h([1-6])((?:\s[^>]*)?)>(.*?)</h\1>', re.S)
_re_anchor_link = re.compile(r'<a class="anchor-link"[^>]*>.*?</a>', re.S)
_re_id = re.compile(r'\s+id="[^"]*"')


def pandoc_id(text: str) -> str:
    "Pandoc's auto identifier: keep letters, digits, `_-.`; spaces to hyphens; lower case; start at a letter."
    s = re.sub(r'[^\w\s.-]', '', text.strip())
    s = re.sub(r'\s', '-', s).lower()
    i = next((k for k, ch in enumerate(s) if ch.isalpha()), len(s))
    return s[i:] or 'section'


def _nest(flat: list[dict]) -> list[dict]:
    root: list[dict] = []
    stack: list[dict] = []
    for t in flat:
        while stack and stack[-1]['level'] >= t['level']: stack.pop()
        (stack[-1]['children'] if stack else root).append(t)
        stack.append(t)
    return root


def on_page_content(content: str, page, config, files):
    if not page.file.src_uri.endswith('.ipynb'): return content
    seen: set[str] = set()
    flat: list[dict] = []

    def heading(m: re.Match) -> str:
        level, attrs, inner = int(m.group(1)), _re_id.sub('', m.group(2)), _re_anchor_link.sub('', m.group(3))
        name = html.unescape(re.sub(r'<[^>]+>', '', inner)).strip()
        base = hid = pandoc_id(name)
        n = 0
        while hid in seen:
            n += 1
            hid = f'{base}-{n}'
        seen.add(hid)
        if level <= TOC_DEPTH: flat.append({'level': level, 'id': hid, 'name': html.escape(name), 'children': []})
        return f'<h{level}{attrs} id="{hid}">{inner}<a class="anchor-link" href="#{hid}">¶</a></h{level}>'

    content = _re_heading.sub(heading, content)
    lower = [t['name'].lower() for t in flat]
    for t in flat:                                   # same name but for case: the capitalised one is a class
        if lower.count(t['name'].lower()) > 1 and t['name'][:1].isupper(): t['name'] += ' (class)'
    page.toc = get_toc(_nest(flat))
    return content
