"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks``): docstrings cite code with
Sphinx roles (``:func:`solve```); the site shows the name alone, in code type, and a
``:math:`...``` role as math for MathJax. Notebook pages lose the MathJax 2 loader that
mkdocs-jupyter writes into each of them (an empty ``<script src="">`` unless given a CDN address):
the site's own MathJax (mkdocs.yml ``extra_javascript``) typesets every page. The index of
the papers' equations (``docs/equations.md``) is generated from the programs' own tables
(``dlsched.programs()``, ``dlsched.equations(program)``) where the page says
:data:`EQUATION_INDEX`."""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension
from markdown.preprocessors import Preprocessor

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj):(<code>)~?(?:[\w.]+\.)?")
_MATH_ROLE = re.compile(r":math:<code>(.*?)</code>", re.DOTALL)
_NOTEBOOK_MATHJAX = re.compile(
    r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.DOTALL
)


#: The line of a page replaced by the index of every program's equations.
EQUATION_INDEX = "<!-- equation index -->"


def equation_index() -> str:
    """One section per program (its family, equations and summary), one table row per
    component its builder may add, with the equation it states."""
    import dlsched

    out: list[str] = []
    for p in dlsched.programs():
        out += [f"## `{p.name}` ({p.family}): {p.equations}", "", p.summary, ""]
        out += ["| component | equation |", "|---|---|"]
        out += [
            f"| `{c}` | {doc.replace('|', '&#124;')} |" for c, doc, _ in dlsched.equations(p.name)
        ]
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The equation index in place of :data:`EQUATION_INDEX`."""
    if EQUATION_INDEX not in markdown:
        return markdown
    return markdown.replace(EQUATION_INDEX, equation_index())


def on_page_content(html: str, **_: Any) -> str:
    """``:func:<code>~dlsched.api.solve</code>`` as ``<code>solve</code>``,
    ``:math:<code>x_j</code>`` as pymdownx.arithmatex writes ``$x_j$`` (MathJax typesets it),
    and a notebook page without its own MathJax loader."""
    html = _MATH_ROLE.sub(r'<span class="arithmatex">\(\1\)</span>', html)
    return _NOTEBOOK_MATHJAX.sub("", _ROLE.sub(r"\1", html))


class _DoctestFences(Preprocessor):
    """Docstring examples (``>>>`` lines and the output after them, up to a blank line) as
    fenced Python console blocks, not as Markdown quotes."""

    def run(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        inside = False
        for line in lines:
            prompt = line.lstrip().startswith((">>>", "... ")) or line.strip() == "..."
            if prompt and not inside:
                out += ["", "```pycon"]
                inside = True
            elif inside and not line.strip():
                out += ["```", ""]
                inside = False
            out.append(line.strip() if inside else line)
        return out + (["```"] if inside else [])


class DoctestFences(Extension):
    def extendMarkdown(self, md: Any) -> None:  # noqa: N802 - Markdown's name
        md.preprocessors.register(_DoctestFences(md), "doctest_fences", 35)


def on_config(config: Any, **_: Any) -> Any:
    config.markdown_extensions.append(DoctestFences())
    return config
