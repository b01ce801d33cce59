"""What tools/plugin-repository refuses, and what it leaves out (ctest: plugin_repository_refusals).

  python3 plugin_repository_refusals.py TOOL

Runs TOOL (tools/plugin-repository) on plugin folders and ZIPs made here, no build needed. Every ZIP
`merge` or `index` cannot serve safely is refused with exit status 1 and one line naming it, no
traceback, and the repository stays as it was (the refused ZIP is not in it, plugins.xml unchanged, a
later merge works); a ZIP of a served name with other content needs --replace; the same ZIP again
changes nothing; names with "#", "?" or a space are percent-encoded in download_url; `zip` refuses a
symbolic link and packs no version-control folder. Every case runs; each failing one is reported.
"""
import io
import pathlib
import subprocess
import sys
import tempfile
import urllib.request
import warnings
import zipfile
from xml.etree import ElementTree

SERVED = "vbas.0.2.0-qgis3.22.16.zip"
METADATA = {"name": "VBAS", "version": "0.2.0", "qgisMinimumVersion": "3.22.16", "qgisMaximumVersion": "3.22.16",
            "description": "k-anonymous release", "about": "line one\n  line two", "author": "VBAS team"}
VERSION_CONTROL = (".git", ".svn", ".hg", ".bzr")


class Failure(Exception):
    pass


def metadata_text(**changes):
    fields = dict(METADATA, **changes)
    return "[general]\n" + "".join("%s=%s\n" % (key, value) for key, value in fields.items() if value is not None)


def make_zip(path, metadata=None, extra=()):
    """A plugin ZIP: vbas/metadata.txt (bytes or text; None for none), vbas/__init__.py and extra entries
    ((ZipInfo or name, content))."""
    with zipfile.ZipFile(path, "w") as archive:
        if metadata is not None:
            archive.writestr("vbas/metadata.txt", metadata)
        archive.writestr("vbas/__init__.py", "def classFactory(iface):\n    pass\n")
        for name, content in extra:
            archive.writestr(name, content)
    return path


def damaged_zip():
    """A ZIP whose vbas/__init__.py does not match its checksum."""
    data = make_zip(io.BytesIO(), metadata_text()).getvalue()
    return data.replace(b"classFactory", b"classFactorz")


def symlink_entry(name, target):
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = 0o120777 << 16
    return info, target


def run(tool, *args):
    return subprocess.run([sys.executable, tool] + [str(a) for a in args], capture_output=True, text=True)


def snapshot(folder):
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def check(condition, message):
    if not condition:
        raise Failure(message)


def check_refused(result, name, reason=""):
    """Exit status 1 and one line on stderr that names name (and holds reason), no traceback."""
    lines = result.stderr.strip().splitlines()
    check(result.returncode == 1, "exit status %d, not 1; stderr: %s" % (result.returncode, result.stderr.strip()[-300:]))
    check("Traceback" not in result.stderr, "a traceback: %s" % result.stderr.strip().splitlines()[-1])
    check(len(lines) == 1 and name in lines[0] and reason in lines[0],
          "the message is not one line naming %s%s: %r" % (name, " and " + reason if reason else "", result.stderr))


def served_repository(tool, work):
    """A repository serving one good ZIP."""
    repository = work / "repository"
    result = run(tool, "merge", repository, make_zip(work / SERVED, metadata_text()))
    check(result.returncode == 0, "a good ZIP is not merged: %s" % result.stderr.strip())
    return repository


def entries(repository):
    """{file_name: pyqgis_plugin element} of plugins.xml, which must parse."""
    root = ElementTree.parse(repository / "plugins.xml").getroot()
    return {element.findtext("file_name"): element for element in root}


def refused_merge(reason, metadata=None, extra=(), raw=None):
    """A case: merging this ZIP (make_zip's, or the bytes raw) is refused; the repository stays as it was."""
    def case(tool, work):
        repository = served_repository(tool, work)
        before = snapshot(repository)
        bad = work / "incoming" / "vbas.9.9.9-qgis3.22.16.zip"
        if raw is None:
            make_zip(bad, metadata, extra)
        else:
            bad.write_bytes(raw)
        check_refused(run(tool, "merge", repository, bad), bad.name, reason)
        check(snapshot(repository) == before, "the repository changed: %s" % sorted(snapshot(repository)))
        later = run(tool, "merge", repository, make_zip(work / "vbas.0.2.1-qgis3.22.17.zip", metadata_text(version="0.2.1")))
        check(later.returncode == 0, "a later good merge fails: %s" % later.stderr.strip()[-300:])
    return case


def served_name_replaced(tool, work):
    repository = served_repository(tool, work)
    before = snapshot(repository)
    downgrade = make_zip(work / "incoming" / SERVED, metadata_text(version="0.1.0"))
    check_refused(run(tool, "merge", repository, downgrade), SERVED, "--replace")
    check(snapshot(repository) == before, "the served ZIP or plugins.xml changed")
    replaced = run(tool, "merge", repository, downgrade, "--replace")
    check(replaced.returncode == 0, "--replace fails: %s" % replaced.stderr.strip())
    check((repository / SERVED).read_bytes() == downgrade.read_bytes(), "--replace did not replace the ZIP")
    check(entries(repository)[SERVED].findtext("version") == "0.1.0", "plugins.xml does not list the replacement")


