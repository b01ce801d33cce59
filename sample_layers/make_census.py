#!/usr/bin/python3
"""Generate the synthetic census table ``ny8_census.csv`` for the VBAS sample data.

Run with the system interpreter, after make_patients.py:

    /usr/bin/python3 sample_layers/make_census.py

Input: ``ny8_tracts.gpkg`` (AREAKEY, POP8) and ``patients.gpkg`` (tract_id, age_group, sex, race),
next to this script, read with Python's sqlite3 (a GeoPackage is an SQLite file).

Output: ``ny8_census.csv`` (next to this script; rewritten on every run), one row per (tract, age
group, sex, race) cell: ``tract,age_group,sex,race,residents``, sorted. A tract's POP8 residents are
spread over the cells by make_patients.py's own marginals of age group, sex and race (independent), each
cell rounded to the nearest whole resident; a cell holding more patients than that is raised to its
patients, so that every patient is among the residents (a census the patients could have been drawn
from). No randomness: the same inputs give the same file. All residents are synthetic: the marginals are
the patients' (US and New York-like), not the 1980 census's.
"""

import collections
import os
import sqlite3

import make_patients as mp

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "ny8_census.csv")


def share(weights):
    """Each category's share of a list of (name, weight)."""
    total = sum(w for _, w in weights)
    return [(name, w / total) for name, w in weights]


def main():
    with sqlite3.connect("file:%s?mode=ro" % mp.TRACTS_PATH, uri=True) as db:
        tracts = sorted(db.execute('SELECT "%s", "%s" FROM "%s"' % (mp.TRACT_ID_FIELD, mp.POP_FIELD, mp.TRACTS_LAYER)))
    with sqlite3.connect("file:%s?mode=ro" % mp.OUT_PATH, uri=True) as db:
        patients = collections.Counter(db.execute('SELECT tract_id, age_group, sex, race FROM "%s"' % mp.OUT_LAYER))
    raised = 0
    with open(OUT_PATH, "w", encoding="utf-8", newline="\n") as out:
        out.write("tract,age_group,sex,race,residents\n")
        for tract, pop in tracts:
            for age, p_age in share(mp.AGE_GROUPS):
                for sex, p_sex in share(mp.SEX):
                    for race, p_race in share(mp.RACE):
                        expected = round(pop * p_age * p_sex * p_race)
                        drawn = patients[(tract, age, sex, race)]
                        raised += drawn > expected
                        out.write("%s,%s,%s,%s,%d\n" % (tract, age, sex, race, max(expected, drawn)))
    print("wrote %s: %d tracts, %d cells raised to their patients" % (OUT_PATH, len(tracts), raised))


if __name__ == "__main__":
    main()
