"""Checks the user guide's Markdown (README.md and docs/**/*.md) and its HTML build (help/ in the plugin folder).

  check_docs.py links REPOSITORY PANDOC   every relative link of the Markdown resolves to a file of the
        repository, and its #anchor to a heading of that page (ids as pandoc and GitHub make them); no
        page refers to files outside the repository (../shared, the specification, the seed papers)
        or to issue numbers
  check_docs.py html REPOSITORY HELP      every Markdown page has its HTML page in HELP, with a title, and
        every relative link and image of every HTML page resolves to a file inside HELP (and its
        #anchor to an id of that page)
  check_docs.py architecture REPOSITORY   the architecture map (docs/development.md, section
        "Architecture") names every source file of algorithms/ and plugin/ (by its path, its name or its
        name without .h/.cpp, in backticks), and every file it names in a table's first column or as
        `vbas...` exists

Each problem is printed as file:line: what; the exit code is 1 if there is any.
"""
import glob
import html.parser
import json
import os
import re
import subprocess
import sys
import urllib.parse

# Words a page must not print: what a reader of the repository cannot follow.
FORBIDDEN = [
    (re.compile(r"\.\./shared\b|(?<![\w.])shared/(?:SPEC|seeds|QGIS-NOTES)|/work/"), "a file outside the repository"),
    (re.compile(r"\bSPEC\b"), "the specification (SPEC)"),
    (re.compile(r"\bseeds/|\bseed (?:paper|file|text)s?\b|\bthe seeds? [\w.-]+\.(?:txt|md|pdf)\b"), "the seed papers"),
    (re.compile(r"\b(?:[Ii]ssues?|PR|[Pp]ull request)\s+#?\d+|(?:\(|\b[Ss]ee\s+)#\d+\b(?![-\w])"), "an issue number"),
]
ABSOLUTE = re.compile(r"^[a-zA-Z][\w+.-]*:|^//")


def pages(repository):
    """README.md and docs/**/*.md, relative to the repository."""
    found = ["README.md"] + sorted(os.path.relpath(p, repository) for p in glob.glob(os.path.join(repository, "docs", "**", "*.md"), recursive=True))
    return [p for p in found if os.path.exists(os.path.join(repository, p))]


def pandoc_ast(pandoc, path):
    """The page as pandoc reads it for the HTML (GitHub's Markdown, with source positions)."""
    out = subprocess.run([pandoc, "--from=gfm+tex_math_dollars+sourcepos", "--to=json", path], check=True, capture_output=True)
    return json.loads(out.stdout)


def walk(node, line, visit):
    """visit(node, line) for every element, line being the source line of the nearest element that has one."""
    if isinstance(node, dict):
        if "t" in node:
            attr = node.get("c", [None])[0] if node.get("t") in ("Link", "Image", "Span", "Div", "Header", "Code", "CodeBlock") else None
            if node.get("t") == "Header":
                attr = node["c"][1]
            if isinstance(attr, list) and len(attr) == 3:
                for key, value in attr[2]:
                    position = re.search(r"@(\d+):", value) if key == "data-pos" else None
                    if position:
                        line = int(position.group(1))
            visit(node, line)
        for value in node.values():
            walk(value, line, visit)
    elif isinstance(node, list):
        for value in node:
            walk(value, line, visit)


class Markdown:
    """A page's heading ids and its links (target, line)."""

    def __init__(self, pandoc, path):
        self.ids, self.links = set(), []
        walk(pandoc_ast(pandoc, path)["blocks"], 1, self.visit)

    def visit(self, node, line):
        kind = node["t"]
        if kind == "Header":
            self.ids.add(node["c"][1][0])
        elif kind in ("Link", "Image"):
            self.links.append((node["c"][2][0], line))
        elif kind in ("RawInline", "RawBlock") and node["c"][0] == "html":
            self.links += [(target, line) for target in re.findall(r"""(?:href|src)\s*=\s*["']([^"']*)""", node["c"][1])]


