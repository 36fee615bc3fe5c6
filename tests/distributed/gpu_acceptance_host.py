"""The GPU acceptance script's host logic, on the CPU: the deadline and the leg planner (with a
fake clock), the results file written after every leg and merged across calls, the timeout path
(text, and the command's children ended), the build's package tree (a .deb unpacked, pkg-config
pointed at it alone, what CMake found checked), and a leg that sizes itself run by run against
a stand-in tokbench. Usage: python3 gpu_acceptance_host.py (unittest)."""
import importlib.machinery
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stderr, redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "gpu-acceptance")
loader = importlib.machinery.SourceFileLoader("gpu_acceptance", SCRIPT)
spec = importlib.util.spec_from_loader("gpu_acceptance", loader)
ga = importlib.util.module_from_spec(spec)
loader.exec_module(ga)


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def quiet(f, *args, **kw):
    with redirect_stderr(io.StringIO()), redirect_stdout(io.StringIO()):
        return f(*args, **kw)


class Deadline(unittest.TestCase):
    def test_budget_counts_down_and_bounds_timeouts(self):
        clock = FakeClock()
        b = ga.Budget(100, clock)
        clock.now += 30
        self.assertEqual(b.left(), 70)
        self.assertTrue(b.fits(70))
        self.assertFalse(b.fits(71))
        self.assertEqual(b.timeout(900), 70)
        self.assertEqual(b.timeout(20), 20)
        clock.now += 200
        self.assertEqual(b.timeout(900), 1)  # past the deadline a command still gets a second, not <= 0
        self.assertEqual(ga.Budget(None, clock).timeout(900), 900)

    def test_legs_start_only_when_their_estimate_fits_and_results_follow_every_leg(self):
        clock = FakeClock()
        budget = ga.Budget(100, clock)
        takes = {"a": 40, "b": 50, "c": 5, "d": 10}
        estimates = {"a": 30, "b": 50, "c": 40, "d": 10}

        def body(name):
            def run(leg):
                clock.now += takes[name]
                leg.note(f"{name} ran")
            return run

        written = []
        legs = quiet(ga.run_legs, ["a", "b", "c", "d"], {n: body(n) for n in takes}, estimates, budget,
                     lambda legs: written.append([(l.name, l.status) for l in legs]))
        self.assertEqual([(l.name, l.status) for l in legs],
                         [("a", "pass"), ("b", "pass"), ("c", "not run"), ("d", "pass")])
        self.assertIn("needs about 40 s and 10 s are left", legs[2].lines[0])
        self.assertEqual(len(written), 4)  # once after every leg, each time with the legs so far
        self.assertEqual(written[1], [("a", "pass"), ("b", "pass")])
        self.assertEqual(round(legs[1].seconds()), 50)

    def test_a_failed_build_blocks_the_legs_after_it_and_a_leg_that_raises_fails_alone(self):
        budget = ga.Budget(None, FakeClock())

        def raises(leg):
            raise KeyError("tokens_per_sec")
        bodies = {"self-check": lambda l: None, "build": lambda l: l.fail("configure failed"), "phi-2": raises}
        legs = quiet(ga.run_legs, ["self-check", "build", "phi-2"], bodies, {"self-check": 5, "build": 1, "phi-2": 1},
                     budget, lambda legs: None, ga.blocked_by)
        self.assertEqual([l.status for l in legs], ["pass", "FAIL", "not run"])
        self.assertIn("the build leg did not pass", legs[2].lines[0])
        legs = quiet(ga.run_legs, ["self-check", "phi-2"], bodies, {"self-check": 5, "phi-2": 1}, budget,
                     lambda legs: None, ga.blocked_by)
        self.assertEqual(legs[1].status, "FAIL")
        self.assertIn("KeyError", legs[1].lines[0])

    def test_a_leg_made_of_runs_notes_each_run_that_does_not_fit(self):
        clock = FakeClock()
        leg = ga.Leg("executors", ga.Budget(60, clock))
        self.assertTrue(leg.room_for("B=1 eager", 30))
        clock.now += 45
        self.assertFalse(leg.room_for("B=1 python-inductor", 100))
        self.assertEqual(leg.status, "pass")
        self.assertIn("not run: B=1 python-inductor (about 100 s; 15 s left", leg.lines[0])

    def test_the_plan_orders_legs_by_value_and_cuts_at_the_deadline(self):
        # "executors" names its three legs; the order is the legs' value, not the line's.
        self.assertEqual(ga.parse_legs("thunder,build,executors", ga.LEGS),
                         ["build", "executors-b1", "executors-b8", "executors-phi2", "thunder"])
        self.assertEqual(ga.parse_legs("executors-b8,predict,kernels", ga.LEGS), ["kernels", "predict", "executors-b8"])
        with self.assertRaisesRegex(ValueError, "'fp16' is not a leg; valid: self-check, build.*, executors$"):
            ga.parse_legs("build,fp16", ga.LEGS)
        with self.assertRaisesRegex(ValueError, "'executors' is not a leg"):
            ga.parse_legs("executors", ga.CPU_LEGS)
        estimates = {"self-check": 5, "build": 480, "executors-b1": 235, "gloo-1gpu": 110}
        self.assertEqual(ga.plan(["self-check", "build", "executors-b1", "gloo-1gpu"], estimates, 540),
                         [("self-check", 5, "all"), ("build", 480, "all"), ("executors-b1", 235, "part"),
                          ("gloo-1gpu", 110, "none")])
        self.assertEqual([r for _, _, r in ga.plan(["build", "gloo-1gpu"], estimates, None)], ["all", "all"])
        # An executors leg starts when its first run fits, not its whole estimate.
        self.assertEqual(ga.start_estimate("executors-b1", estimates), ga.executor_runs("executors-b1")[0][1])
        self.assertEqual(ga.start_estimate("gloo-1gpu", estimates), 110)

    def test_each_executors_leg_fits_a_call_that_has_built(self):
        # What is left of the default deadline after the build (its estimate from nothing) and the
        # self-check: each of the three legs fits it whole, as the whole set of runs did not.
        left = 540 - ga.ESTIMATES["self-check"] - ga.ESTIMATES["build"] + ga.ESTIMATES["build"] // 2
        for name in ga.LEG_GROUPS["executors"]:
            self.assertLessEqual(ga.leg_estimate(name, "/nonexistent"), left, name)
        self.assertEqual(sum(ga.leg_estimate(n, "/nonexistent") for n in ga.LEG_GROUPS["executors"]),
                         sum(e for _, e, _ in ga.executor_runs()))

    def test_the_executors_leg_runs_b8_and_phi2(self):
        labels = [label for label, _, _ in ga.executor_runs()]
        for executor in ga.EXECUTORS:
            self.assertIn(f"Llama-3.2-1B B=1 {executor}", labels)
            self.assertIn(f"Llama-3.2-1B B=8 {executor}", labels)
        self.assertIn("phi-2 B=1 eager", labels)
        self.assertIn("phi-2 B=1 python-eager", labels)
        # fused captured as a CUDA graph (asked for, so it cannot fall back silently) and not.
        graphs = {label: args[args.index("--cuda-graphs") + 1] for label, _, args in ga.executor_runs()
                  if "--cuda-graphs" in args}
        for batch in (1, 8):
            self.assertEqual(graphs[f"Llama-3.2-1B B={batch} fused"], "on")
            self.assertEqual(graphs[f"Llama-3.2-1B B={batch} fused --cuda-graphs off"], "off")
        b8 = [args for label, _, args in ga.executor_runs() if "B=8" in label][0]
        self.assertEqual(b8[b8.index("--micro-batch-size") + 1], "8")
        self.assertTrue(all("B=8" in label for label, _, _ in ga.executor_runs("executors-b8")))
        self.assertTrue(all("phi-2" in label for label, _, _ in ga.executor_runs("executors-phi2")))

    def test_fp8_is_paired_with_inductor_and_eager_runs_once(self):
        runs = [(label, extra) for label, _, extra, _ in ga.FP8_RUNS]
        fp8 = [extra for _, extra in runs if "--use-torchao-fp8-linear" in extra]
        self.assertEqual(sum("--compile" in e and "inductor" in e for e in fp8), 1)
        self.assertEqual(sum("python-eager" in e for e in fp8), 1)
        self.assertEqual(ga.FP8_RUNS[0][3], "bf16")
        self.assertIn("inductor", ga.FP8_RUNS[0][2])


