"""Runs inside QGIS desktop (`qgis --code desktop_check.py`), started by test_desktop under Xvfb.

Once QGIS is up, it opens the Processing dialog of every vbas algorithm, checks that it shows every
parameter with its one-line tooltip, the main ones in the order of the definitions and the tuning ones
under Advanced Parameters (the order itself: tests/plugin/provider/test_dialog.cpp), and presses its Help button,
catching the URL QGIS opens (a handler of QDesktopServices): it must be the file URL of the algorithm's
page in the installed plugin's help folder, help/algorithms/<name>.html, an existing page whose title
names the algorithm; the URLs go to help.json. Then it makes the walkthrough's first Run from the real
dialog (first_run: the outputs the dialog starts with, a styled map and a report, the walkthrough's
screenshots). Then it runs vbas:anonymize on the sample layers with
runAndLoadResults (as the Processing toolbox does: the outputs are loaded and their post-processors
run), checks the loaded layers' renderers and their order, then runs vbas:evaluate of that release and
checks its AGGREGATE_METRICS and REGION_RISK layers' renderers, renders the map canvas to canvas.png,
grabs the main window to window.png, writes the colours the canvas must show to styles.json, and ends
QGIS at once with exit code 0 when every check passed, 1 otherwise (the messages go to stderr).
Folders: VBAS_DESKTOP_OUT, VBAS_SAMPLE_DIR.
"""
import html
import json
import os
import re
import sys
import traceback

import processing
from qgis.core import (Qgis, QgsApplication, QgsMapRendererSequentialJob, QgsProcessingParameterDefinition, QgsProject, QgsRectangle,
                       QgsVectorLayer, QgsWkbTypes)
from qgis.PyQt.QtCore import QEventLoop, QObject, QPoint, QTimer, Qt, QUrl, pyqtSlot
from qgis.PyQt.QtGui import QDesktopServices
from qgis.PyQt.QtWidgets import QApplication, QDialogButtonBox, QGroupBox, QWidget
from qgis.utils import iface

OUT = os.environ["VBAS_DESKTOP_OUT"]
SAMPLES = os.environ["VBAS_SAMPLE_DIR"]
DESTINATIONS = {"SITE_POINTS": "sites.gpkg", "AGGREGATED": "aggregated.gpkg", "LOOKUP": "lookup.gpkg",
                "ANONYMIZED": "anonymized.gpkg", "VORONOI": "voronoi.gpkg", "EVALUATION": "evaluation.csv"}
problems = []


def check(condition, message):
    if not condition:
        problems.append(message)
    return condition


def anonymize():
    """run_sample.sh's parameters with SEED = 1; the loaded layers by output name."""
    parameters = {"REGIONS": os.path.join(SAMPLES, "ny8_tracts.gpkg"), "REGION_ID": "AREAKEY",
                  "RECORDS": os.path.join(SAMPLES, "patients.gpkg"), "RECORD_REGION": "tract_id",
                  "QI_FIELDS": ["age_group", "sex", "race"], "K": 5, "SEED": 1}
    parameters.update({name: os.path.join(OUT, file) for name, file in DESTINATIONS.items()})
    processing.runAndLoadResults("vbas:anonymize", parameters)
    layers = {}
    for layer in QgsProject.instance().mapLayers().values():
        for name, file in DESTINATIONS.items():
            if layer.source().split("|")[0] == os.path.join(OUT, file):
                layers[name] = layer
    return layers


# docs/quickstart.md, "5. The same in QGIS desktop", steps 3 and 4: the layers a new user adds to the
# project, and what they pick in the dialog.
WALKTHROUGH_LAYERS = {"REGIONS": "ny8_tracts", "RECORDS": "patients"}
WALKTHROUGH = {"REGION_ID": "AREAKEY", "RECORD_REGION": "tract_id", "QI_FIELDS": ["age_group", "sex", "race"],
               "K": 5, "SENSITIVE_FIELD": "diagnosis"}
WALKTHROUGH_DIALOG_SIZE = (760, 860)  # test_desktop compares the images with docs/images/ by size


