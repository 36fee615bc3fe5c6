#!/usr/bin/env python3
"""`tokbench sweep --launcher slurm` against a real one-node Slurm cluster started here.

The test starts munged, slurmctld and slurmd (Debian's packages; scripts/bootstrap installs
them) in a temporary folder, on free ports, as the user running it, with a job completion log
(jobcomp/filetxt) as the record of what Slurm ran. Then one sweep of pythia-14m: two sequence
lengths on one rank, one on two ranks (a two-task srun job: Gloo on the CPU), and an invalid
combination. Checked: every configuration is one row with the right status, the two-rank row
has world size 2 and ran under srun's variables, every job is in Slurm's completion log and
its own log names its job id, no job was submitted for the invalid one, and a second sweep
reruns nothing; --slurm-args reaches sbatch as words (a quoted comment), and what only a
shell would run in it is refused before anything is submitted. Then: a sweep killed (SIGKILL) while its job runs and started again waits for
that job rather than submitting another; Ctrl-C (SIGINT) cancels the job in flight and leaves
nothing behind, so the next sweep runs it. And a disk that fills (the ENOSPC library,
tests/sweep/enospc_shim.cpp, preloaded into the job through sbatch's exported environment):
the two-rank job cannot write its result and exits 8, so the sweep records nothing for it,
stops with exit 8, and the same command runs it once space is free. Missing daemons fail the
test: the machine is meant to have them.
Usage: cli_sweep_slurm.py /path/to/tokbench /path/to/enospc_shim.so"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TOKBENCH = os.path.abspath(sys.argv[1])
ENOSPC_SHIM = os.path.abspath(sys.argv[2])
DAEMONS = ["munged", "slurmctld", "slurmd", "sbatch", "srun", "scontrol", "sinfo"]


def fail(message, proc=None):
    print("FAIL:", message)
    if proc is not None:
        print("--- stdout ---\n" + (proc.stdout or "") + "\n--- stderr ---\n" + (proc.stderr or ""))
    sys.exit(1)


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def find(program):
    path = shutil.which(program) or shutil.which(program, path="/usr/sbin:/sbin:/usr/bin")
    if path is None:
        fail(f"{program} is not installed (scripts/bootstrap installs slurmctld slurmd slurm-client munge)")
    return path


class Cluster:
    """munged + slurmctld + slurmd in one folder; stop() ends exactly the processes it started."""

    def __init__(self, root):
        self.root, self.procs = root, []
        os.makedirs(root)
        # munged refuses a socket whose folders others cannot traverse, up from the socket.
        os.chmod(os.path.dirname(root), 0o755)
        for d in ["munge", "state", "spool", "log"]:
            os.makedirs(os.path.join(root, d))
        self.socket = os.path.join(root, "munge", "munge.sock")
        self.conf = os.path.join(root, "slurm.conf")
        self.jobcomp = os.path.join(root, "log", "jobcomp.txt")
        self.host = socket.gethostname().split(".")[0]

    def env(self):
        e = dict(os.environ)
        for name in ["WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_PORT", "MASTER_ADDR", "TOKBENCH_LAUNCHED",
                     "BENCHMARK_OUT_FORMAT"] + [k for k in e if k.startswith("SLURM_")]:
            e.pop(name, None)
        e["SLURM_CONF"] = self.conf
        return e

    def start_daemon(self, args, name):
        log = open(os.path.join(self.root, "log", name + ".out"), "w")
        self.procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=self.env()))

    def start(self):
        key = os.path.join(self.root, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.start_daemon([find("munged"), "--foreground", "--key-file", key, "--socket", self.socket,
                           "--pid-file", os.path.join(self.root, "munge", "munged.pid"),
                           "--seed-file", os.path.join(self.root, "munge", "seed"),
                           "--log-file", os.path.join(self.root, "log", "munged.log")], "munged")
        self.wait_for(lambda: os.path.exists(self.socket), "munged's socket", 20)
        ctld_port, d_port = free_ports(2)
        user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
        r = self.root
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=tokbench-test
SlurmctldHost={self.host}
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.socket}
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={self.jobcomp}
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName={self.host} CPUs=4 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        self.start_daemon([find("slurmctld"), "-D", "-f", self.conf], "slurmctld")
        self.start_daemon([find("slurmd"), "-D", "-f", self.conf], "slurmd")

        def idle():
            for p in self.procs:
                if p.poll() is not None:
                    fail(f"{p.args[0]} exited with {p.returncode}:\n" + self.logs())
            out = subprocess.run([find("sinfo"), "-h", "-o", "%T"], capture_output=True, text=True, env=self.env())
            return out.returncode == 0 and out.stdout.strip() == "idle"

        self.wait_for(idle, "the Slurm node to be idle", 60)

    def wait_for(self, predicate, what, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.2)
        fail(f"timed out waiting for {what}\n" + self.logs())

    def logs(self):
        text = ""
        for name in sorted(os.listdir(os.path.join(self.root, "log"))):
            with open(os.path.join(self.root, "log", name), errors="replace") as f:
                text += f"--- {name} ---\n" + "".join(f.readlines()[-30:])
        return text

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def sweep(cluster, args):
    return subprocess.run([TOKBENCH, "sweep", "--launcher", "slurm", *args], capture_output=True, text=True,
                          env=cluster.env(), timeout=900)


def completed_jobs(cluster):
    """job id -> (job state, job name) from jobcomp/filetxt's `Key=Value` lines."""
    jobs = {}
    if os.path.exists(cluster.jobcomp):
        with open(cluster.jobcomp) as f:
            for line in f:
                fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
                jobs[int(fields["JobId"])] = (fields.get("JobState"), fields.get("Name"))
    return jobs


