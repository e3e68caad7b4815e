-- Terrain heights for routes without `<ele>` (`etappe elevation import`): one row per SRTM
-- tile, named after its south-west corner ("N47E009" covers 47–48° N, 9–10° E). `data` is
-- the `.hgt` file's bytes as they are: big-endian i16 metres, row by row from the north-west
-- corner, `samples` × `samples` of them (1201: 3 arc-seconds, 3601: 1 arc-second), −32768 a
-- void. Re-importing a tile replaces its row. Read a tile at a time by name: no spatial
-- extension needed.
CREATE TABLE elevation_tiles (
    name        text        PRIMARY KEY,
    south       integer     NOT NULL CHECK (south BETWEEN -90 AND 89),
    west        integer     NOT NULL CHECK (west BETWEEN -180 AND 179),
    samples     integer     NOT NULL CHECK (samples IN (1201, 3601)),
    data        bytea       NOT NULL,
    imported_at timestamptz NOT NULL,
    UNIQUE (south, west)
);
