"""docs_commands: runs every ```sh block of README.md and docs/**/*.md, in order (README first, then
the pages by path; a block the same as one before it, once), in one temporary folder holding a copy of sample_layers/, each block in a fresh
shell (bash -e -o pipefail) with a clean environment: PATH, HOME and TMPDIR, plus QGIS_CUSTOM_CONFIG_PATH
naming a profile in which the plugin is installed and enabled (as after installing it). A failing
block fails the test with its file:line, and so does a block whose standard output has a line joining
qgis_process's progress (0...10...20) and a log line.

    /usr/bin/python3 docs_commands.py <source dir> <build dir> <cmake>"""
import glob
import os
import re
import sys

import docs_util

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
BLOCK_TIMEOUT = 300


def blocks(path):
    """The ```sh blocks of a Markdown file: (line of the fence, text)."""
    found, lines = [], open(path, encoding="utf-8").read().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, language, start = m.group(2), m.group(3), i
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1
        if language == "sh":
            found.append((start + 1, "\n".join(body) + "\n"))
    return found


def pages(source_dir):
    readme = os.path.join(source_dir, "README.md")
    docs = sorted(glob.glob(os.path.join(source_dir, "docs", "**", "*.md"), recursive=True))
    return ([readme] if os.path.exists(readme) else []) + docs


def main(source_dir, build_dir, cmake):
    root = docs_util.workspace(source_dir, "docs-commands")
    profile = docs_util.install_plugin(cmake, build_dir, root)
    env = docs_util.clean_env(root, QGIS_CUSTOM_CONFIG_PATH=profile)
    work = os.path.join(root, "work")
    count = 0
    ran = {}  # a block's text: where it ran first (README repeats the quick start's block as it stands)
    for page in pages(source_dir):
        for line, text in blocks(page):
            where = "%s:%d" % (os.path.relpath(page, source_dir), line)
            if text in ran:
                print("same  %s as %s" % (where, ran[text]))
                continue
            ran[text] = where
            script = os.path.join(root, "block.sh")
            with open(script, "w", encoding="utf-8") as f:
                f.write(text)
            try:
                out = docs_util.run(["/bin/bash", "-e", "-o", "pipefail", script], env=env, cwd=work, what=where, timeout=BLOCK_TIMEOUT, stderr_apart=True)
                docs_util.check_lines(out, where)
                docs_util.check_inputs(root, where)
            except docs_util.Failure as failure:
                sys.exit("FAIL %s" % failure)
            except Exception as error:  # a timeout
                sys.exit("FAIL %s: %s" % (where, error))
            print("ok   %s" % where)
            count += 1
    if count == 0:
        sys.exit("FAIL no ```sh block in README.md or docs/")
    print("%d block(s) ran" % count)
    docs_util.clean_up()


if __name__ == "__main__":
    main(*sys.argv[1:4])
