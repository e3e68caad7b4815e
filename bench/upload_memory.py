#!/usr/bin/env python3
"""Peak memory (VmHWM) of an Etappe server process for N parallel GPX uploads.
usage: python3 upload_memory.py BINARY FILE N"""
import json, os, subprocess, sys, tempfile, threading, time, urllib.request, uuid

binary, path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data_dir = tempfile.mkdtemp()
port = 18000 + os.getpid() % 1000
env = {"PATH": os.environ["PATH"], "ETAPPE_DATA_DIR": data_dir, "ETAPPE_ADDR": f"127.0.0.1:{port}",
       "ETAPPE_LOG": "warn", "ETAPPE_UPLOAD_QUOTA_MB": "100000", "ETAPPE_CREATIONS_PER_MINUTE": "1000"}
env.update({k: v for k, v in os.environ.items() if k.startswith("ETAPPE_")})
server = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
base = f"http://127.0.0.1:{port}"
def memory(field):
    for line in open(f"/proc/{server.pid}/status"):
        if line.startswith(field):
            return int(line.split()[1]) // 1024
while True:
    try:
        urllib.request.urlopen(base + "/livez"); break
    except Exception:
        time.sleep(0.2)
token = open(os.path.join(data_dir, "local-token")).read().strip()
body_file = open(path, "rb").read()
ids, statuses = [], []
def upload(i):
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"r{i}.gpx\"\r\n"
            "Content-Type: application/gpx+xml\r\n\r\n").encode() + body_file + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(base + "/trips/gpx-upload", data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(req) as r:
            statuses.append(r.status); ids.append(json.load(r)["id"])
    except urllib.error.HTTPError as e:
        statuses.append(e.code)
start_rss = memory("VmRSS:")
threads = [threading.Thread(target=upload, args=(i,)) for i in range(n)]
t0 = time.time()
[t.start() for t in threads]; [t.join() for t in threads]
answered = memory("VmHWM:"); t1 = time.time()
for i in ([] if os.environ.get("ETAPPE_IN_PROCESS_WORKERS") == "false" else ids):
    while True:
        req = urllib.request.Request(f"{base}/trips/{i}", headers={"Authorization": f"Bearer {token}"})
        if json.load(urllib.request.urlopen(req)).get("partial") is False: break
        time.sleep(0.5)
done = memory("VmHWM:")
server.kill()
print(f"{n} uploads of {len(body_file)/1e6:.1f} MB ({statuses}): resident at start {start_rss} MiB; "
      f"peak {answered} MiB when answered ({t1-t0:.1f} s), {done} MiB when the days are in ({time.time()-t0:.1f} s)")
