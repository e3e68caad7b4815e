-- Public share links: the active short code of a trip, for anonymous reads by code.
ALTER TABLE trip_views ADD COLUMN share_code text;
CREATE UNIQUE INDEX trip_views_share_code ON trip_views (share_code) WHERE share_code IS NOT NULL;
