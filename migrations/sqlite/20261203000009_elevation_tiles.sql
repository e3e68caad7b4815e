-- Terrain heights for routes without `<ele>` (`etappe elevation import`; the PostgreSQL twin
-- says more): one row per SRTM tile, the file's bytes as they are.
CREATE TABLE elevation_tiles (
    name        TEXT    PRIMARY KEY,
    south       INTEGER NOT NULL CHECK (south BETWEEN -90 AND 89),
    west        INTEGER NOT NULL CHECK (west BETWEEN -180 AND 179),
    samples     INTEGER NOT NULL CHECK (samples IN (1201, 3601)),
    data        BLOB    NOT NULL,
    imported_at TEXT    NOT NULL,
    UNIQUE (south, west)
) STRICT;
