"""The plugin ZIP and plugins.xml as QGIS reads them (ctest: plugin_repository).

  python3 plugin_repository.py BUILD_FOLDER SOURCE_FOLDER

Merges the build's ZIP and a ZIP of the same plugin folder made for another QGIS release into one
repository with tools/plugin-repository, fetches its plugins.xml through a file:// URL with QGIS's own
Plugin Manager code (pyplugin_installer), which keeps only the entries compatible with the running QGIS:
exactly the build's ZIP must remain, and its range must hold this QGIS release and no other. Then the
ZIP, fetched from its download_url, is unpacked into a fresh QGIS profile, where qgis_process enables
the plugin and lists its algorithms.
"""
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, "/usr/share/qgis/python")  # QGIS's Plugin Manager code: pyplugin_installer

from qgis.core import Qgis, QgsApplication  # noqa: E402
from qgis.PyQt.QtCore import QEventLoop, QUrl  # noqa: E402
from qgis.PyQt.QtNetwork import QNetworkRequest  # noqa: E402

QGIS_PROCESS = "/usr/bin/qgis_process.bin"


def fail(message):
    sys.exit("FAILED: %s" % message)


def other_release(version):
    major, minor, patch = version.split(".")
    return "%s.%s.%d" % (major, minor, int(patch) + 1)


def make_repository(build, source, work):
    """A repository holding the build's ZIP and one made for the next patch release."""
    tool = [sys.executable, str(source / "tools" / "plugin-repository")]
    built = sorted((build / "plugin-repository").glob("vbas.*.zip"))
    if len(built) != 1:
        fail("the build wrote %d plugin ZIPs, not one" % len(built))
    with zipfile.ZipFile(built[0]) as archive:
        archive.extractall(work / "unpacked")
    subprocess.run(tool + ["zip", str(work / "unpacked" / "vbas"), other_release(running()), str(work / "other")], check=True)
    repository = work / "repository"
    subprocess.run(tool + ["merge", str(repository), str(built[0])] + [str(p) for p in (work / "other").glob("*.zip")], check=True)
    return repository, built[0].name


def running():
    return Qgis.QGIS_VERSION.split("-")[0]


def fetch_as_qgis(repository):
    """The plugins QGIS's Plugin Manager offers from this repository on this QGIS."""
    from pyplugin_installer.installer_data import Relay, Repositories, plugins, repositories
    repositories.mRepositories["test"] = {
        "url": (repository / "plugins.xml").as_uri(), "authcfg": "", "enabled": True, "valid": True,
        "Relay": Relay("test"), "xmlData": None, "state": Repositories.STATE_DISABLED, "error": ""}
    loop = QEventLoop()
    repositories.repositoryFetched.connect(lambda name: loop.quit())
    repositories.requestFetching("test")
    loop.exec_()
    state = repositories.mRepositories["test"]
    if state["state"] != Repositories.STATE_LOADED:
        fail("QGIS could not read the repository: %s" % state["error"])
    return plugins.repoCache.get("test", [])


def check_ranges(offered, zip_name):
    from pyplugin_installer.version_compare import isCompatible
    if [plugin["filename"] for plugin in offered] != [zip_name]:
        fail("QGIS %s is offered %s, not only %s" % (running(), [p["filename"] for p in offered], zip_name))
    plugin = offered[0]
    if plugin["id"] != "vbas":
        fail("the plugin's id is %s, not vbas" % plugin["id"])
    # The entry's own range, as QGIS reads it from plugins.xml (fetch_as_qgis kept it compatible).
    import xml.etree.ElementTree as ElementTree
    entry = [e for e in ElementTree.parse(repository_of(plugin) / "plugins.xml").getroot()
             if e.findtext("file_name") == zip_name][0]
    low, high = entry.findtext("qgis_minimum_version"), entry.findtext("qgis_maximum_version")
    major, minor, patch = (int(part) for part in running().split("."))
    neighbours = ["%d.%d.%d" % (major, minor, patch - 1), "%d.%d.%d" % (major, minor, patch + 1),
                  "%d.%d.0" % (major, minor + 1), "%d.99.0" % major]
    if not isCompatible(running(), low, high) or any(isCompatible(v, low, high) for v in neighbours):
        fail("the range %s..%s is not exactly QGIS %s" % (low, high, running()))
    print("plugins.xml: QGIS %s is offered %s only, range %s..%s" % (running(), zip_name, low, high))
    return plugin["download_url"]


def repository_of(plugin):
    return pathlib.Path(QUrl(plugin["download_url"]).toLocalFile()).parent


def download(url, target):
    """The ZIP fetched through QGIS's network access manager, as the Plugin Manager fetches it."""
    from qgis.core import QgsNetworkAccessManager
    reply = QgsNetworkAccessManager.instance().blockingGet(QNetworkRequest(QUrl(url)))
    if not reply.content().size():
        fail("nothing at %s: %s" % (url, reply.errorString()))
    target.write_bytes(bytes(reply.content()))


ALGORITHMS = ("Anonymize (whole VBAS pipeline)", "Estimate site count", "Place sites", "Voronoi aggregation", "Evaluate release",
              "Generalize and aggregate", "Check anonymity of a table", "LP geomasking of postal codes")


def check_metadata(zip_path):
    """The ZIP's metadata.txt names no placeholder address and its about text names all eight algorithms."""
    with zipfile.ZipFile(zip_path) as archive:
        metadata = archive.read("vbas/metadata.txt").decode("utf-8")
    if "example.org" in metadata or "example.com" in metadata:
        fail("metadata.txt names a placeholder address")
    about = next((line for line in metadata.splitlines() if line.startswith("about=")), "")
    missing = [name for name in ALGORITHMS if name not in about]
    if missing:
        fail("metadata.txt's about does not name %s" % ", ".join(missing))
    print("metadata.txt: no placeholder, the eight algorithms named")


def load_in_fresh_profile(zip_path, work):
    profile = work / "profile"
    plugins = profile / "profiles" / "default" / "python" / "plugins"
    plugins.mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(plugins)
    environment = dict(os.environ, QT_QPA_PLATFORM="offscreen", QGIS_CUSTOM_CONFIG_PATH=str(profile))
    environment.pop("QGIS_PLUGINPATH", None)
    run = lambda *args: subprocess.run([QGIS_PROCESS] + list(args), env=environment, capture_output=True, text=True)
    enabled = run("plugins", "enable", "vbas")
    listed = run("list").stdout
    if "vbas:anonymize" not in listed:
        fail("the ZIP unpacked into a fresh profile did not load: %s%s" % (enabled.stdout, enabled.stderr))
    print("The ZIP loads in a fresh profile: %d vbas algorithms" % listed.count("vbas:"))


def main():
    build, source = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    application = QgsApplication([], False)
    application.initQgis()
    with tempfile.TemporaryDirectory() as folder:
        work = pathlib.Path(folder)
        repository, zip_name = make_repository(build, source, work)
        url = check_ranges(fetch_as_qgis(repository), zip_name)
        download(url, work / "downloaded.zip")
        check_metadata(work / "downloaded.zip")
        load_in_fresh_profile(work / "downloaded.zip", work)
    application.exitQgis()


if __name__ == "__main__":
    main()
