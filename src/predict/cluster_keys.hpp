// The keys of a cluster file (TOML, docs/predict.md, "Clusters"; the presets in data/clusters/):
// predict/cluster.cpp reads it, and a prediction's `cluster` block echoes it under the same keys
// (prediction.cpp). A header of constants only.
#pragma once

namespace tokbench::predict::cluster_key {

// Not a key: the name --cluster (and sweep's --predict) give the cluster made of tokbench comm's
// measured times, which the prediction's cluster block then names.
inline constexpr char measured_cluster[] = "measured";

inline constexpr char name[] = "name";
inline constexpr char device[] = "device";
inline constexpr char device_name[] = "device_name";
inline constexpr char devices_per_node[] = "devices_per_node";
inline constexpr char memory_per_device_GB[] = "memory_per_device_GB";
inline constexpr char cores_per_node[] = "cores_per_node";
inline constexpr char algorithm[] = "algorithm";
inline constexpr char peak_TFLOP_per_s[] = "peak_TFLOP_per_s";
inline constexpr char intra_node[] = "intra_node";
inline constexpr char inter_node[] = "inter_node";

// [intra_node] and [inter_node]
inline constexpr char bandwidth_GBps[] = "bandwidth_GBps";
inline constexpr char latency_us[] = "latency_us";
inline constexpr char efficiency[] = "efficiency";

// [peak_TFLOP_per_s]: by precision, in the words a record's mfu_precision holds.
inline constexpr char fp32[] = "fp32";
inline constexpr char tf32[] = "tf32";
inline constexpr char bf16[] = "bf16";
inline constexpr char fp16[] = "fp16";
inline constexpr char fp8[] = "fp8";

}  // namespace tokbench::predict::cluster_key