class TimeoutPath(unittest.TestCase):
    def test_a_timeout_returns_text_and_ends_the_commands_children(self):
        # The child prints, then starts a grandchild that holds the pipes open, then sleeps: the
        # call must come back at its timeout with what was printed, as text.
        child = ("import subprocess, sys, time; print('partial', flush=True); "
                 "subprocess.Popen(['sleep', '30']); time.sleep(30)")
        start = time.monotonic()
        code, out, err = ga.run([sys.executable, "-c", child], timeout=2)
        self.assertLess(time.monotonic() - start, 15)
        self.assertEqual(code, 124)
        self.assertIsInstance(out, str)
        self.assertIn("partial", out)
        self.assertIn("timed out after 2 s", err)
        self.assertEqual(ga.text_of(b"caf\xc3\xa9 \xff"), "café \ufffd")
        self.assertEqual(ga.text_of(None), "")

    def test_a_child_in_a_group_of_its_own_cannot_hold_the_call(self):
        # tokbench's ranks and Python child sit in process groups of their own: one that ignores
        # the group's signals and keeps the pipes open must not keep the call waiting.
        child = ("import os, signal, subprocess, sys, time; print('started', flush=True); "
                 "subprocess.Popen([sys.executable, '-c', 'import signal, time; "
                 "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'], start_new_session=True); "
                 "time.sleep(60)")
        start = time.monotonic()
        code, out, err = ga.run([sys.executable, "-c", child], timeout=2, grace=1)
        self.assertLess(time.monotonic() - start, 20)
        self.assertEqual(code, 124)
        self.assertIsInstance(out, str)
        self.assertIn("timed out after 2 s", err)

    def test_a_missing_program_is_an_exit_code_not_an_exception(self):
        code, out, err = ga.run(["/nonexistent/tokbench"])
        self.assertEqual(code, 127)


