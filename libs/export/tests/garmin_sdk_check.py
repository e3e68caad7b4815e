"""Optional cross-check of the FIT output with Garmin's own FIT SDK for Python.

Not run by `cargo test` (it needs the `garmin-fit-sdk` package from PyPI):

    python3 -m venv /tmp/fitsdk && /tmp/fitsdk/bin/pip install garmin-fit-sdk
    cargo run --example write-samples -- /tmp
    /tmp/fitsdk/bin/python tests/garmin_sdk_check.py /tmp/sample.fit

It checks the file's integrity (header and CRC) the way Garmin's decoder does and prints
what the SDK reads from each message, failing on any decoder error.
"""

import sys

from garmin_fit_sdk import Decoder, Stream

path = sys.argv[1]
stream = Stream.from_file(path)
decoder = Decoder(stream)
assert decoder.is_fit(), "not a FIT file"
assert decoder.check_integrity(), "integrity check (header/CRC) failed"
# The integrity check consumes the stream, so read with a fresh decoder.
messages, errors = Decoder(Stream.from_file(path)).read()
assert not errors, errors

print("file_id:", messages["file_id_mesgs"])
print("course:", messages["course_mesgs"])
print("lap:", messages["lap_mesgs"])
print("events:", messages["event_mesgs"])
records = messages["record_mesgs"]
print("records:", len(records), "first:", records[0], "last:", records[-1])
print("course_points:", messages.get("course_point_mesgs", []))
assert messages["file_id_mesgs"][0]["type"] == "course"
assert messages["course_mesgs"][0]["sport"] == "cycling"
assert len(records) == 3 * 1001 - 2
dist = [r["distance"] for r in records]
assert all(b >= a for a, b in zip(dist, dist[1:]))
print("OK: Garmin FIT SDK decodes", path, "without errors")