def check(cluster, scratch):
    # A job that does not name its device would ask Slurm for no GPU: refused before submitting.
    refused = sweep(cluster, ["--model-name", "pythia-14m", "--out", os.path.join(scratch, "refused")])
    lines = [l for l in refused.stderr.splitlines() if l.strip()]
    if refused.returncode != 2 or len(lines) != 1 or "--device auto" not in lines[0] or "cuda | cpu" not in lines[0]:
        fail(f"--device auto under --launcher slurm: exit {refused.returncode}, want 2 and one line", refused)
    # --slurm-args never reaches a shell: what only a shell would run is refused in one line,
    # before anything is submitted, and runs nothing.
    marker = os.path.join(scratch, "pwned")
    for payload in (f"--comment=$(touch {marker})", f"--comment=`touch {marker}`", f"-p debug; touch {marker}"):
        refused = sweep(cluster, ["--model-name", "pythia-14m", "--device", "cpu", "--slurm-args", payload,
                                  "--out", os.path.join(scratch, "refused-args")])
        lines = [l for l in refused.stderr.splitlines() if l.strip()]
        if refused.returncode != 2 or len(lines) != 1 or "--slurm-args" not in lines[0] or os.path.exists(marker):
            fail(f"--slurm-args {payload!r}: exit {refused.returncode}, marker {os.path.exists(marker)}; want 2, "
                 "one line, nothing run", refused)
    out = os.path.join(scratch, "sweep")
    # Four configurations: seq-len 32 and 64 on one rank, 32 on two ranks (DDP, a 2-task job),
    # and a global batch of 3 that does not split over 2 ranks x micro-batch 1: invalid.
    matrix = os.path.join(scratch, "matrix.toml")
    with open(matrix, "w") as f:
        f.write("""
model-name = "pythia-14m"
n-layers = 1
max-iters = 3
warmup-iters = 1
num-threads = 1
device = "cpu"

[[matrix]]
seq-len = [32, 64]
nproc-per-node = 1

[[matrix]]
seq-len = 32
nproc-per-node = 2
distributed-mode = "ddp"

[[matrix]]
seq-len = 32
nproc-per-node = 2
distributed-mode = "ddp"
global-batch-size = 3
""")
    # Quoted words reach sbatch as words: a comment with blanks and shell characters, literal.
    args = ["--matrix", matrix, "--out", out, "--format", "json", "--timeout", "600",
            "--slurm-args", "--comment='tokbench test: $(not run); `nor this`'"]
    first = sweep(cluster, args)
    if first.returncode != 0:
        fail(f"sweep exit {first.returncode}\n" + cluster.logs(), first)
    runs = json.loads(first.stdout)["runs"]
    if len(runs) != 4 or len({r["sweep_config_id"] for r in runs}) != 4:
        fail(f"{len(runs)} rows, want 4 distinct configurations", first)
    by_shape = {(r["Seq Len"], r["Num GPUS"], r["status"]) for r in runs}
    want = {(32, 1, "ok"), (64, 1, "ok"), (32, 2, "ok"), (32, 2, "invalid")}
    if by_shape != want:
        fail(f"rows {sorted(by_shape)}, want {sorted(want)}", first)
    invalid = [r for r in runs if r["status"] == "invalid"][0]
    if "--global-batch-size" not in invalid["message"] or "slurm_job_id" in invalid:
        fail(f"the invalid row must be refused before submitting, naming the option: {invalid}")
    jobs = completed_jobs(cluster)
    ok_rows = [r for r in runs if r["status"] == "ok"]
    for r in ok_rows:
        job = r.get("slurm_job_id")
        if job not in jobs or jobs[job][0] != "COMPLETED" or jobs[job][1] != "tokbench-" + r["sweep_config_id"]:
            fail(f"row {r['sweep_config_id']} names Slurm job {job}; Slurm's completion log has {jobs}")
        with open(os.path.join(out, "logs", r["sweep_config_id"] + ".log")) as f:
            if f"Slurm job {job} on {cluster.host}" not in f.read():
                fail(f"the log of job {job} does not name it")
        launcher = r.get("config", {}).get("dist_launcher")
        if launcher != "slurm":
            fail(f"job {job}'s ranks did not take their places from srun: config.dist_launcher {launcher}")
    if len(jobs) != 3:
        fail(f"Slurm ran {len(jobs)} jobs, want 3 (none for the invalid configuration): {jobs}")
    pair = [r for r in ok_rows if r["Num GPUS"] == 2][0]
    if pair.get("world_size") != 2 or len(pair.get("ranks", [])) != 2:
        fail(f"the two-rank row: world_size {pair.get('world_size')}, ranks {pair.get('ranks')}")
    if first.stderr.count("tokbench sweep: submitted ") != 3:
        fail("want 3 submissions in the progress lines", first)
    # Again: every configuration is done earlier; nothing is submitted.
    again = sweep(cluster, args)
    if again.returncode != 0 or again.stderr.count("done earlier") != 4 or "tokbench sweep: submitted " in again.stderr:
        fail("the second sweep reran something", again)
    if len(completed_jobs(cluster)) != 3:
        fail("the second sweep ran jobs")
    if len(json.loads(again.stdout)["runs"]) != 4:
        fail("the second sweep lost rows", again)



