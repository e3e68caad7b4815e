//! The SRTM `.hgt` format: a file per 1°×1° cell, named after its south-west corner
//! (`N47E009.hgt` covers 47–48° N, 9–10° E), holding big-endian i16 heights in metres, row
//! by row from the north-west corner. 1201×1201 samples are 3 arc-seconds apart, 3601×3601
//! one arc-second; the outer rows and columns repeat the neighbouring tiles' edges.
//! −32768 marks a void (no measurement).
//!
//! A [`Tile`] keeps the file's bytes as they are and reads samples from them on demand:
//! nothing to decode, so loading a tile costs one copy, and every byte string of an accepted
//! length is a valid tile.

/// The value of a sample without a measurement.
pub const VOID: i16 = i16::MIN;
/// Samples per side of a 3 arc-second tile.
pub const SRTM3_SAMPLES: usize = 1201;
/// Samples per side of a 1 arc-second tile.
pub const SRTM1_SAMPLES: usize = 3601;

/// Why a file is not an SRTM tile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HgtError {
    #[error(
        "{file}: not an SRTM tile name ({reason}); expected the south-west corner such as N47E009.hgt or s12w077.hgt"
    )]
    BadName { file: String, reason: String },
    #[error(
        "{file}: {bytes} bytes is not an SRTM tile; expected {} bytes (1201×1201 samples, 3 arc-seconds) or {} bytes (3601×3601, 1 arc-second)",
        tile_bytes(SRTM3_SAMPLES),
        tile_bytes(SRTM1_SAMPLES)
    )]
    BadSize { file: String, bytes: usize },
}

/// The byte length of a tile of `samples`² samples.
pub const fn tile_bytes(samples: usize) -> usize {
    samples * samples * 2
}

/// The samples per side of a tile of `bytes` bytes, if that is an accepted size.
pub fn samples_for(bytes: usize) -> Option<usize> {
    [SRTM3_SAMPLES, SRTM1_SAMPLES]
        .into_iter()
        .find(|&n| tile_bytes(n) == bytes)
}

/// The corner of a tile: integer degrees of its south-west corner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Corner {
    pub south: i32,
    pub west: i32,
}

impl Corner {
    /// The corner if it names a tile: south in −90..=89, west in −180..=179.
    pub fn new(south: i32, west: i32) -> Option<Self> {
        ((-90..=89).contains(&south) && (-180..=179).contains(&west))
            .then_some(Self { south, west })
    }

    /// The canonical name: "N47E009", "S12W077".
    pub fn name(self) -> String {
        let (ns, lat) = if self.south < 0 {
            ('S', -self.south)
        } else {
            ('N', self.south)
        };
        let (ew, lon) = if self.west < 0 {
            ('W', -self.west)
        } else {
            ('E', self.west)
        };
        format!("{ns}{lat:02}{ew}{lon:03}")
    }

    /// Reads a tile name or file name: `N47E009`, `n47e009.hgt`, `S12W077.HGT`, with or
    /// without a directory in front. `file` names the file in the error.
    pub fn parse(file_name: &str, file: &str) -> Result<Self, HgtError> {
        let bad = |reason: &str| HgtError::BadName {
            file: file.to_owned(),
            reason: reason.to_owned(),
        };
        let base = file_name
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(file_name)
            .to_ascii_uppercase();
        let stem = base.strip_suffix(".HGT").unwrap_or(&base);
        let bytes = stem.as_bytes();
        if bytes.len() != 7 {
            return Err(bad("a letter, 2 digits, a letter, 3 digits"));
        }
        let digits = |range: std::ops::Range<usize>| -> Option<i32> {
            let text = stem.get(range)?;
            if !text.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            text.parse().ok()
        };
        let (Some(lat), Some(lon)) = (digits(1..3), digits(4..7)) else {
            return Err(bad("a letter, 2 digits, a letter, 3 digits"));
        };
        let south = match bytes.first() {
            Some(b'N') if lat <= 89 => lat,
            Some(b'S') if (1..=90).contains(&lat) => -lat,
            Some(b'N' | b'S') => return Err(bad("latitude out of range (N00–N89, S01–S90)")),
            _ => return Err(bad("it must start with N or S")),
        };
        let west = match bytes.get(3) {
            Some(b'E') if lon <= 179 => lon,
            Some(b'W') if (1..=180).contains(&lon) => -lon,
            Some(b'E' | b'W') => return Err(bad("longitude out of range (E000–E179, W001–W180)")),
            _ => return Err(bad("the longitude must start with E or W")),
        };
        Self::new(south, west).ok_or_else(|| bad("no such tile"))
    }

