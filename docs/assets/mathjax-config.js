// MathJax 3 (served with the site from assets/mathjax/, no network) typesets the math of
// every page, and only there: in Markdown pages and docstrings, pymdownx.arithmatex wraps it
// in .arithmatex as \(...\) and \[...\]; in the notebooks' Markdown cells it stands as Jupyter
// writes it, $...$ and $$...$$. A dollar anywhere else (prose, code, outputs) stays a dollar.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
    processEnvironments: true,
  },
  startup: {
    elements: [".arithmatex", ".jp-RenderedMarkdown", ".jp-RenderedLatex"],
  },
};