def start_and_wait_for_running_job(cluster, args, out):
    """Starts a sweep; returns it and its job id once Slurm runs the job."""
    proc = subprocess.Popen([TOKBENCH, "sweep", "--launcher", "slurm", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=cluster.env())
    record = os.path.join(out, "slurm-jobs.json")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if os.path.exists(record):
            with open(record) as f:
                jobs = list(json.load(f).values())
            if jobs:
                state = subprocess.run(["scontrol", "show", "job", "-o", str(jobs[0])], capture_output=True, text=True,
                                       env=cluster.env()).stdout
                if "JobState=RUNNING" in state:
                    return proc, jobs[0]
        time.sleep(0.1)
    proc.kill()
    fail("no running job within 120 s\n" + cluster.logs(), subprocess.CompletedProcess(proc.args, 0, *proc.communicate()))


def check_restart_and_cancel(cluster, scratch):
    base = ["--model-name", "pythia-14m", "--n-layers", "1", "--num-threads", "1", "--device", "cpu",
            "--seq-len", "32", "--warmup-iters", "1", "--format", "json", "--timeout", "600"]
    # SIGKILL: the job keeps running in Slurm; the sweep started again waits for it.
    out = os.path.join(scratch, "restart")
    args = [*base, "--max-iters", "40", "--out", out]
    proc, job = start_and_wait_for_running_job(cluster, args, out)
    proc.kill()
    proc.communicate()
    again = sweep(cluster, args)
    rows = json.loads(again.stdout)["runs"] if again.returncode == 0 else []
    if (len(rows) != 1 or rows[0]["status"] != "ok" or rows[0].get("slurm_job_id") != job
            or f"waiting for Slurm job {job}" not in again.stderr or "tokbench sweep: submitted " in again.stderr):
        fail(f"the restarted sweep did not wait for job {job}", again)
    # SIGINT: the job is cancelled, its result dropped, its record cleared; exit 5 as locally.
    out = os.path.join(scratch, "cancel")
    args = [*base, "--max-iters", "100000", "--out", out]
    proc, job = start_and_wait_for_running_job(cluster, args, out)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=180)
    cancelled = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    if proc.returncode != 5 or f"cancelled Slurm job(s) {job}" not in stderr:
        fail(f"Ctrl-C: exit {proc.returncode}, want 5 naming the cancelled job {job}", cancelled)
    if completed_jobs(cluster).get(job, (None,))[0] != "CANCELLED":
        fail(f"job {job} is not CANCELLED in Slurm's completion log: {completed_jobs(cluster)}")
    with open(os.path.join(out, "slurm-jobs.json")) as f:
        record = json.load(f)
    if os.listdir(os.path.join(out, "runs")) or record:
        fail(f"after Ctrl-C: runs/ {os.listdir(os.path.join(out, 'runs'))}, record {record}; want both empty")