class Results(unittest.TestCase):
    def test_results_go_to_the_device_tools_out_folder_where_it_is_set(self):
        self.assertEqual(ga.default_out("2026-12-08", "/out"), "/out/gpu-2026-12-08.md")
        self.assertEqual(ga.default_out("2026-12-08", None),
                         os.path.join(ga.ROOT, "docs", "results", "gpu-2026-12-08.md"))
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "gpu-1999-01-01.md")
            self.assertEqual(ga.earlier_results(out, "1999-01-01"), {})
            with open(os.path.join(d, "gpu-1999-01-01.json"), "w") as f:
                json.dump({"legs": {"build": {}}}, f)
            self.assertEqual(ga.earlier_results(out, "1999-01-01"), {"legs": {"build": {}}})

    def test_carried_wheels_are_installed_outside_the_tree_and_put_on_the_path(self):
        with tempfile.TemporaryDirectory() as d:
            env = {"PATH": os.environ["PATH"]}
            self.assertIn("no carried wheels", ga.install_wheels(sys.executable, env, os.path.join(d, "none"),
                                                                 os.path.join(d, "site")))
            self.assertNotIn("PYTHONPATH", env)
            wheels = os.path.join(d, "wheels")
            os.makedirs(wheels)
            with open(os.path.join(wheels, "broken-1.0-py3-none-any.whl"), "w") as f:
                f.write("not a zip")
            note = ga.install_wheels(sys.executable, env, wheels, os.path.join(d, "site"))
            self.assertIn("could not install", note)
            self.assertNotIn("PYTHONPATH", env)

    def call(self, n):
        return {"date": "2026-12-05", "host": "h", "revision": f"r{n}", "devices": "H200", "args": "", "deadline": "540 s"}

    def test_a_later_call_adds_legs_and_keeps_what_it_did_not_run(self):
        budget = ga.Budget(None, FakeClock())
        first = [ga.Leg("build", budget), ga.Leg("executors-b1", budget)]
        first[1].note("| eager | 34143 |")
        doc = ga.merge_results({}, first, self.call(1))
        second = [ga.Leg("executors-b1", budget), ga.Leg("gloo-1gpu", budget), ga.Leg("build", budget)]
        second[0].skip("not run: past the deadline")
        second[1].fail("exit 1")
        doc = ga.merge_results(json.loads(json.dumps(doc)), second, self.call(2))
        self.assertEqual(doc["legs"]["executors-b1"]["status"], "pass")  # the earlier result stays
        self.assertEqual(doc["legs"]["executors-b1"]["call"], 1)
        self.assertEqual(doc["legs"]["gloo-1gpu"]["status"], "FAIL")
        self.assertEqual(doc["legs"]["build"]["call"], 2)  # re-run: replaced
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "gpu.md")
            ga.write_results(out, doc, ga.LEGS)
            with open(out) as f:
                text = f.read()
            with open(os.path.join(d, "gpu.json")) as f:
                self.assertEqual(json.load(f), doc)
        self.assertLess(text.index("## build"), text.index("## executors-b1"))
        self.assertLess(text.index("## executors-b1"), text.index("## gloo-1gpu"))
        self.assertIn("| eager | 34143 |", text)
        self.assertIn("call 2: H200", text)

    def test_bad_usage_exits_2_naming_the_option(self):
        for argv, words in ((["--legs", "build,warp"], "'warp' is not a leg"),
                            (["--deadline", "soon"], "--deadline 'soon'"), (["--deadline", "-5"], "--deadline '-5'")):
            err = io.StringIO()
            with redirect_stderr(err):
                self.assertEqual(ga.main(argv), 2)
            self.assertIn(words, err.getvalue())

    def test_dry_run_prints_the_plan_and_runs_nothing(self):
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(ga.main(["--dry-run", "--deadline", "600", "--build-dir", "/nonexistent"]), 0)
        text = out.getvalue()
        self.assertIn("build           about  480 s  runs", text)
        self.assertIn("executors-b1: Llama-3.2-1B B=1 eager about 30 s", text)
        self.assertIn("not started: past the deadline", text)


