#pragma once
// The number and unit formatters of everything the harness prints: the console, the
// report pages (md, csv, html) and `harness compare`. One place, so that a figure reads
// the same wherever it is shown.
#include <string>

namespace harness {

// Seconds with a unit, 3 decimals (2 in microseconds): "1.234 ms", "12.50 us", "80 ns".
std::string format_seconds(double s);
// Seconds with a unit, 3 significant figures: "1.23 ms", "12.5 us", "80.0 ns" (compare's
// tables, whose columns are narrower).
std::string format_seconds_short(double s);
// A FLOP rate from GFLOP/s: "45.2 TFLOP/s", "812.3 GFLOP/s".
std::string format_rate(double gflops);
// Energy: "1.23 J", "45.60 mJ", "7.80 uJ" (energy per launch).
std::string format_energy(double joules);
// FLOP per joule: "1.23 TFLOP/J", "812.3 GFLOP/J".
std::string format_flop_per_j(double flop_per_j);
// Binary bytes: "1.50 GiB", "3.2 MiB", "4.0 KiB", "512 B".
std::string format_bytes(double bytes);
// An integer without decimals, else the shortest form: "4096", "0.5", "1e-05".
std::string format_number(double v);
// A measured figure in a table (GFLOP/s, GB/s, intensity; not negative): 0, 1 or 2
// decimals by size: "1234", "56.7", "8.90".
std::string format_figure(double v);
// Three significant figures of any sign and size: "1234", "-56.7", "8.90", "0.0123".
std::string format_3sig(double v);
// A relative change as a signed percentage, 1 decimal: "+12.3%", "-0.4%".
std::string format_change(double fraction);
// A p-value: 3 decimals, or scientific below 0.001, "<1e-16" at the bottom.
std::string format_p_value(double p);
// A value of a per-step curve (a loss): 3 decimals in [0.01, 1e4), else 4 significant
// figures; "-" when not finite.
std::string format_curve_value(double v);

}  // namespace harness
