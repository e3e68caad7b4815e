"""Checks FIT course files with Garmin's official FIT SDK for Python (`garmin-fit-sdk`).

Usage: python fit_check.py [--allow-same-names] FILE.fit [FILE.fit ...]

For every file: it is FIT, its header and CRC pass Garmin's integrity check, and Garmin's
decoder reads it with zero errors; records and course points, in file order, never go back
in time. Across the files: each has its own file_id (serial number and creation time) and
its own course name (unless --allow-same-names: the same day of two versions of a trip
may keep its name, never its file_id). Prints one JSON line per file, then "OK"; exits 1 with the reasons
on any failure.
"""

import json
import sys

from garmin_fit_sdk import Decoder, Stream

MESG_RECORD = 20
MESG_COURSE_POINT = 32


def check(path):
    problems = []
    if not Decoder(Stream.from_file(path)).is_fit():
        return None, [f"{path}: not a FIT file"]
    if not Decoder(Stream.from_file(path)).check_integrity():
        problems.append(f"{path}: integrity check (header/CRC) failed")
    timeline = []

    def listener(mesg_num, message):
        if mesg_num in (MESG_RECORD, MESG_COURSE_POINT) and "timestamp" in message:
            timeline.append((mesg_num, message["timestamp"]))

    messages, errors = Decoder(Stream.from_file(path)).read(mesg_listener=listener)
    problems += [f"{path}: decoder error {e!r}" for e in errors]
    file_id = (messages.get("file_id_mesgs") or [{}])[0]
    course = (messages.get("course_mesgs") or [{}])[0]
    for (kind_a, a), (kind_b, b) in zip(timeline, timeline[1:]):
        if b < a:
            problems.append(f"{path}: time goes back from {a} (mesg {kind_a}) to {b} (mesg {kind_b})")
            break
    if file_id.get("type") != "course":
        problems.append(f"{path}: file_id type is {file_id.get('type')!r}, not course")
    if not file_id.get("serial_number"):
        problems.append(f"{path}: file_id has no serial_number")
    summary = {
        "path": path,
        "serial_number": file_id.get("serial_number"),
        "time_created": str(file_id.get("time_created")),
        "course_name": course.get("name"),
        "records": len(messages.get("record_mesgs", [])),
        "course_points": [p.get("name") for p in messages.get("course_point_mesgs", [])],
        "total_ascent": [lap.get("total_ascent") for lap in messages.get("lap_mesgs", [])],
        "errors": len(errors),
    }
    return summary, problems


def main(args):
    allow_same_names = "--allow-same-names" in args
    paths = [a for a in args if a != "--allow-same-names"]
    problems = []
    summaries = []
    for path in paths:
        summary, found = check(path)
        problems += found
        if summary is not None:
            summaries.append(summary)
            print(json.dumps(summary, ensure_ascii=False))
    ids = [(s["serial_number"], s["time_created"]) for s in summaries]
    if len(set(ids)) != len(ids):
        problems.append(f"file_ids are not unique: {ids}")
    names = [s["course_name"] for s in summaries]
    if not allow_same_names and len(set(names)) != len(names):
        problems.append(f"course names are not distinct: {names}")
    if problems:
        for p in problems:
            print("FAIL:", p, file=sys.stderr)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
