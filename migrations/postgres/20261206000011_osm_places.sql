-- The named places of an imported extract (`etappe osm import`): every named place=* (city to
-- locality, squares), station, hut, campsite, hotel and peak, so the names a rider types
-- resolve where the extract is before the embedded gazetteer or a geocoder is asked. One row
-- per distinct folded name of a place (`name`, `name:*`, `alt_name`, `official_name`…), its
-- `key` folded as the gazetteer folds (lower-case ASCII, one space between words). The "C"
-- collation keeps the B-tree in byte order, so a prefix is one range scan.
CREATE TABLE osm_place (
    dataset  bigint           NOT NULL,
    key      text COLLATE "C" NOT NULL,
    name     text             NOT NULL,
    kind     text             NOT NULL,
    osm_type text             NOT NULL,
    osm_id   bigint           NOT NULL,
    lat      double precision NOT NULL,
    lon      double precision NOT NULL,
    weight   real             NOT NULL
);
CREATE INDEX osm_place_key ON osm_place (key, dataset);
