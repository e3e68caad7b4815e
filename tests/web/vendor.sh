#!/usr/bin/env bash
# Re-vendors the browser libraries the rider's page embeds from their pinned npm packages
# (package.json / package-lock.json here). Run after changing a pinned version; the test
# web_assets::vendored_copies_match_pins checks the copies match the pins.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/../../services/web-assets/vendor"
cd "$here"
npm ci --no-audit --no-fund
mkdir -p "$out"
cp node_modules/leaflet/dist/leaflet.js "$out/leaflet.js"
cp node_modules/leaflet/dist/leaflet.css "$out/leaflet.css"
cp node_modules/leaflet/LICENSE "$out/LICENSE.leaflet"
cp node_modules/uplot/dist/uPlot.iife.min.js "$out/uplot.js"
cp node_modules/uplot/dist/uPlot.min.css "$out/uplot.css"
cp node_modules/uplot/LICENSE "$out/LICENSE.uplot"
{
  echo "leaflet $(node -p "require('./node_modules/leaflet/package.json').version")"
  echo "uplot $(node -p "require('./node_modules/uplot/package.json').version")"
} > "$out/VERSIONS"