def check_disk_full(cluster, scratch):
    out = os.path.join(scratch, "full")
    args = ["--model-name", "pythia-14m", "--n-layers", "1", "--num-threads", "1", "--device", "cpu",
            "--seq-len", "32", "--max-iters", "3", "--warmup-iters", "1", "--nproc-per-node", "2",
            "--distributed-mode", "ddp", "--out", out, "--format", "json", "--store", "none", "--timeout", "600"]
    env = dict(cluster.env(), LD_PRELOAD=ENOSPC_SHIM, TOKBENCH_ENOSPC_UNDER=os.path.join(out, "runs"),
               TOKBENCH_ENOSPC_NAMED=".json")
    full = subprocess.run([TOKBENCH, "sweep", "--launcher", "slurm", *args], capture_output=True, text=True,
                          env=env, timeout=900)
    errors = [line for line in full.stderr.splitlines() if "error" in line]
    runs = os.listdir(os.path.join(out, "runs")) if os.path.isdir(os.path.join(out, "runs")) else []
    if full.returncode != 8 or len(errors) != 1 or "could not write its result" not in errors[0] or runs:
        fail(f"Slurm job on a full disk: exit {full.returncode}, error lines {errors}, runs {runs}; want 8, one "
             "line, no row\n" + cluster.logs(), full)
    again = sweep(cluster, args)
    rows = json.loads(again.stdout)["runs"] if again.returncode == 0 else []
    if [(r["status"], r["world_size"]) for r in rows] != [("ok", 2)]:
        fail("the Slurm sweep after space was freed", again)


for program in DAEMONS:
    find(program)
scratch = tempfile.mkdtemp(prefix="tokbench-slurm-")
cluster = Cluster(os.path.join(scratch, "cluster"))
try:
    cluster.start()
    check(cluster, scratch)
    check_restart_and_cancel(cluster, scratch)
    check_disk_full(cluster, scratch)
finally:
    cluster.stop()
shutil.rmtree(scratch, ignore_errors=True)
print("PASS slurm")
