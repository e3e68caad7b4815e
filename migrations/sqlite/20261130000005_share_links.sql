-- Public share links (see the PostgreSQL twin).
ALTER TABLE trip_views ADD COLUMN share_code TEXT;
CREATE UNIQUE INDEX trip_views_share_code ON trip_views (share_code) WHERE share_code IS NOT NULL;