def same_zip_again(tool, work):
    repository = served_repository(tool, work)
    before = snapshot(repository)
    for same in (work / SERVED, repository / SERVED):  # a copy of it, and the served file itself
        again = run(tool, "merge", repository, same)
        check(again.returncode == 0, "merging %s again fails: %s" % (same, again.stderr.strip()[-300:]))
        said = [line for line in again.stdout.splitlines() if SERVED in line and "already" in line]
        check(len(said) == 1, "no one line saying the ZIP is already there: %r" % again.stdout)
        check(snapshot(repository) == before, "the repository changed")


def names_percent_encoded(tool, work):
    repository = served_repository(tool, work)
    odd = make_zip(work / "vbas.0.3.0 #1?x-qgis3.22.16.zip", metadata_text(version="0.3.0"))
    result = run(tool, "merge", repository, odd)
    check(result.returncode == 0, "a ZIP named with # ? and a space is not merged: %s" % result.stderr.strip()[-300:])
    url = entries(repository)[odd.name].findtext("download_url")
    check(url.endswith("vbas.0.3.0%20%231%3Fx-qgis3.22.16.zip"), "download_url not percent-encoded: %s" % url)
    with urllib.request.urlopen(url) as response:
        check(response.read() == odd.read_bytes(), "download_url %s does not fetch the ZIP" % url)


def index_refuses_a_bad_zip(tool, work):
    repository = served_repository(tool, work)
    make_zip(repository / "vbas.0.1.0-qgis3.22.16.zip", metadata_text(version=None))
    before = snapshot(repository)
    check_refused(run(tool, "index", repository), "vbas.0.1.0-qgis3.22.16.zip", "version")
    check(snapshot(repository) == before, "plugins.xml changed")


def plugin_folder(work):
    folder = work / "folder" / "vbas"
    (folder / "icons").mkdir(parents=True)
    (folder / "metadata.txt").write_text(metadata_text(), encoding="utf-8")
    (folder / "__init__.py").write_text("def classFactory(iface):\n    pass\n")
    (folder / "icons" / "vbas.svg").write_text("<svg/>\n")
    return folder


def zip_refuses_a_link(tool, work):
    folder = plugin_folder(work)
    secret = work / "secret.txt"
    secret.write_text("outside the plugin folder\n")
    (folder / "icons" / "link.svg").symlink_to(secret)
    check_refused(run(tool, "zip", folder, "3.22.16", work / "out"), "link.svg", "link")
    check(not list(work.glob("out/*.zip")), "a ZIP was written: %s" % list(work.glob("out/*")))


def zip_leaves_out_version_control(tool, work):
    folder = plugin_folder(work)
    for name in VERSION_CONTROL:
        (folder / name).mkdir()
        (folder / name / "config").write_text("[core]\n")
    result = run(tool, "zip", folder, "3.22.16", work / "out")
    check(result.returncode == 0, "zip fails: %s" % result.stderr.strip()[-300:])
    with zipfile.ZipFile(work / "out" / SERVED) as archive:
        packed = [name for name in archive.namelist() if name.split("/")[1] in VERSION_CONTROL]
    check(not packed, "version-control files packed: %s" % packed)


CASES = {
    "merge: no metadata.txt": refused_merge("metadata.txt"),
    "merge: no version": refused_merge("version", metadata_text(version=None)),
    "merge: Latin-1 metadata.txt": refused_merge("UTF-8", metadata_text(description="Caf\xe9").encode("latin-1")),
    "merge: not a ZIP": refused_merge("ZIP", raw=b"this is not a ZIP\n"),
    "merge: a control character": refused_merge("description", metadata_text(description="bell\x07")),
    "merge: an entry with ..": refused_merge("..", metadata_text(), [("vbas/../evil.py", "x")]),
    "merge: an absolute entry": refused_merge("absolute", metadata_text(), [("/tmp/evil.py", "x")]),
    "merge: a symbolic link entry": refused_merge("link", metadata_text(), [symlink_entry("vbas/passwd", "/etc/passwd")]),
    "merge: a second folder": refused_merge("other/x.py", metadata_text(), [("other/x.py", "x")]),
    "merge: an entry twice": refused_merge("twice", metadata_text(), [("vbas/__init__.py", "again")]),
    "merge: a damaged entry": refused_merge("damaged", raw=damaged_zip()),
    "merge: a served name, other content": served_name_replaced,
    "merge: the same ZIP again": same_zip_again,
    "merge: names with # ? and a space": names_percent_encoded,
    "index: a bad ZIP in the repository": index_refuses_a_bad_zip,
    "zip: a symbolic link": zip_refuses_a_link,
    "zip: version-control folders": zip_leaves_out_version_control,
}


def main():
    warnings.filterwarnings("ignore", "Duplicate name", UserWarning)  # the entry twice, on purpose
    tool = sys.argv[1]
    failed = 0
    for label, case in CASES.items():
        with tempfile.TemporaryDirectory() as folder:
            work = pathlib.Path(folder)
            (work / "incoming").mkdir()
            try:
                case(tool, work)
                print("ok: %s" % label)
            except Failure as failure:
                failed += 1
                print("FAILED: %s: %s" % (label, failure))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
