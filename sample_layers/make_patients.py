#!/usr/bin/python3
"""Generate the synthetic patient table ``patients.gpkg`` for the VBAS sample data.

Run with the system interpreter (it needs GDAL's Python bindings, ``osgeo``):

    /usr/bin/python3 sample_layers/make_patients.py

Input
-----
``ny8_tracts.gpkg`` (next to this script), layer ``ny8_tracts``: the 281 census
tracts of the NY8 data set (eight counties of central New York state, 1980
census; Waller & Gotway, "Applied Spatial Statistics for Public Health Data",
Wiley 2004), taken from the R package spData as shipped by the Debian package
r-cran-spdata (file spData/shapes/NY8_bna_utm18.gpkg, licence CC0).  Fields:
``AREAKEY`` (text, 11-digit state+county+tract FIPS code, unique) and ``POP8``
(integer, 1980 tract population; total 1,057,673, no tract has 0).

Output
------
``patients.gpkg`` (next to this script; deleted and rewritten on every run),
one attribute-only table (no geometry) named ``patients`` with N_PATIENTS =
40,000 rows.  All patients are synthetic: no real person is represented.

    patient_id  Integer  1..N, also used as the FID; rows are in this order
    tract_id    String   an AREAKEY value of ny8_tracts
    age_group   String   "0-9", "10-19", ..., "70-79", "80+"
    sex         String   "F" / "M"
    race        String   see below
    insurance   String   "private" / "medicare" / "medicaid" / "uninsured"
    diagnosis   String   ICD-10 chapter-like label (the sensitive attribute)

Determinism
-----------
A single ``random.Random(SEED)`` with SEED = 20240601 drives everything; only
``rng.random()`` is called, and weighted draws are done here by bisecting
cumulative integer weights, so the result does not depend on the
implementation of ``random.choices``.  Tracts are sorted by AREAKEY before
drawing.  For every patient, in this order, one draw each for: tract, age
group, sex, race, insurance (conditional on age group), diagnosis.  Running
the script twice gives identical rows in identical order (OGR_CURRENT_DATE is
also pinned so that the GeoPackage metadata timestamp does not change).

Distributions (weights in per mille unless stated)
--------------------------------------------------
tract      probability proportional to POP8 (a tract with POP8 = 0 would get
           no patients; there are none in NY8).
age_group  roughly the US 2020 census age pyramid:
           0-9 120, 10-19 129, 20-29 137, 30-39 133, 40-49 123, 50-59 130,
           60-69 117, 70-79 73, 80+ 38.
sex        F 510, M 490.
race       roughly New York State 2020 (Hispanic as its own category):
           White 550, Hispanic 190, Black 140, Asian 90, Other 30.
insurance  conditional on age group (loosely US-like):
           0-9, 10-19:        private 550, medicaid 400, uninsured 50
           20-29:             private 620, medicaid 200, uninsured 160,
                              medicare 20
           30-39 ... 50-59:   private 700, medicaid 170, uninsured 100,
                              medicare 30
           60-69:             private 500, medicare 350, medicaid 100,
                              uninsured 50
           70-79, 80+:        medicare 900, medicaid 70, private 30
diagnosis  independent of everything else:
           "I: circulatory" 140, "J: respiratory" 120,
           "M: musculoskeletal" 110, "E: endocrine/metabolic" 100,
           "F: mental/behavioural" 90, "K: digestive" 80,
           "S-T: injury/poisoning" 80, "N: genitourinary" 70,
           "C-D: neoplasms" 60, "L: skin" 40, "G: nervous system" 40,
           "H: eye/ear" 40, "A-B: infectious" 30.
"""

import bisect
import os
import random
import sys

from osgeo import gdal, ogr

SEED = 20240601
N_PATIENTS = 40000

HERE = os.path.dirname(os.path.abspath(__file__))
TRACTS_PATH = os.path.join(HERE, "ny8_tracts.gpkg")
TRACTS_LAYER = "ny8_tracts"
TRACT_ID_FIELD = "AREAKEY"
POP_FIELD = "POP8"
OUT_PATH = os.path.join(HERE, "patients.gpkg")
OUT_LAYER = "patients"

AGE_GROUPS = [
    ("0-9", 120), ("10-19", 129), ("20-29", 137), ("30-39", 133),
    ("40-49", 123), ("50-59", 130), ("60-69", 117), ("70-79", 73),
    ("80+", 38),
]
SEX = [("F", 510), ("M", 490)]
RACE = [("White", 550), ("Hispanic", 190), ("Black", 140), ("Asian", 90),
        ("Other", 30)]