def first_run():
    """The walkthrough's first Run: the anonymize dialog with step 3's choices and every other value as
    the dialog starts it. It asks for the release, the aggregated regions and the report (temporary)
    and nothing else; run as the dialog runs it, the aggregates load styled and the report is written.
    The dialog and the main window are saved for the walkthrough (walkthrough-*.png, docs/images/), and
    the walkthrough's layers removed."""
    project = QgsProject.instance()
    before = set(project.mapLayers())
    layers = {name: QgsVectorLayer(os.path.join(SAMPLES, file + ".gpkg"), file, "ogr") for name, file in WALKTHROUGH_LAYERS.items()}
    project.addMapLayers(list(layers.values()))
    dialog = processing.createAlgorithmDialog("vbas:anonymize")
    dialog.show()
    dialog.resize(*WALKTHROUGH_DIALOG_SIZE)
    dialog.setParameters(dict(WALKTHROUGH, **layers))
    QApplication.processEvents()
    check(dialog.grab().save(os.path.join(OUT, "walkthrough-dialog.png")), "walkthrough-dialog.png not saved")
    parameters = dialog.createProcessingParameters()
    dialog.close()
    algorithm = dialog.algorithm()
    written = sorted(name for name in parameters if algorithm.parameterDefinition(name).isDestination())
    check(written == ["AGGREGATED", "ANONYMIZED", "REPORT"], "a first Run writes %s" % written)
    inputs = set(project.mapLayers())
    results = processing.runAndLoadResults("vbas:anonymize", parameters)
    made = [layer for key, layer in project.mapLayers().items() if key not in inputs]
    aggregated = [layer for layer in made if layer.geometryType() == QgsWkbTypes.PolygonGeometry]
    if check(len(aggregated) == 1, "a first Run added %s" % [layer.name() for layer in made]):
        renderer = aggregated[0].renderer()
        check(renderer.type() == "graduatedSymbol" and renderer.classAttribute() == "released",
              "a first Run's aggregated regions: renderer %s" % renderer.type())
        zoom_to(aggregated[0])
        iface.messageBar().clearWidgets()  # QGIS's own notices (a missing PROJ grid) go after a few seconds
        check(iface.mainWindow().grab().save(os.path.join(OUT, "walkthrough-map.png")), "walkthrough-map.png not saved")
    report = results.get("REPORT") or ""
    check(os.path.isfile(report) and os.path.getsize(report) > 0, "a first Run wrote no report: %r" % report)
    project.removeMapLayers([key for key in project.mapLayers() if key not in before])


EVALUATE_DESTINATIONS = {"AGGREGATE_METRICS": "aggregate_metrics.gpkg", "REGION_RISK": "region_risk.gpkg"}


def evaluate():
    """vbas:evaluate of that release, its per-aggregate and per-region layers loaded; their renderers checked."""
    parameters = {"REGIONS": os.path.join(SAMPLES, "ny8_tracts.gpkg"), "REGION_ID": "AREAKEY",
                  "RECORDS": os.path.join(SAMPLES, "patients.gpkg"), "RECORD_REGION": "tract_id",
                  "QI_FIELDS": ["age_group", "sex", "race"], "K": 5, "SENSITIVE_FIELD": "diagnosis",
                  "SITES": os.path.join(OUT, "sites.gpkg"), "LOOKUP": os.path.join(OUT, "lookup.gpkg"),
                  "EVALUATION": os.path.join(OUT, "evaluate.csv"), "REPORT": os.path.join(OUT, "report.html")}
    parameters.update({name: os.path.join(OUT, file) for name, file in EVALUATE_DESTINATIONS.items()})
    processing.runAndLoadResults("vbas:evaluate", parameters)
    found = set()
    for layer in QgsProject.instance().mapLayers().values():
        for name, field in (("AGGREGATE_METRICS", "released"), ("REGION_RISK", "risk_share")):
            if layer.source().split("|")[0] == os.path.join(OUT, EVALUATE_DESTINATIONS[name]):
                renderer = layer.renderer()
                check(renderer.type() == "graduatedSymbol" and renderer.classAttribute() == field,
                      "%s: renderer %s" % (name, renderer.type()))
                found.add(name)
    check(found == set(EVALUATE_DESTINATIONS), "loaded of evaluate: %s" % sorted(found))


