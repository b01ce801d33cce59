"""The examples of docs/scripting.md, run as a user runs them, each in a fresh folder holding a copy
of the sample layers, with a clean environment (PATH, HOME, TMPDIR):

  pyqgis   docs/examples/standalone_anonymize.py (shown as it is in docs/scripting.md) with /usr/bin/python3, the build's plugin folder on
           QGIS_PLUGINPATH (no profile, nothing enabled): the release it writes is k-anonymous and
           holds the rows it reports.
  json     docs/examples/anonymize.json (shown as it is in docs/scripting.md), the JSON document that R's qgisprocess sends, run through
           qgis_process.bin: on its standard input (`run vbas:anonymize -`) where this QGIS reads
           one (3.24 and later), else turned into NAME=value arguments as qgisprocess does then;
           the release is k-anonymous and the log ends with the run's summary.
  repeat   the "Repeat this run" command of a report (report.html), run as printed in a fresh shell
           (env -i ... bash -c "<command>"): it reproduces the release's content (the same rows,
           as a multiset; the SEED it names draws the same sites).

    /usr/bin/python3 docs_examples.py pyqgis|json|repeat <source dir> <build dir> <cmake>"""
import html
import json
import os
import re
import subprocess
import sys

import docs_util

K = 5


def shown(source_dir, example):
    """docs/scripting.md shows the example file as it is."""
    with open(os.path.join(source_dir, "docs", "examples", example), encoding="utf-8") as f:
        text = f.read()
    with open(os.path.join(source_dir, "docs", "scripting.md"), encoding="utf-8") as f:
        if "\n" + text + "```" not in f.read():
            raise docs_util.Failure("docs/scripting.md does not show docs/examples/%s as it is" % example)


def pyqgis(source_dir, build_dir, cmake):
    shown(source_dir, "standalone_anonymize.py")
    root = docs_util.workspace(source_dir, "docs-pyqgis")
    work = os.path.join(root, "work")
    script = os.path.join(source_dir, "docs", "examples", "standalone_anonymize.py")
    out = docs_util.run(["/usr/bin/python3", script], env=docs_util.clean_env(root, QGIS_PLUGINPATH=build_dir), cwd=work, what="standalone_anonymize.py")
    m = re.search(r"released (\d+), suppressed (\d+)", out)
    if not m:
        raise docs_util.Failure("standalone_anonymize.py printed no counts:\n" + out[-2000:])
    docs_util.check_release(os.path.join(work, "out-pyqgis", "anonymized.gpkg"), K, int(m.group(1)))
    print("ok   the standalone script released %s rows, k-anonymous" % m.group(1))


