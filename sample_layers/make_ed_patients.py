#!/usr/bin/python3
"""Generate ``ed_patients.gpkg``: a synthetic emergency-department patient list for LP geomasking.

Run with the system interpreter (it needs GDAL's Python bindings, ``osgeo``):

    /usr/bin/python3 sample_layers/make_ed_patients.py

It stands for the setting of Jung and El Emam's LP geomasking paper (2014): a hospital shares the codes of
its emergency patients during an influenza season, and the codes are randomised by vbas:lpgeomask.
Here the 281 NY8 tracts (``ny8_tracts.gpkg``, ``POP8`` as population) stand for the postal codes.

Output: ``ed_patients.gpkg`` (next to this script; rewritten on every run), one attribute-only table
``ed_patients`` with N_PATIENTS = 224 rows (the paper's number of patients), all synthetic:

    patient_id  Integer  1..N, also the FID; rows are in this order
    tract_id    String   an AREAKEY of ny8_tracts: the code to randomise
    age_group   String   "0-4" / "5-9" / "10-17" (a children's hospital), weights 40 / 30 / 30
    ili         String   "yes" / "no": influenza-like illness, weights 35 / 65

Determinism: one ``random.Random(SEED)``, SEED = 20261122, only ``rng.random()`` is called and
weighted draws bisect cumulative integer weights; tracts sorted by AREAKEY; per patient, in this
order, one draw for the tract (probability proportional to POP8), one for the age group, one for ili.
"""
import bisect
import os
import random

from osgeo import ogr

SEED = 20261122
N_PATIENTS = 224
HERE = os.path.dirname(os.path.abspath(__file__))
AGE_GROUPS = [("0-4", 40), ("5-9", 30), ("10-17", 30)]
ILI = [("yes", 35), ("no", 65)]


def weighted(rng, items):
    """One of items (value, integer weight), drawn with one rng.random()."""
    cumulative = []
    total = 0
    for _, weight in items:
        total += weight
        cumulative.append(total)
    return items[bisect.bisect_right(cumulative, rng.random() * total)][0]


def main():
    source = ogr.Open(os.path.join(HERE, "ny8_tracts.gpkg"))
    tracts = sorted((f.GetField("AREAKEY"), f.GetField("POP8")) for f in source.GetLayer(0))
    rng = random.Random(SEED)
    os.environ["OGR_CURRENT_DATE"] = "2026-11-22T00:00:00.000Z"
    path = os.path.join(HERE, "ed_patients.gpkg")
    if os.path.exists(path):
        os.remove(path)
    out = ogr.GetDriverByName("GPKG").CreateDataSource(path)
    layer = out.CreateLayer("ed_patients", geom_type=ogr.wkbNone, options=["FID=patient_id"])
    for name in ("tract_id", "age_group", "ili"):
        layer.CreateField(ogr.FieldDefn(name, ogr.OFTString))
    layer.StartTransaction()
    for patient in range(1, N_PATIENTS + 1):
        feature = ogr.Feature(layer.GetLayerDefn())
        feature.SetFID(patient)
        feature.SetField("tract_id", weighted(rng, tracts))
        feature.SetField("age_group", weighted(rng, AGE_GROUPS))
        feature.SetField("ili", weighted(rng, ILI))
        layer.CreateFeature(feature)
    layer.CommitTransaction()


if __name__ == "__main__":
    main()