def check_renderers(layers):
    """The outputs' styles; the colours the canvas must show."""
    aggregated, cells, sites = layers["AGGREGATED"].renderer(), layers["VORONOI"].renderer(), layers["SITE_POINTS"].renderer()
    check(aggregated.type() == "graduatedSymbol" and aggregated.classAttribute() == "released",
          "AGGREGATED: renderer %s" % aggregated.type())
    ranges = aggregated.ranges() if aggregated.type() == "graduatedSymbol" else []
    check(len(ranges) == 5, "AGGREGATED: %d classes" % len(ranges))
    check(all(a.upperValue() == b.lowerValue() < b.upperValue() for a, b in zip(ranges, ranges[1:])), "AGGREGATED: breaks not increasing")
    check(cells.type() == "singleSymbol" and cells.symbol().symbolLayer(0).brushStyle() == Qt.NoBrush, "VORONOI: not outlines only")
    check(sites.type() == "singleSymbol" and sites.symbol().type() == Qgis.SymbolType.Marker, "SITE_POINTS: not markers")
    if problems:
        return {}
    return {"classes": [r.symbol().color().name() for r in ranges],
            "outline": ranges[0].symbol().symbolLayer(0).strokeColor().name(),
            "cells": cells.symbol().symbolLayer(0).strokeColor().name(),
            "sites": sites.symbol().color().name()}


def check_order(layers):
    """Top to bottom in the layer tree: the sites, the cells, the aggregates."""
    order = [node.layerId() for node in QgsProject.instance().layerTreeRoot().findLayers()]
    positions = [order.index(layers[name].id()) for name in ("SITE_POINTS", "VORONOI", "AGGREGATED")]
    check(positions == sorted(positions), "layer order (sites, cells, aggregates): %s" % positions)


def wait_for_canvas(canvas):
    loop = QEventLoop()
    canvas.mapCanvasRefreshed.connect(loop.quit)
    QTimer.singleShot(60000, loop.quit)
    canvas.refreshAllLayers()
    loop.exec_()


def zoom_to(layer):
    """The main window at 1600 x 1000, its map canvas on layer, drawn."""
    iface.mainWindow().resize(1600, 1000)
    canvas = iface.mapCanvas()
    extent = QgsRectangle(layer.extent())
    extent.scale(1.05)
    canvas.setDestinationCrs(layer.crs())
    canvas.setExtent(extent)
    wait_for_canvas(canvas)


def save_images(layers):
    window = iface.mainWindow()
    canvas = iface.mapCanvas()
    zoom_to(layers["AGGREGATED"])
    job = QgsMapRendererSequentialJob(canvas.mapSettings())
    job.start()
    job.waitForFinished()
    check(job.renderedImage().save(os.path.join(OUT, "canvas.png")), "canvas.png not saved")
    check(window.grab().save(os.path.join(OUT, "window.png")), "window.png not saved")


class OpenedUrls(QObject):
    """Stands in for the browser: keeps the URLs QGIS asks QDesktopServices to open."""

    def __init__(self):
        super().__init__()
        self.urls = []

    @pyqtSlot(QUrl)
    def open(self, url):
        self.urls.append(url)


def help_button(dialog):
    boxes = [box for box in dialog.findChildren(QDialogButtonBox) if box.button(QDialogButtonBox.Help)]
    return boxes[0].button(QDialogButtonBox.Help) if boxes else None


ADVANCED = getattr(getattr(Qgis, "ProcessingParameterFlag", None), "Advanced", None) or QgsProcessingParameterDefinition.FlagAdvanced


def under_advanced(widget):
    """Whether widget is inside the dialog's Advanced Parameters group."""
    while widget is not None:
        if isinstance(widget, QGroupBox) and "Advanced" in widget.title():
            return True
        widget = widget.parentWidget()
    return False


