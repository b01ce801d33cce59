"""Runs inside QGIS desktop (`qgis --code desktop_check.py`), started by test_desktop under Xvfb.

Once QGIS is up, it runs vbas:anonymize on the sample layers with runAndLoadResults (as the Processing
toolbox does: the outputs are loaded and their post-processors run), checks the loaded layers'
renderers and their order, then runs vbas:evaluate of that release and checks its AGGREGATE_METRICS and
REGION_RISK layers' renderers, renders the map canvas to canvas.png, grabs the main window to window.png,
writes the colours the canvas must show to styles.json, and ends QGIS at once with exit code 0 when
every check passed, 1 otherwise (the messages go to stderr). Folders: VBAS_DESKTOP_OUT, VBAS_SAMPLE_DIR.
"""
import json
import os
import sys
import traceback

import processing
from qgis.core import Qgis, QgsMapRendererSequentialJob, QgsProject, QgsRectangle
from qgis.PyQt.QtCore import QEventLoop, QTimer, Qt
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


def save_images(layers):
    window = iface.mainWindow()
    window.resize(1600, 1000)
    canvas = iface.mapCanvas()
    extent = QgsRectangle(layers["AGGREGATED"].extent())
    extent.scale(1.05)
    canvas.setDestinationCrs(layers["AGGREGATED"].crs())
    canvas.setExtent(extent)
    wait_for_canvas(canvas)
    job = QgsMapRendererSequentialJob(canvas.mapSettings())
    job.start()
    job.waitForFinished()
    check(job.renderedImage().save(os.path.join(OUT, "canvas.png")), "canvas.png not saved")
    check(window.grab().save(os.path.join(OUT, "window.png")), "window.png not saved")


def main():
    try:
        layers = anonymize()
        if check(set(layers) == set(DESTINATIONS), "loaded: %s" % sorted(layers)):
            colours = check_renderers(layers)
            check_order(layers)
            save_images(layers)
            evaluate()
            with open(os.path.join(OUT, "styles.json"), "w") as f:
                json.dump(colours, f)
    except Exception:  # any error fails the test, with its traceback
        problems.append(traceback.format_exc())
    for problem in problems:
        print("desktop_check: " + problem, file=sys.stderr)
    sys.stderr.flush()
    os._exit(1 if problems else 0)  # at once: no exit dialogs, no shutdown of a session nobody looks at


QTimer.singleShot(0, main)  # once QGIS's event loop runs, with the plugins loaded