_INS_CHILD = [("private", 550), ("medicaid", 400), ("uninsured", 50)]
_INS_YOUNG = [("private", 620), ("medicaid", 200), ("uninsured", 160),
              ("medicare", 20)]
_INS_ADULT = [("private", 700), ("medicaid", 170), ("uninsured", 100),
              ("medicare", 30)]
_INS_60S = [("private", 500), ("medicare", 350), ("medicaid", 100),
            ("uninsured", 50)]
_INS_OLD = [("medicare", 900), ("medicaid", 70), ("private", 30)]
INSURANCE_BY_AGE = {
    "0-9": _INS_CHILD, "10-19": _INS_CHILD, "20-29": _INS_YOUNG,
    "30-39": _INS_ADULT, "40-49": _INS_ADULT, "50-59": _INS_ADULT,
    "60-69": _INS_60S, "70-79": _INS_OLD, "80+": _INS_OLD,
}
DIAGNOSIS = [
    ("I: circulatory", 140), ("J: respiratory", 120),
    ("M: musculoskeletal", 110), ("E: endocrine/metabolic", 100),
    ("F: mental/behavioural", 90), ("K: digestive", 80),
    ("S-T: injury/poisoning", 80), ("N: genitourinary", 70),
    ("C-D: neoplasms", 60), ("L: skin", 40), ("G: nervous system", 40),
    ("H: eye/ear", 40), ("A-B: infectious", 30),
]


class Picker:
    """Weighted draw from (value, integer weight) pairs using rng.random()."""

    def __init__(self, pairs):
        pairs = [(v, int(w)) for v, w in pairs if int(w) > 0]
        self.values = [v for v, _ in pairs]
        self.cum = []
        total = 0
        for _, w in pairs:
            total += w
            self.cum.append(total)
        self.total = total

    def __call__(self, rng):
        # u in [0, total); bisect_right gives index i with cum[i-1] <= u < cum[i]
        u = rng.random() * self.total
        return self.values[bisect.bisect_right(self.cum, u)]


def read_tracts():
    ds = ogr.Open(TRACTS_PATH)
    if ds is None:
        sys.exit("cannot open " + TRACTS_PATH)
    layer = ds.GetLayerByName(TRACTS_LAYER)
    pairs = []
    for feat in layer:
        pairs.append((str(feat.GetField(TRACT_ID_FIELD)),
                      int(feat.GetField(POP_FIELD))))
    ds = None
    pairs.sort()
    return pairs


def main():
    gdal.UseExceptions()
    gdal.SetConfigOption("OGR_CURRENT_DATE", "2024-01-01T00:00:00.000Z")

    tracts = read_tracts()
    pick_tract = Picker(tracts)
    pick_age = Picker(AGE_GROUPS)
    pick_sex = Picker(SEX)
    pick_race = Picker(RACE)
    pick_ins = {k: Picker(v) for k, v in INSURANCE_BY_AGE.items()}
    pick_diag = Picker(DIAGNOSIS)

    rng = random.Random(SEED)
    rows = []
    for pid in range(1, N_PATIENTS + 1):
        tract = pick_tract(rng)
        age = pick_age(rng)
        sex = pick_sex(rng)
        race = pick_race(rng)
        ins = pick_ins[age](rng)
        diag = pick_diag(rng)
        rows.append((pid, tract, age, sex, race, ins, diag))

    driver = ogr.GetDriverByName("GPKG")
    if os.path.exists(OUT_PATH):
        driver.DeleteDataSource(OUT_PATH)
    ds = driver.CreateDataSource(OUT_PATH)
    layer = ds.CreateLayer(OUT_LAYER, geom_type=ogr.wkbNone,
                           options=["FID=fid"])
    layer.CreateField(ogr.FieldDefn("patient_id", ogr.OFTInteger))
    for name in ("tract_id", "age_group", "sex", "race", "insurance",
                 "diagnosis"):
        layer.CreateField(ogr.FieldDefn(name, ogr.OFTString))
    defn = layer.GetLayerDefn()
    layer.StartTransaction()
    for row in rows:
        feat = ogr.Feature(defn)
        feat.SetFID(row[0])
        feat.SetField("patient_id", row[0])
        for i, name in enumerate(("tract_id", "age_group", "sex", "race",
                                  "insurance", "diagnosis"), start=1):
            feat.SetField(name, row[i])
        layer.CreateFeature(feat)
    layer.CommitTransaction()
    ds = None
    print("wrote %d patients to %s (layer %s)" % (len(rows), OUT_PATH,
                                                  OUT_LAYER))


if __name__ == "__main__":
    main()