def reads_json_stdin(env):
    """Whether this qgis_process reads the parameters as JSON from its standard input (QGIS 3.24 and later)."""
    p = subprocess.run([docs_util.QGIS_PROCESS, "--help"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return "STDIN" in p.stdout.decode("utf-8", "replace")


def as_arguments(inputs):
    """The JSON document's inputs as qgis_process arguments: a list gives the parameter once per value."""
    args = []
    for name, value in inputs.items():
        for v in value if isinstance(value, list) else [value]:
            args.append("%s=%s" % (name, v))
    return args


def json_input(source_dir, build_dir, cmake):
    shown(source_dir, "anonymize.json")
    root = docs_util.workspace(source_dir, "docs-json")
    work = os.path.join(root, "work")
    profile = docs_util.install_plugin(cmake, build_dir, root)
    env = docs_util.clean_env(root, QT_QPA_PLATFORM="offscreen", QGIS_CUSTOM_CONFIG_PATH=profile)
    with open(os.path.join(source_dir, "docs", "examples", "anonymize.json"), "rb") as f:
        document = f.read()
    inputs = json.loads(document)["inputs"]
    for destination in ("ANONYMIZED", "EVALUATION", "REPORT"):
        os.makedirs(os.path.join(work, os.path.dirname(inputs[destination])), exist_ok=True)
    if reads_json_stdin(env):
        how = "JSON on standard input"
        out = docs_util.run([docs_util.QGIS_PROCESS, "--json", "run", "vbas:anonymize", "-"], env=env, cwd=work, stdin=document, what="qgis_process run vbas:anonymize -")
    else:
        how = "arguments (this qgis_process reads no JSON input)"
        out = docs_util.run([docs_util.QGIS_PROCESS, "--json", "run", "vbas:anonymize", "--"] + as_arguments(inputs), env=env, cwd=work, what="qgis_process run vbas:anonymize --")
    document = json.loads(out[out.index("{"):])
    results, info = document["results"], document["log"]["info"]
    # The log ends with the run's summary (counts only).
    if not info[-1].startswith("Summary: %d records read; %d released, %d suppressed" % (results["RECORDS"], results["RELEASED"], results["SUPPRESSED"])):
        raise docs_util.Failure("the log does not end with the run's summary")
    docs_util.check_release(os.path.join(work, inputs["ANONYMIZED"]), int(inputs["K"]), results["RELEASED"])
    print("ok   anonymize.json through qgis_process as %s: %d rows released, k-anonymous" % (how, results["RELEASED"]))


def repeat(source_dir, build_dir, cmake):
    root = docs_util.workspace(source_dir, "e2e-repeat")
    work = os.path.join(root, "work")
    profile = docs_util.install_plugin(cmake, build_dir, root)
    env = docs_util.clean_env(root, QT_QPA_PLATFORM="offscreen", QGIS_CUSTOM_CONFIG_PATH=profile)
    os.makedirs(os.path.join(work, "out"))
    docs_util.run([docs_util.QGIS_PROCESS, "run", "vbas:anonymize", "--", "REGIONS=sample_layers/ny8_tracts.gpkg", "REGION_ID=AREAKEY",
                   "RECORDS=sample_layers/patients.gpkg", "RECORD_REGION=tract_id", "QI_FIELDS=age_group", "QI_FIELDS=sex", "QI_FIELDS=race",
                   "K=%d" % K, "METHOD=1", "SEEDING=1", "SITE_POINTS=out/sites.gpkg", "AGGREGATED=out/aggregated.gpkg", "LOOKUP=out/lookup.gpkg",
                   "ANONYMIZED=out/anonymized.gpkg", "VORONOI=out/voronoi.gpkg", "EVALUATION=out/evaluation.csv", "REPORT=out/report.html"],
                  env=env, cwd=work, what="the first run")
    first = docs_util.check_release(os.path.join(work, "out", "anonymized.gpkg"), K)
    with open(os.path.join(work, "out", "report.html"), encoding="utf-8") as f:
        m = re.search(r'<pre id="command">(.*?)</pre>', f.read(), re.S)
    if not m:
        raise docs_util.Failure("report.html has no command")
    command = html.unescape(m.group(1))
    # A fresh shell elsewhere, with nothing but PATH and HOME (and TMPDIR for QGIS's temporary folders).
    elsewhere = os.path.join(root, "home")
    docs_util.run(["env", "-i", "PATH=/usr/bin:/bin", "HOME=" + elsewhere, "TMPDIR=" + os.path.join(root, "tmp"), "bash", "-c", command],
                  env=docs_util.clean_env(root), cwd=elsewhere, what="the report's command")
    again = docs_util.check_release(os.path.join(work, "out", "anonymized.gpkg"), K)
    if again != first:
        raise docs_util.Failure("the report's command released other rows: %d and %d rows, %d distinct rows differ in count"
                                % (sum(first.values()), sum(again.values()), len(set((first - again) + (again - first)))))
    print("ok   the report's command reproduced the release (%d rows)" % sum(again.values()))


if __name__ == "__main__":
    try:
        {"pyqgis": pyqgis, "json": json_input, "repeat": repeat}[sys.argv[1]](*sys.argv[2:5])
        for root in docs_util.CREATED:
            docs_util.check_inputs(root, sys.argv[1])
        docs_util.clean_up()
    except docs_util.Failure as failure:
        sys.exit("FAIL %s" % failure)
