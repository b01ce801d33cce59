"""Helpers of the tests of the printed commands and examples (run with /usr/bin/python3): a fresh
folder holding a copy of the sample layers, the plugin installed and enabled in a QGIS profile of its
own (as .ci/setup installs it), a clean environment, and the release read back and checked.

Privacy: nothing here prints a value of a record; failures name files, fields and counts."""
import collections
import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile

QGIS_PROCESS = "/usr/bin/qgis_process.bin"
QIS = ("age_group", "sex", "race")


class Failure(Exception):
    pass


#: The folders made by workspace(): removed by clean_up() once the test has passed (kept for a look when it fails).
CREATED = []
#: The inputs of each workspace, file by file with their SHA-256, as the copy made them.
INPUTS = {}


def clean_up():
    for root in CREATED:
        shutil.rmtree(root, ignore_errors=True)


def workspace(source_dir, name):
    """A new folder under TMPDIR holding a copy of sample_layers/, and a HOME of its own."""
    root = tempfile.mkdtemp(prefix=name + "-", dir=os.environ.get("TMPDIR"))
    CREATED.append(root)
    shutil.copytree(os.path.join(source_dir, "sample_layers"), os.path.join(root, "work", "sample_layers"))
    INPUTS[root] = fingerprint(os.path.join(root, "work", "sample_layers"))
    os.makedirs(os.path.join(root, "home"))
    os.makedirs(os.path.join(root, "tmp"))
    return root


def fingerprint(folder):
    """Every file under folder (its path relative to folder) with the SHA-256 of its bytes."""
    prints = {}
    for parent, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(parent, name)
            with open(path, "rb") as f:
                prints[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return prints


def check_inputs(root, what):
    """The sample layers of the workspace are byte for byte as copied: no input changed, added to or lost."""
    now = fingerprint(os.path.join(root, "work", "sample_layers"))
    if now != INPUTS[root]:
        changed = sorted(name for name in set(now) | set(INPUTS[root]) if now.get(name) != INPUTS[root].get(name))
        raise Failure("%s changed the inputs: sample_layers/%s" % (what, ", sample_layers/".join(changed)))


def clean_env(root, **extra):
    """A fresh shell's environment: PATH and HOME only (and TMPDIR, so that QGIS's temporary folders stay in the test's)."""
    env = {"PATH": "/usr/bin:/bin", "HOME": os.path.join(root, "home"), "TMPDIR": os.path.join(root, "tmp")}
    env.update(extra)
    return env


def install_plugin(cmake, build_dir, root):
    """The plugin installed into a profile of its own and enabled, as .ci/setup does for build/qgis-profile; its path."""
    profile = os.path.join(root, "qgis-profile")
    plugins = os.path.join(profile, "profiles", "default", "python", "plugins")
    run([cmake, "--install", build_dir, "--prefix", plugins], env=clean_env(root), what="cmake --install")
    run([QGIS_PROCESS, "plugins", "enable", "vbas"], env=clean_env(root, QT_QPA_PLATFORM="offscreen", QGIS_CUSTOM_CONFIG_PATH=profile),
        what="qgis_process plugins enable vbas")
    return profile


def run(args, env, what, cwd=None, stdin=None, timeout=600, stderr_apart=False):
    """Runs args, which must succeed; the output's tail on failure. Its output, with stderr's unless stderr_apart."""
    p = subprocess.run(args, env=env, cwd=cwd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE if stderr_apart else subprocess.STDOUT, timeout=timeout)
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        raise Failure("%s failed (exit %d):\n%s" % (what, p.returncode, (out + (p.stderr or b"").decode("utf-8", "replace"))[-3000:]))
    return out


PROGRESS = re.compile(r"^(?:\d+|\.)+(?: - done\.)?$")
GLUED = re.compile(r"^(?:\.|\d+\.\.)")


def check_lines(out, what):
    """No line of qgis_process's standard output holds its progress (0...10...20) and a log line together."""
    for number, line in enumerate(out.splitlines(), 1):
        if GLUED.match(line) and not PROGRESS.match(line):
            raise Failure("%s: line %d of its output joins progress and a log line: %r" % (what, number, line[:80]))


def release_rows(path):
    """The rows of the release (a GeoPackage), every field but fid, as a multiset; and the field names."""
    with sqlite3.connect("file:%s?mode=ro" % path, uri=True) as db:
        table = db.execute("SELECT table_name FROM gpkg_contents").fetchone()[0]
        fields = [row[1] for row in db.execute('PRAGMA table_info("%s")' % table.replace('"', '""')) if row[1] != "fid"]
        select = ", ".join('"%s"' % f for f in fields)
        rows = collections.Counter(db.execute('SELECT %s FROM "%s"' % (select, table.replace('"', '""'))))
    return rows, fields


def check_release(path, k, released=None):
    """The release holds the QIs and aggregate_id, released rows if given, and every (aggregate, QIs) class has k rows or more."""
    if not os.path.isfile(path):
        raise Failure("%s was not written" % path)
    rows, fields = release_rows(path)
    for field in QIS + ("aggregate_id",):
        if field not in fields:
            raise Failure("%s has no field %s (fields: %s)" % (path, field, ", ".join(fields)))
    total = sum(rows.values())
    if released is not None and total != released:
        raise Failure("%s holds %d rows, the run said %d released" % (path, total, released))
    if total == 0:
        raise Failure("%s is empty" % path)
    key = [fields.index(f) for f in ("aggregate_id",) + QIS]
    classes = collections.Counter()
    for row, n in rows.items():
        classes[tuple(row[i] for i in key)] += n
    smallest = min(classes.values())
    if smallest < k:
        raise Failure("%s: a class of (aggregate_id, QIs) holds %d rows, fewer than k = %d" % (path, smallest, k))
    return rows
