#!/usr/bin/env python3
"""Runs vbas:anonymize on the sample layers from a standalone PyQGIS script (no QGIS desktop).

Run it with Debian's Python, from a folder holding the sample layers (sample_layers/...):

    /usr/bin/python3 standalone_anonymize.py

It writes its outputs into out-pyqgis/ and prints counts only. The plugin is looked for where QGIS
looks for it: the folders of QGIS_PLUGINPATH, the QGIS profile's python/plugins folder
(QGIS_CUSTOM_CONFIG_PATH, or ~/.local/share/QGIS/QGIS3), and QGIS's own python/plugins folder
(/usr/share/qgis/python/plugins, where the package installs it).
"""
import os
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # no display needed

from qgis.core import QgsApplication, QgsVectorLayer  # noqa: E402

# 1. Start QGIS without a GUI; the prefix is where QGIS is installed (/usr on Debian).
QgsApplication.setPrefixPath("/usr", True)
app = QgsApplication([], False)
app.initQgis()

# 2. The folders that hold plugins, searched in QGIS's order; Processing itself is one of QGIS's own.
plugin_folders = [p for p in os.environ.get("QGIS_PLUGINPATH", "").split(os.pathsep) if p]
plugin_folders += [os.path.join(QgsApplication.qgisSettingsDirPath(), "python", "plugins"),
                   os.path.join(QgsApplication.pkgDataPath(), "python", "plugins")]
sys.path[:0] = plugin_folders

# 3. Initialise Processing (it registers QGIS's own providers).
import processing  # noqa: E402
from processing.core.Processing import Processing  # noqa: E402

Processing.initialize()

# 4. A standalone script loads no plugin by itself: load vbas and start it, which registers its
#    Processing provider (vbas:...). Both return False when the plugin is not found or fails.
import qgis.utils  # noqa: E402

if not qgis.utils.loadPlugin("vbas") or not qgis.utils.startPlugin("vbas"):
    sys.exit("The plugin vbas was not found in %s" % os.pathsep.join(plugin_folders))

# 5. Run the whole pipeline. Multiple values (QI_FIELDS) are a list; every output is a path.
os.makedirs("out-pyqgis", exist_ok=True)
results = processing.run("vbas:anonymize", {
    "REGIONS": "sample_layers/ny8_tracts.gpkg",
    "REGION_ID": "AREAKEY",
    "RECORDS": "sample_layers/patients.gpkg",
    "RECORD_REGION": "tract_id",
    "QI_FIELDS": ["age_group", "sex", "race"],
    "K": 5,
    "SENSITIVE_FIELD": "diagnosis",
    "SITE_POINTS": "out-pyqgis/sites.gpkg",
    "AGGREGATED": "out-pyqgis/aggregated.gpkg",
    "LOOKUP": "out-pyqgis/lookup.gpkg",
    "ANONYMIZED": "out-pyqgis/anonymized.gpkg",
    "VORONOI": "out-pyqgis/voronoi.gpkg",
    "EVALUATION": "out-pyqgis/evaluation.csv",
    "REPORT": "out-pyqgis/report.html",
})

# 6. The results: the numbers (as qgis_process --json gives them) and the outputs' paths.
print("released %d, suppressed %d (%.2f%%), %d aggregated regions, smallest class %d"
      % (results["RELEASED"], results["SUPPRESSED"], results["SUPPRESSED_PERCENT"], results["AGGREGATES"], results["SMALLEST_EC"]))
release = QgsVectorLayer(results["ANONYMIZED"], "release", "ogr")
print("release: %s, %d rows, fields %s" % (results["ANONYMIZED"], release.featureCount(), ", ".join(release.fields().names())))

del release
app.exitQgis()