def check_dialog(algorithm, dialog):
    """Every parameter shown with its tooltip (help()); the main ones top to bottom in the definitions'
    order, the advanced ones under Advanced Parameters."""
    QApplication.processEvents()
    shown = {}  # parameter id: the widgets whose tooltip is the parameter's (its label, or its check box)
    for widget in dialog.findChildren(QWidget):
        found = re.search(r"Python identifier: \W<i>(\w+)</i>\W", widget.toolTip())
        if found:
            shown.setdefault(found.group(1), []).append(widget)
    main, expected = [], []
    for definition in algorithm.parameterDefinitions():
        name, what = definition.name(), "%s %s" % (algorithm.id(), definition.name())
        if not check(name in shown, "%s: not in the dialog" % what):
            continue
        widgets = shown[name]
        check(definition.help() and all(definition.help() in w.toolTip() for w in widgets), "%s: tooltip %r" % (what, widgets[0].toolTip()))
        advanced = bool(definition.flags() & ADVANCED)
        check(all(under_advanced(w) == advanced for w in widgets), "%s: %s Advanced Parameters" % (what, "not under" if advanced else "under"))
        if not advanced and not definition.isDestination():
            expected.append(name)
            main.append((min(w.mapTo(dialog, QPoint(0, 0)).y() for w in widgets), name))
    check([name for _, name in sorted(main)] == expected, "%s: the dialog shows %s" % (algorithm.id(), [name for _, name in sorted(main)]))


def press_help(algorithm, opened):
    """Opens the algorithm's dialog, checks it (check_dialog), presses Help and returns the URL opened, or None."""
    dialog = processing.createAlgorithmDialog(algorithm.id())
    dialog.show()
    check_dialog(algorithm, dialog)
    button = help_button(dialog)
    opened.urls.clear()
    if check(button is not None and button.isEnabled(), "%s: no Help button" % algorithm.id()):
        button.click()
    dialog.close()
    check(len(opened.urls) == 1, "%s: Help opened %s" % (algorithm.id(), [u.toString() for u in opened.urls]))
    return opened.urls[0] if len(opened.urls) == 1 else None


def check_help_page(algorithm, url, help_dir):
    """url is the algorithm's existing page in the installed help, whose title names the algorithm."""
    page = os.path.join(help_dir, "algorithms", algorithm.name() + ".html")
    if not check(url.isLocalFile() and url.toLocalFile() == page and os.path.isfile(page),
                 "%s: Help opened %s, not the page %s" % (algorithm.id(), url.toString(), page)):
        return
    with open(page, encoding="utf-8") as f:
        title = re.search(r"<title>(.*?)</title>", f.read(), re.S)
    title = " ".join(html.unescape(title.group(1)).split()) if title else ""
    check(algorithm.displayName().lower() in title.lower() or algorithm.id() in title,
          "%s: the page %s has the title %r, which names neither %r nor %s" % (algorithm.id(), page, title, algorithm.displayName(), algorithm.id()))


def check_help():
    """Every vbas algorithm's Help button opens its page of the installed user guide; help.json: the URLs."""
    help_dir = os.path.join(os.path.dirname(sys.modules["vbas"].__file__), "help")
    opened = OpenedUrls()
    schemes = ("file", "http", "https")
    for scheme in schemes:
        QDesktopServices.setUrlHandler(scheme, opened, "open")
    urls = {}
    try:
        for algorithm in QgsApplication.processingRegistry().providerById("vbas").algorithms():
            url = press_help(algorithm, opened)
            if url is not None:
                urls[algorithm.id()] = url.toString()
                check_help_page(algorithm, url, help_dir)
    finally:
        for scheme in schemes:
            QDesktopServices.unsetUrlHandler(scheme)
    with open(os.path.join(OUT, "help.json"), "w") as f:
        json.dump({"help": help_dir, "urls": urls}, f)


def check_outputs():
    layers = anonymize()
    if check(set(layers) == set(DESTINATIONS), "loaded: %s" % sorted(layers)):
        colours = check_renderers(layers)
        check_order(layers)
        save_images(layers)
        evaluate()
        with open(os.path.join(OUT, "styles.json"), "w") as f:
            json.dump(colours, f)


def main():
    for step in (check_help, first_run, check_outputs):
        try:
            step()
        except Exception:  # any error fails the test, with its traceback
            problems.append(traceback.format_exc())
    for problem in problems:
        print("desktop_check: " + problem, file=sys.stderr)
    sys.stderr.flush()
    os._exit(1 if problems else 0)  # at once: no exit dialogs, no shutdown of a session nobody looks at


QTimer.singleShot(0, main)  # once QGIS's event loop runs, with the plugins loaded