class PackageTree(unittest.TestCase):
    def test_a_deb_is_unpacked_once_and_its_runtime_library_linked(self):
        with tempfile.TemporaryDirectory() as d:
            pkg = os.path.join(d, "pkg")
            lib = os.path.join(pkg, "usr", "lib", ga.LIBARCH)
            os.makedirs(lib)
            os.makedirs(os.path.join(pkg, "DEBIAN"))
            with open(os.path.join(lib, "libjemalloc.so.2"), "w") as f:
                f.write("not really")
            # A -dev package's link to another package's library by its system path, as
            # zlib1g-dev's libz.so: the tree must link to its own copy.
            os.makedirs(os.path.join(pkg, "lib", ga.LIBARCH))
            with open(os.path.join(pkg, "lib", ga.LIBARCH, "libz.so.1.2.13"), "w") as f:
                f.write("the tree's zlib")
            os.symlink(f"/lib/{ga.LIBARCH}/libz.so.1.2.13", os.path.join(lib, "libz.so"))
            os.symlink(f"/lib/{ga.LIBARCH}/libnothere.so.1", os.path.join(lib, "libnothere.so"))
            with open(os.path.join(pkg, "DEBIAN", "control"), "w") as f:
                f.write("Package: fake-jemalloc\nVersion: 1\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: t\n")
            debs = os.path.join(d, "debs")
            os.makedirs(debs)
            subprocess.run(["dpkg-deb", "--build", pkg, os.path.join(debs, "fake.deb")], check=True,
                           capture_output=True)
            root = ga.deb_root(debs)
            self.assertEqual(root, os.path.join(debs, "root"))
            link = os.path.join(debs, "runtime", "libjemalloc.so.2")
            with open(link) as f:
                self.assertEqual(f.read(), "not really")
            libz = os.path.join(root, "usr", "lib", ga.LIBARCH, "libz.so")
            self.assertFalse(os.path.isabs(os.readlink(libz)))
            with open(libz) as f:
                self.assertEqual(f.read(), "the tree's zlib")
            # a link whose target the tree lacks is left as the package made it
            self.assertEqual(os.readlink(os.path.join(root, "usr", "lib", ga.LIBARCH, "libnothere.so")),
                             f"/lib/{ga.LIBARCH}/libnothere.so.1")
            self.assertEqual(ga.deb_root(debs), root)  # a second call reuses the tree
            self.assertIsNone(ga.deb_root(os.path.join(d, "none")))
            env = ga.tokbench_env(root, {"LD_LIBRARY_PATH": "/opt/x", "RANK": "3"})
            self.assertEqual(env["PKG_CONFIG_SYSROOT_DIR"], root)
            self.assertTrue(all(p.startswith(root) for p in env["PKG_CONFIG_LIBDIR"].split(":")))
            self.assertEqual(env["LD_LIBRARY_PATH"], os.path.join(debs, "runtime") + ":/opt/x")
            self.assertNotIn("RANK", env)

    def test_the_configure_check_names_what_was_found_outside_the_tree(self):
        with tempfile.TemporaryDirectory() as d:
            root = os.path.join(d, "root")
            with open(os.path.join(d, "CMakeCache.txt"), "w") as f:
                f.write(f"CLI11_DIR:PATH={root}/usr/share/cmake/CLI11\n"
                        "GLOO_INCLUDE_DIR:PATH=/usr/include\n"
                        "pkgcfg_lib_GLIB_glib-2.0:FILEPATH=pkgcfg_lib_GLIB_glib-2.0-NOTFOUND\n"
                        f"pkgcfg_lib_SQLITE3_sqlite3:FILEPATH={root}x/usr/lib/libsqlite3.so\n")
            found, outside = ga.found_outside(d, root)
            self.assertEqual(len(found), 4)
            self.assertEqual([n for n, _ in outside],
                             ["GLOO_INCLUDE_DIR", "pkgcfg_lib_GLIB_glib-2.0", "pkgcfg_lib_SQLITE3_sqlite3"])

    def test_configure_points_cmake_at_the_tree_and_leaves_the_benchmarks_out(self):
        command = ga.configure_command("/b", "/torch/share/cmake", "/t/root")
        self.assertIn("-DCMAKE_PREFIX_PATH=/torch/share/cmake;/t/root/usr", command)
        self.assertIn("-DTOKBENCH_BUILD_BENCHMARKS=OFF", command)
        self.assertIn(f"-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,/t/root/usr/lib/{ga.LIBARCH}", command)
        self.assertFalse(any("TOKBENCH_WITH_CUDA" in c for c in command))
        # With nvcc, the CUDA kernels are required: a configure without them fails, not builds.
        command = ga.configure_command("/b", "/torch/share/cmake", None, "/usr/local/cuda/bin/nvcc")
        self.assertIn("-DTOKBENCH_WITH_CUDA=ON", command)
        self.assertIn("-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc", command)

    def test_runtime_links_are_relative_and_a_carried_dangling_one_is_made_again(self):
        with tempfile.TemporaryDirectory() as d:
            debs = os.path.join(d, "debs")
            lib = os.path.join(debs, "root", "usr", "lib", ga.LIBARCH)
            os.makedirs(lib)
            with open(os.path.join(lib, "libjemalloc.so.2"), "w") as f:
                f.write("not really")
            with open(os.path.join(debs, "x.deb"), "w") as f:
                f.write("")
            with open(os.path.join(debs, "root", ".unpacked"), "w") as f:
                f.write("x.deb")  # unpacked already: only the links are made
            runtime = os.path.join(debs, "runtime")
            os.makedirs(runtime)
            os.symlink("/elsewhere/debs/root/usr/lib/libjemalloc.so.2", os.path.join(runtime, "libjemalloc.so.2"))
            ga.deb_root(debs)
            link = os.path.join(runtime, "libjemalloc.so.2")
            self.assertFalse(os.path.isabs(os.readlink(link)), os.readlink(link))
            moved = os.path.join(d, "moved")
            shutil.move(debs, moved)  # the folder carried to another place still resolves
            with open(os.path.join(moved, "runtime", "libjemalloc.so.2")) as f:
                self.assertEqual(f.read(), "not really")


