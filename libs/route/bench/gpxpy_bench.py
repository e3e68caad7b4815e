"""Times gpxpy on the files written by `route-bench --out bench/data`, for a
side-by-side comparison with the Rust parser on identical bytes.

Usage: .venv/bin/python bench/gpxpy_bench.py [--runs N] FILE...
"""

import argparse
import os
import statistics
import time

import gpxpy


def bench(path: str, runs: int) -> None:
    with open(path, "rb") as f:
        data = f.read().decode("utf-8")
    size_mb = len(data.encode("utf-8")) / 1e6
    parse_times, pipeline_times = [], []
    points = 0
    summary = ""
    for _ in range(runs):
        t0 = time.perf_counter()
        gpx = gpxpy.parse(data)
        t1 = time.perf_counter()
        length_m = gpx.length_2d()
        up_down = gpx.get_uphill_downhill()
        t2 = time.perf_counter()
        parse_times.append(t1 - t0)
        pipeline_times.append(t2 - t0)
        points = gpx.get_track_points_no()
        summary = (
            f"{length_m / 1000:.1f} km, D+ {up_down.uphill:.0f} m, "
            f"D- {up_down.downhill:.0f} m"
        )
    print(
        f"== gpxpy {gpxpy.__version__}: {os.path.basename(path)}: {size_mb:.1f} MB, "
        f"{points} points, {runs} runs ({summary})"
    )
    for label, times in (
        ("gpxpy.parse", parse_times),
        ("parse+length+up/down", pipeline_times),
    ):
        best, median = min(times), statistics.median(times)
        print(
            f"  {label:<22} best {best * 1e3:>9.1f} ms  median {median * 1e3:>9.1f} ms"
            f"  | {size_mb / best:>6.2f} MB/s  {points / best / 1e6:>6.3f} M points/s (best)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    for path in args.files:
        bench(path, max(1, args.runs))


if __name__ == "__main__":
    main()