def check_links(repository, pandoc):
    problems = []
    parsed = {}

    def page(path):
        if path not in parsed:
            parsed[path] = Markdown(pandoc, os.path.join(repository, path))
        return parsed[path]

    root = os.path.realpath(repository)
    for name in pages(repository):
        with open(os.path.join(repository, name), encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                for pattern, what in FORBIDDEN:
                    match = pattern.search(text)
                    if match:
                        problems.append("%s:%d: refers to %s: %r" % (name, number, what, match.group(0)))
        for target, line in page(name).links:
            if not target or ABSOLUTE.match(target):
                continue
            where = "%s:%d: link %s" % (name, line, target)
            path, _, anchor = target.partition("#")
            path = urllib.parse.unquote(path)
            linked = os.path.normpath(os.path.join(os.path.dirname(name), path)) if path else name
            full = os.path.realpath(os.path.join(repository, linked))
            if path.startswith("/") or not (full == root or full.startswith(root + os.sep)):
                problems.append("%s: leaves the repository" % where)
            elif not os.path.exists(full):
                problems.append("%s: %s does not exist" % (where, linked))
            elif anchor and not linked.endswith(".md"):
                problems.append("%s: an anchor into a file that is no Markdown page" % where)
            elif anchor and urllib.parse.unquote(anchor) not in page(linked).ids:
                problems.append("%s: %s has no heading with id %s" % (where, linked, anchor))
    return problems


class Html(html.parser.HTMLParser):
    """An HTML page's title, ids and links (target, line)."""

    def __init__(self, path):
        super().__init__()
        self.ids, self.links, self.title, self.in_title = set(), [], "", False
        with open(path, encoding="utf-8") as f:
            self.feed(f.read())

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key == "id":
                self.ids.add(value)
            elif key in ("href", "src") and value is not None:
                self.links.append((value, self.getpos()[0]))
        self.in_title = tag == "title"

    def handle_endtag(self, tag):
        self.in_title = False

    def handle_data(self, data):
        if self.in_title:
            self.title += data


def check_html(repository, help_dir):
    problems = []
    root = os.path.realpath(help_dir)
    for name in pages(repository):
        page = "README.html" if name == "README.md" else os.path.relpath(name, "docs")[:-len(".md")] + ".html"
        if not os.path.exists(os.path.join(help_dir, page)):
            problems.append("%s:1: its HTML page %s is missing from %s" % (name, page, help_dir))
    parsed = {}

    def html_page(path):
        if path not in parsed:
            parsed[path] = Html(path)
        return parsed[path]

    for path in sorted(glob.glob(os.path.join(root, "**", "*.html"), recursive=True)):
        name = os.path.relpath(path, root)
        if not html_page(path).title.strip():
            problems.append("%s:1: no title" % name)
        for target, line in html_page(path).links:
            if not target or ABSOLUTE.match(target):
                continue
            where = "%s:%d: link %s" % (name, line, target)
            linked, _, anchor = target.partition("#")
            full = os.path.realpath(os.path.join(os.path.dirname(path), urllib.parse.unquote(linked))) if linked else path
            if not full.startswith(root + os.sep):
                problems.append("%s: leaves the help folder" % where)
            elif not os.path.isfile(full):
                problems.append("%s: %s does not exist" % (where, os.path.relpath(full, root)))
            elif anchor and (not full.endswith(".html") or urllib.parse.unquote(anchor) not in html_page(full).ids):
                problems.append("%s: %s has no id %s" % (where, os.path.relpath(full, root), anchor))
    return problems


SOURCE_SUFFIXES = (".h", ".cpp", ".py")
FILE_LIKE = re.compile(r"^[a-z0-9_]+(?:\.h|\.cpp|\.py)?$")


def source_files(repository):
    """The source files of algorithms/ and plugin/, relative to the repository."""
    found = []
    for room in ("algorithms", "plugin"):
        for folder, _, files in os.walk(os.path.join(repository, room)):
            found += [os.path.relpath(os.path.join(folder, f), repository) for f in files if f.endswith(SOURCE_SUFFIXES)]
    return sorted(found)


def architecture_section(repository):
    """(first line number, lines) of docs/development.md's section "Architecture" and its subsections."""
    with open(os.path.join(repository, "docs", "development.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = lines.index("## Architecture")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return start + 1, lines[start:end]


def check_architecture(repository):
    first, lines = architecture_section(repository)
    files = source_files(repository)
    stems = {os.path.splitext(os.path.basename(f))[0] for f in files} | {os.path.basename(f) for f in files}
    named, problems = set(), []
    for number, line in enumerate(lines, first):
        tokens = [t.strip() for t in re.findall(r"`([^`]+)`", line)]
        named.update(tokens)
        named.update(os.path.basename(t) for t in tokens)
        cells = line.split("|")
        leading = re.findall(r"`([^`]+)`", cells[1]) if line.startswith("|") and len(cells) > 2 else []
        for token in leading + [t for t in tokens if re.match(r"^vbas[a-z0-9]+(?:\.h|\.cpp)?$", t)]:
            if FILE_LIKE.match(os.path.basename(token)) and os.path.basename(token) not in stems:
                problems.append("docs/development.md:%d: the architecture map names %s, which is no file of algorithms/ or plugin/" % (number, token))
    for path in files:
        if not {path, os.path.basename(path), os.path.splitext(os.path.basename(path))[0]} & named:
            problems.append("docs/development.md: the architecture map does not name %s" % path)
    return problems


def main():
    mode, repository = sys.argv[1:3]
    other = sys.argv[3] if len(sys.argv) > 3 else None
    if mode == "architecture":
        problems = check_architecture(repository)
    else:
        problems = check_links(repository, other) if mode == "links" else check_html(repository, other)
    for problem in problems:
        print(problem)
    print("%d problems" % len(problems) if problems else "No problems", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