    /// The tile whose south-west corner is at or below (`lat`, `lon`), if any.
    pub fn containing(lat: f64, lon: f64) -> Option<Self> {
        if !(lat.is_finite() && lon.is_finite()) {
            return None;
        }
        #[allow(clippy::cast_possible_truncation)]
        let floor = |x: f64| x.floor() as i32;
        Self::new(floor(lat), floor(lon))
    }
}

/// One decoded tile.
#[derive(Clone, PartialEq, Eq)]
pub struct Tile {
    corner: Corner,
    samples: usize,
    data: Vec<u8>,
}

impl std::fmt::Debug for Tile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tile")
            .field("name", &self.corner.name())
            .field("samples", &self.samples)
            .finish_non_exhaustive()
    }
}

impl Tile {
    /// A tile from a file's name (or path) and bytes.
    pub fn decode(file_name: &str, data: Vec<u8>) -> Result<Self, HgtError> {
        let corner = Corner::parse(file_name, file_name)?;
        Self::from_parts(corner, data, file_name)
    }

    /// A tile at `corner` from its bytes; `file` names it in the error.
    pub fn from_parts(corner: Corner, data: Vec<u8>, file: &str) -> Result<Self, HgtError> {
        let samples = samples_for(data.len()).ok_or_else(|| HgtError::BadSize {
            file: file.to_owned(),
            bytes: data.len(),
        })?;
        Ok(Self {
            corner,
            samples,
            data,
        })
    }

    pub fn corner(&self) -> Corner {
        self.corner
    }

    pub fn name(&self) -> String {
        self.corner.name()
    }

    /// Samples per side: 1201 or 3601.
    pub fn samples(&self) -> usize {
        self.samples
    }

    /// The file's bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The number of voids and the lowest and highest sample (None when all are voids).
    pub fn statistics(&self) -> (u64, Option<i16>, Option<i16>) {
        let mut voids = 0;
        let mut range: Option<(i16, i16)> = None;
        for pair in self.data.chunks_exact(2) {
            let value = match pair {
                [high, low] => i16::from_be_bytes([*high, *low]),
                _ => continue,
            };
            if value == VOID {
                voids += 1;
                continue;
            }
            range = Some(match range {
                None => (value, value),
                Some((lo, hi)) => (lo.min(value), hi.max(value)),
            });
        }
        (voids, range.map(|r| r.0), range.map(|r| r.1))
    }

    /// The sample at `row` (0 = north edge) and `col` (0 = west edge); None for a void or
    /// outside the grid.
    pub fn sample(&self, row: usize, col: usize) -> Option<i16> {
        if row >= self.samples || col >= self.samples {
            return None;
        }
        let at = (row * self.samples + col) * 2;
        let pair = self.data.get(at..at + 2)?;
        let value = i16::from_be_bytes([*pair.first()?, *pair.get(1)?]);
        (value != VOID).then_some(value)
    }

    /// The height at (`lat`, `lon`), metres, interpolated bilinearly between the four
    /// samples around it; None outside the tile (its edges included in it) or when all four
    /// are voids. With some voids, the others are weighted as before and renormalised; where
    /// those weights are all zero (the point sits on a void) they are averaged.
    pub fn height(&self, lat: f64, lon: f64) -> Option<f64> {
        let south = f64::from(self.corner.south);
        let west = f64::from(self.corner.west);
        if !((south..=south + 1.0).contains(&lat) && (west..=west + 1.0).contains(&lon)) {
            return None;
        }
        #[allow(clippy::cast_precision_loss)]
        let cells = (self.samples - 1) as f64;
        let y = (south + 1.0 - lat) * cells;
        let x = (lon - west) * cells;
        // The last cell takes the south and east edges, so every sample index stays inside.
        let (row, fy) = cell_and_fraction(y, self.samples);
        let (col, fx) = cell_and_fraction(x, self.samples);
        let corners = [
            (row, col, (1.0 - fy) * (1.0 - fx)),
            (row, col + 1, (1.0 - fy) * fx),
            (row + 1, col, fy * (1.0 - fx)),
            (row + 1, col + 1, fy * fx),
        ];
        let present: Vec<(f64, f64)> = corners
            .iter()
            .filter_map(|&(r, c, w)| self.sample(r, c).map(|h| (f64::from(h), w)))
            .collect();
        if present.is_empty() {
            return None;
        }
        let weight: f64 = present.iter().map(|(_, w)| w).sum();
        if weight > 1e-12 {
            Some(present.iter().map(|(h, w)| h * w).sum::<f64>() / weight)
        } else {
            #[allow(clippy::cast_precision_loss)]
            let count = present.len() as f64;
            Some(present.iter().map(|(h, _)| h).sum::<f64>() / count)
        }
    }
}

