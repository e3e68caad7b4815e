-- The named places of an imported extract (`etappe osm import`; the PostgreSQL twin says more):
-- one row per distinct folded name of a place, so "Wien", "Vienna" and "vienne" each find it.
CREATE TABLE osm_place (
    dataset  INTEGER NOT NULL,
    key      TEXT    NOT NULL,
    name     TEXT    NOT NULL,
    kind     TEXT    NOT NULL,
    osm_type TEXT    NOT NULL,
    osm_id   INTEGER NOT NULL,
    lat      REAL    NOT NULL,
    lon      REAL    NOT NULL,
    weight   REAL    NOT NULL
) STRICT;
CREATE INDEX osm_place_key ON osm_place (key, dataset);
