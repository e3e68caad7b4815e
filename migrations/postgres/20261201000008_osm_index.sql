-- The local OpenStreetMap index (`etappe osm import`): only what the route analysis reads,
-- from an extract the operator loads. A dataset is one extract (named after its file); an
-- import writes a new dataset in state 'loading' and, in one transaction at the end, drops
-- the older dataset of that name and makes the new one 'active', so a failed import leaves
-- the previous index answering. Points and ways sit on a 0.02° grid (`cell` = row * 18000 +
-- col) with B-tree indexes: no PostGIS. Geometry is little-endian i32 pairs (1e-7 degrees).
CREATE TABLE osm_dataset (
    id           bigserial        PRIMARY KEY,
    name         text             NOT NULL,
    source_path  text             NOT NULL,
    state        text             NOT NULL CHECK (state IN ('loading', 'active')),
    imported_at  timestamptz      NOT NULL,
    south        double precision NOT NULL,
    west         double precision NOT NULL,
    north        double precision NOT NULL,
    east         double precision NOT NULL,
    points       bigint           NOT NULL DEFAULT 0,
    ways         bigint           NOT NULL DEFAULT 0,
    ferries      bigint           NOT NULL DEFAULT 0,
    input_bytes  bigint           NOT NULL DEFAULT 0,
    UNIQUE (name, state)
);

CREATE TABLE osm_point (
    dataset  bigint           NOT NULL,
    cell     bigint           NOT NULL,
    kind     text             NOT NULL,
    osm_type text             NOT NULL,
    osm_id   bigint           NOT NULL,
    lat      double precision NOT NULL,
    lon      double precision NOT NULL,
    tags     text             NOT NULL
);
CREATE INDEX osm_point_cell ON osm_point (dataset, cell);

CREATE TABLE osm_way (
    dataset bigint           NOT NULL,
    way_id  bigint           NOT NULL,
    class   text             NOT NULL CHECK (class IN ('road', 'ferry')),
    tags    text             NOT NULL,
    geom    bytea            NOT NULL,
    south   double precision NOT NULL,
    west    double precision NOT NULL,
    north   double precision NOT NULL,
    east    double precision NOT NULL,
    PRIMARY KEY (dataset, way_id)
);

-- One row per cell a way crosses, with the way's class and box, so a search reads the
-- candidates of one class from this table alone and drops most on their box before any
-- geometry is read (a cell is far wider than the 45 m a way search reaches).
CREATE TABLE osm_way_cell (
    dataset bigint           NOT NULL,
    class   text             NOT NULL,
    cell    bigint           NOT NULL,
    way_id  bigint           NOT NULL,
    south   double precision NOT NULL,
    west    double precision NOT NULL,
    north   double precision NOT NULL,
    east    double precision NOT NULL
);
CREATE INDEX osm_way_cell_cell ON osm_way_cell (dataset, class, cell);