/// The cell index (0..=samples−2) and the fraction within it of a grid coordinate in
/// 0..=samples−1.
fn cell_and_fraction(position: f64, samples: usize) -> (usize, f64) {
    let last_cell = samples.saturating_sub(2);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let cell = (position.floor().max(0.0) as usize).min(last_cell);
    #[allow(clippy::cast_precision_loss)]
    let fraction = (position - cell as f64).clamp(0.0, 1.0);
    (cell, fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tile whose sample at (row, col) is `height(row, col)`, big-endian as in a file.
    fn synthetic(samples: usize, height: impl Fn(usize, usize) -> i16) -> Vec<u8> {
        let mut data = Vec::with_capacity(tile_bytes(samples));
        for row in 0..samples {
            for col in 0..samples {
                data.extend_from_slice(&height(row, col).to_be_bytes());
            }
        }
        data
    }

    /// The plane h = 100 + 10·row (+ col) over N47E009.
    fn plane() -> Tile {
        let data = synthetic(SRTM3_SAMPLES, |row, col| {
            i16::try_from(100 + 10 * row + col).expect("fits")
        });
        Tile::decode("N47E009.hgt", data).expect("a tile")
    }

    /// The latitude of `row` and longitude of `col` in a 1201-sample tile at 47° N, 9° E.
    fn lat_of(row: f64) -> f64 {
        48.0 - row / 1200.0
    }
    fn lon_of(col: f64) -> f64 {
        9.0 + col / 1200.0
    }

    fn near(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-6)
    }

    #[test]
    fn names_give_the_south_west_corner() {
        let parse = |name: &str| Corner::parse(name, name);
        assert_eq!(parse("N47E009.hgt"), Ok(Corner { south: 47, west: 9 }));
        assert_eq!(parse("n47e009.hgt"), Ok(Corner { south: 47, west: 9 }));
        assert_eq!(
            parse("/data/srtm/S12W077.HGT"),
            Ok(Corner {
                south: -12,
                west: -77
            })
        );
        assert_eq!(
            parse("N00W180"),
            Ok(Corner {
                south: 0,
                west: -180
            })
        );
        assert_eq!(
            parse("S90E179"),
            Ok(Corner {
                south: -90,
                west: 179
            })
        );
        assert_eq!(
            Corner {
                south: -12,
                west: -77
            }
            .name(),
            "S12W077"
        );
        assert_eq!(Corner { south: 0, west: 0 }.name(), "N00E000");
        for bad in [
            "N47E09.hgt",
            "N47E0090.hgt",
            "X47E009.hgt",
            "N47X009.hgt",
            "N4AE009.hgt",
            "N90E000.hgt",
            "S00E000.hgt",
            "N10E180.hgt",
            "N10W000.hgt",
            "N+7E009.hgt",
            "N47E009.tif",
            "",
            "Ñ47E009",
        ] {
            let error = parse(bad).expect_err(bad);
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("{bad}: not an SRTM tile name")),
                "{error}"
            );
        }
    }

    #[test]
    fn corners_of_positions() {
        assert_eq!(
            Corner::containing(47.5, 9.2),
            Some(Corner { south: 47, west: 9 })
        );
        assert_eq!(
            Corner::containing(-0.5, -0.5),
            Some(Corner {
                south: -1,
                west: -1
            })
        );
        assert_eq!(Corner::containing(90.0, 0.0), None);
        assert_eq!(Corner::containing(f64::NAN, 0.0), None);
        assert_eq!(Corner::containing(0.0, 180.0), None);
    }

    #[test]
    fn the_size_decides_the_resolution() {
        let one_arc_second = Tile::decode("N47E009.hgt", vec![0; tile_bytes(3601)]).expect("SRTM1");
        assert_eq!(one_arc_second.samples(), 3601);
        assert_eq!(plane().samples(), 1201);
        for bytes in [
            0,
            1,
            tile_bytes(1201) - 1,
            tile_bytes(1201) + 2,
            tile_bytes(3600),
        ] {
            let error = Tile::decode("N47E009.hgt", vec![0; bytes]).expect_err("bad size");
            assert_eq!(
                error,
                HgtError::BadSize {
                    file: "N47E009.hgt".into(),
                    bytes
                }
            );
            let text = error.to_string();
            assert!(text.contains("2884802 bytes (1201×1201"), "{text}");
            assert!(text.contains("25934402 bytes (3601×3601"), "{text}");
        }
        let error = Tile::decode("tile.hgt", vec![0; tile_bytes(1201)]).expect_err("bad name");
        assert!(matches!(error, HgtError::BadName { .. }), "{error}");
    }

    #[test]
    fn samples_are_big_endian_from_the_north_west_corner() {
        let tile = plane();
        assert_eq!(tile.sample(0, 0), Some(100));
        assert_eq!(tile.sample(0, 1), Some(101));
        assert_eq!(tile.sample(1, 0), Some(110));
        assert_eq!(tile.sample(1200, 1200), Some(100 + 12_000 + 1200));
        assert_eq!(tile.sample(1201, 0), None);
        // Negative heights (below sea level) survive the decoding.
        let low = Tile::decode("N31E035.hgt", synthetic(1201, |_, _| -430)).expect("tile");
        assert_eq!(low.sample(5, 5), Some(-430));
        assert_eq!(low.statistics(), (0, Some(-430), Some(-430)));
        assert_eq!(tile.statistics(), (0, Some(100), Some(100 + 12_000 + 1200)));
        assert!(near(low.height(31.5, 35.5), -430.0));
    }

    #[test]
    fn heights_are_bilinear_between_samples() {
        let tile = plane();
        // On samples: exactly their value.
        assert!(near(tile.height(48.0, 9.0), 100.0));
        assert!(near(
            tile.height(lat_of(3.0), lon_of(7.0)),
            100.0 + 30.0 + 7.0
        ));
        // Between samples: the plane, since bilinear interpolation reproduces planes.
        for (row, col) in [(0.5, 0.5), (10.25, 600.75), (1199.9, 0.1), (600.0, 1199.5)] {
            let expected = 100.0 + 10.0 * row + col;
            let got = tile.height(lat_of(row), lon_of(col));
            assert!(
                got.is_some_and(|g| (g - expected).abs() < 1e-6),
                "{got:?} at row {row}, col {col}: expected {expected}"
            );
        }
    }

    #[test]
    fn the_borders_belong_to_the_tile() {
        let tile = plane();
        // North border: row 0; south border: row 1200, the last cell's far side.
        assert!(near(tile.height(48.0, 9.5), 100.0 + 600.0));
        assert!(near(tile.height(47.0, 9.5), 100.0 + 12_000.0 + 600.0));
        assert!(near(tile.height(47.0, 10.0), 100.0 + 12_000.0 + 1200.0));
        assert!(near(tile.height(48.0, 10.0), 100.0 + 1200.0));
        // Just outside: another tile's business.
        assert_eq!(tile.height(48.000_001, 9.5), None);
        assert_eq!(tile.height(46.999_999, 9.5), None);
        assert_eq!(tile.height(47.5, 8.999_999), None);
        assert_eq!(tile.height(47.5, 10.000_001), None);
        assert_eq!(tile.height(f64::NAN, 9.5), None);
        assert_eq!(tile.height(47.5, f64::INFINITY), None);
    }

    #[test]
    fn voids_are_left_out() {
        // Samples (0,0) and (0,1) are voids, (1,0) = 200, (1,1) = 300; all else 1000.
        let data = synthetic(1201, |row, col| match (row, col) {
            (0, 0) | (0, 1) => VOID,
            (1, 0) => 200,
            (1, 1) => 300,
            _ => 1000,
        });
        let tile = Tile::decode("N47E009.hgt", data).expect("tile");
        assert_eq!(tile.sample(0, 0), None);
        // Half-way between the four: the two present ones, equally weighted.
        assert!(near(tile.height(lat_of(0.5), lon_of(0.5)), 250.0));
        // A quarter of the way east: the present ones weighted 3:1.
        assert!(near(tile.height(lat_of(0.5), lon_of(0.25)), 225.0));
        // Exactly on a void, whose neighbours weigh nothing: their average.
        assert!(near(tile.height(48.0, 9.0), 250.0));

        // All four around a point void: no height.
        let data = synthetic(1201, |row, col| if row <= 1 && col <= 1 { VOID } else { 5 });
        let tile = Tile::decode("N47E009.hgt", data).expect("tile");
        assert_eq!(tile.height(lat_of(0.5), lon_of(0.5)), None);
        assert!(near(tile.height(lat_of(1.5), lon_of(1.5)), 5.0));
        assert_eq!(tile.statistics(), (4, Some(5), Some(5)));
        let all_void = Tile::decode("N47E009.hgt", synthetic(1201, |_, _| VOID)).expect("tile");
        assert_eq!(all_void.height(47.5, 9.5), None);
        assert_eq!(all_void.statistics(), (1201 * 1201, None, None));
    }

    #[test]
    fn one_arc_second_tiles_interpolate_on_their_finer_grid() {
        let data = synthetic(3601, |row, _| i16::try_from(row % 1000).expect("fits"));
        let tile = Tile::decode("s01w001.hgt", data).expect("tile");
        assert_eq!(tile.name(), "S01W001");
        // Row 10.5 of 3600 below the north edge (0° N).
        assert!(near(tile.height(-10.5 / 3600.0, -0.5), 10.5));
        assert!(near(tile.height(-1.0, -1.0), 600.0), "row 3600 % 1000");
    }
}
