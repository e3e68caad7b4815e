-- The local OpenStreetMap index (`etappe osm import`; the PostgreSQL twin says more): only what the
-- route analysis reads, on a 0.02° grid (`cell` = row * 18000 + col) with B-tree indexes, so
-- neither backend needs a spatial extension.
CREATE TABLE osm_dataset (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT    NOT NULL,
    source_path  TEXT    NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('loading', 'active')),
    imported_at  TEXT    NOT NULL,
    south        REAL    NOT NULL,
    west         REAL    NOT NULL,
    north        REAL    NOT NULL,
    east         REAL    NOT NULL,
    points       INTEGER NOT NULL DEFAULT 0,
    ways         INTEGER NOT NULL DEFAULT 0,
    ferries      INTEGER NOT NULL DEFAULT 0,
    input_bytes  INTEGER NOT NULL DEFAULT 0,
    UNIQUE (name, state)
) STRICT;

CREATE TABLE osm_point (
    dataset  INTEGER NOT NULL,
    cell     INTEGER NOT NULL,
    kind     TEXT    NOT NULL,
    osm_type TEXT    NOT NULL,
    osm_id   INTEGER NOT NULL,
    lat      REAL    NOT NULL,
    lon      REAL    NOT NULL,
    tags     TEXT    NOT NULL
) STRICT;
CREATE INDEX osm_point_cell ON osm_point (dataset, cell);

CREATE TABLE osm_way (
    dataset INTEGER NOT NULL,
    way_id  INTEGER NOT NULL,
    class   TEXT    NOT NULL CHECK (class IN ('road', 'ferry')),
    tags    TEXT    NOT NULL,
    geom    BLOB    NOT NULL,
    south   REAL    NOT NULL,
    west    REAL    NOT NULL,
    north   REAL    NOT NULL,
    east    REAL    NOT NULL,
    PRIMARY KEY (dataset, way_id)
) STRICT;

-- One row per cell a way crosses, with the way's class and box, so a search reads the
-- candidates of one class from this table alone and drops most on their box.
CREATE TABLE osm_way_cell (
    dataset INTEGER NOT NULL,
    class   TEXT    NOT NULL,
    cell    INTEGER NOT NULL,
    way_id  INTEGER NOT NULL,
    south   REAL    NOT NULL,
    west    REAL    NOT NULL,
    north   REAL    NOT NULL,
    east    REAL    NOT NULL
) STRICT;
CREATE INDEX osm_way_cell_cell ON osm_way_cell (dataset, class, cell);
