"""The Python step's events line on a CUDA device, without one: profiled_events over stand-in
profiler events as torch 2.11's KinetoEvent presents them (device type, device index, resource
id, correlation id). The runtime calls become "launches" and no host event, the run's device's
kernels become "device_events" (another device's are not this rank's; the device-side copies
of record_function ranges and CUPTI's waits are no work and are dropped); a CPU run's line has
neither. tokbench's reading of such a line is tests/run/test_python_time_account.cpp's; what a
real GPU records is scripts/gpu-acceptance's."""
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import torch  # noqa: E402

import tokbench_python_step as step  # noqa: E402

CPU, CUDA = torch.autograd.DeviceType.CPU, torch.autograd.DeviceType.CUDA


class Event:
    def __init__(self, name, start, end, device_type=CPU, device_index=-1, stream=0, correlation=0, thread=5,
                 scope=0, shapes=()):
        self._v = dict(name=name, start_ns=start, end_ns=end, device_type=device_type, device_index=device_index,
                       device_resource_id=stream, correlation_id=correlation, start_thread_id=thread, scope=scope,
                       shapes=list(shapes), fwd_thread_id=0, is_async=False, sequence_nr=-1,
                       # Kineto's USER_ANNOTATION (a record_function range on the host) and
                       # GPU_USER_ANNOTATION (its projection onto the device)
                       is_user_annotation=scope == 7)

    def __getattr__(self, key):
        return lambda: self._v[key]


events = [
    Event("tokbench::iteration", 0, 1000, scope=7),
    Event("aten::mm", 100, 200, shapes=[[2, 3], [3, 4]]),
    Event("cudaLaunchKernel", 150, 160, correlation=11),
    Event("cuLaunchKernelEx", 650, 660, correlation=12),
    Event("cudaDeviceSynchronize", 900, 1000, correlation=13),
    Event("sm90_gemm_kernel", 300, 600, CUDA, device_index=1, stream=7, correlation=11),
    Event("ncclDevKernel_AllReduce", 700, 800, CUDA, device_index=1, stream=13, correlation=12),
    Event("kernel_of_another_device", 300, 400, CUDA, device_index=0, stream=7, correlation=14),
    # The range around the launch, as Kineto also reports it on the device (correlated to the
    # host range, spanning the kernels launched in it): no work of its own. On the H200 such
    # spans were half of python-eager's device time in "other".
    Event("tokbench::norm", 140, 170, scope=7),
    Event("tokbench::norm", 300, 600, CUDA, device_index=1, stream=7, correlation=1, scope=7),
    Event("Stream Sync", 800, 900, CUDA, device_index=1, stream=7, correlation=13),
]
profiler = types.SimpleNamespace(profiler=types.SimpleNamespace(
    kineto_results=types.SimpleNamespace(events=lambda: events)))
line = step.profiled_events(torch, profiler, torch.device("cuda", 1))

failures = []
host = [line["names"][row[0]] for row in line["events"]]
if host != ["tokbench::iteration", "aten::mm", "tokbench::norm"]:
    failures.append(f"host events {host}: the runtime calls must not be among them")
if sorted(line["launches"]) != [[11, 150, 5], [12, 650, 5], [13, 900, 5]]:
    failures.append(f"launches {line['launches']}")
device = [[line["names"][r[0]], *r[1:]] for r in line["device_events"]]
if device != [["sm90_gemm_kernel", 300, 600, 7, 11], ["ncclDevKernel_AllReduce", 700, 800, 13, 12]]:
    failures.append(f"device events {device}: the run's device's kernels (index 1), as [name, start, end, stream, "
                    "corr]; no range's projection onto the device, no wait")
cpu_line = step.profiled_events(torch, profiler, torch.device("cpu"))
if "device_events" in cpu_line or "launches" in cpu_line:
    failures.append("a CPU run's line carries device keys")
if failures:
    sys.exit("FAIL: " + "; ".join(failures))
print("ok: the events line on a CUDA device splits host events, launches and the device's activities")