FAKE_TOKBENCH = r'''#!/usr/bin/env python3
import json, sys, time
args = sys.argv[1:]
path = args[args.index("--json-path") + 1]
executor = args[args.index("--executor") + 1] if "--executor" in args else "eager"
other = 0.05 if executor == "python-inductor" else 0.01
avg, G, T, flops = 100.0, 1, 2048, 10**12
record = {"status": "ok", "Global BS": G, "Seq Len": T, "Num GPUS": 1, "GA": 1, "Micro BS": G,
          "tokens_per_sec": G * T / (avg / 1000), "average_iter_time": avg,
          "tokens_per_sec_per_device": G * T / (avg / 1000), "model_flops": flops,
          "model_flop_per_sec": flops / (avg / 1000), "mfu": 0.4, "device": "cuda:0", "device_name": "FakeGPU",
          "memory_used_GB": 10.0, "mfu_precision": "bf16",
          "cuda_graphs": args[args.index("--cuda-graphs") + 1] if "--cuda-graphs" in args else "off",
          "time_account": {"categories": {"other": {"share": other}},
                           "other_top": [{"name": "## Call CompiledFxGraph f ##", "profiled_s": 0.002}]}}
json.dump(record, open(path, "w"))
'''


class ExecutorsLeg(unittest.TestCase):
    def test_runs_that_fit_are_measured_and_the_account_share_is_held_to_3_percent(self):
        with tempfile.TemporaryDirectory() as d:
            tokbench = os.path.join(d, "tokbench")
            with open(tokbench, "w") as f:
                f.write(FAKE_TOKBENCH)
            os.chmod(tokbench, 0o755)
            clock = FakeClock()
            # Room for the B=1 runs only (30 + 30 + 45 + 100 + 30 s of estimates, fused twice: with
            # and without CUDA graphs); the clock moves by each run's estimate as it starts.
            budget = ga.Budget(236, clock)
            real = ga.tokbench_run

            def timed(tokbench, args, env, timeout):
                executor = args[args.index("--executor") + 1]
                batch = int(args[args.index("--micro-batch-size") + 1])
                key = (executor, batch) if "Llama-3.2-1B" in args else (f"phi-2 {executor}", batch)
                clock.now += ga.RUN_ESTIMATES[key]
                return real(tokbench, args, env, timeout)
            ctx = ga.Context(tokbench=tokbench, env=dict(os.environ), budget=budget, gpus=[("FakeGPU", 141.0)])
            leg = ga.Leg("executors-b1", budget)
            ga.tokbench_run = timed
            try:
                ga.leg_executors(leg, ctx, "executors-b1")
            finally:
                ga.tokbench_run = real
        text = "\n".join(leg.lines)
        self.assertEqual(leg.status, "FAIL")
        self.assertIn("Llama-3.2-1B B=1 python-inductor: the time account leaves 5.0% of the iteration unexplained",
                      text)
        self.assertIn("| Llama-3.2-1B B=1 eager | 20480 | 40.0% | 10.0 | 100.0 | 1.0% |", text)
        self.assertIn("| Llama-3.2-1B B=1 fused --cuda-graphs off | 20480 |", text)
        self.assertNotIn("cuda_graphs", text)  # each fused run's record says what it asked for
        self.assertNotIn("B=8", text)  # the B=1 leg's runs alone
        self.assertNotIn("not run: Llama-3.2-1B B=1", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
