"""MkDocs hooks: README.md is the site's home page and CHANGELOG.md its changelog, each written once.

The repository's pages link each other as GitHub shows them (``README.md`` -> ``docs/training.md``,
``docs/x.md`` -> ``../README.md``). On the site every page lives under ``docs/``, so this hook adds
README.md as ``index.md``, CHANGELOG.md as ``changelog.md`` and CITATION.cff and LICENSE as plain
files, and rewrites each page's relative links to where their targets are on the site. A link to
another file of the repository (a script, a config) becomes its path in code; a link to a file that
does not exist stops the build, as MkDocs' own link check does for pages inside ``docs/``.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
#: repository file -> its place on the site (relative to docs/)
BROUGHT_IN = {"README.md": "index.md", "CHANGELOG.md": "changelog.md", "CITATION.cff": "CITATION.cff",
              "LICENSE": "LICENSE"}
#: a Markdown link or image: [text](target "title"); text may hold one level of brackets
LINK = re.compile(r'(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^()\s]+)(\s+"[^"]*")?\)')
FENCE = re.compile(r"^(`{3,}|~{3,})")


def on_files(files: Files, config) -> Files:
    """Add the repository-root files of ``BROUGHT_IN`` to the site."""
    for repo_path, site_path in BROUGHT_IN.items():
        source = ROOT / repo_path
        if not source.exists():
            raise PluginError(f"docs/_hooks.py: {repo_path} is missing from the repository root")
        if site_path.endswith(".md"):
            files.append(File.generated(config, site_path, content=source.read_text(encoding="utf-8")))
        else:
            files.append(File.generated(config, site_path, abs_src_path=str(source)))
    return files


def _repo_path(page_uri: str) -> str:
    """The repository path of a site page (``index.md`` -> ``README.md``, ``x.md`` -> ``docs/x.md``)."""
    for repo_path, site_path in BROUGHT_IN.items():
        if site_path == page_uri:
            return repo_path
    return f"docs/{page_uri}"


def _rewrite(match: re.Match, page_repo: str, page_site: str) -> str:
    bang, text, target, title = match.group(1), match.group(2), match.group(3), match.group(4) or ""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
        return match.group(0)
    path, _, anchor = target.partition("#")
    repo = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo), path))
    if not (ROOT / repo).exists():
        raise PluginError(f"{page_repo}: the link '{target}' points at {repo}, which does not exist")
    if repo.startswith("docs/"):
        site = repo[len("docs/"):]
    elif repo in BROUGHT_IN:
        site = BROUGHT_IN[repo]
    else:  # a file of the repository outside the site: name it instead of linking it
        return text if f"`{repo}`" in text or repo in text else f"{text} (`{repo}`)"
    rel = posixpath.relpath(site, posixpath.dirname(page_site) or ".")
    return f"{bang}[{text}]({rel}{'#' + anchor if anchor else ''}{title})"


def on_page_markdown(markdown: str, page, config, files: Files) -> str:
    """Rewrite the page's relative links from repository paths to site paths (code blocks untouched)."""
    page_site = page.file.src_uri
    page_repo = _repo_path(page_site)
    out, fence = [], ""
    for line in markdown.split("\n"):
        opening = FENCE.match(line.lstrip())
        if fence:
            if opening and opening.group(1).startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
        elif opening:
            fence = opening.group(1)
        else:
            line = LINK.sub(lambda m: _rewrite(m, page_repo, page_site), line)
        out.append(line)
    return "\n".join(out)
