#!/usr/bin/env python3
"""Reads what bench/model_grid.sh wrote and says how good the cost model is.

  bench/model_grid.py [OUT] [--svg FILE] [--csv FILE] [--pool DIR...]

OUT defaults to build/bench-out/grid. Prints a markdown report: per collective and
rank count, the geometric mean of |log(predicted / measured)| (as a percentage error),
the worst cell, and the regret of `auto` (the measured time of the algorithm the
model picks over the measured time of the fastest); then the worst cells and where
each target stands. A cell measured in several rounds (raw/round-N/) counts its median.
Where each pass was also priced with the calibration taken just before it
(raw/round-N/predict-*.jsonl, bench/model_grid.sh's GRID_CAL_EACH_PASS), the report adds
that pairing: a cell's ratio is the median over its passes of that pass's predicted over
that pass's measured time; and where each group was priced with the cores' placement
measured just before it (raw/round-N/probed-predict-*.jsonl), that too, with auto's
regret under those prices.
--svg writes a heatmap (rows: collective x algorithm; columns:
ranks x size; colour: log ratio), --csv the cells it read (the raw data of the table).
--pool names more grids measured the same way: auto's picks by placement are then also
judged against the fastest over every pass of OUT and of them (regrets_over_grids), which
three passes alone cannot tell apart from noise; and the model's error is taken over every
pass of them too (errors_over_grids), with the cells it gets wrong the same way in (nearly)
every pass: errors of the model, not of the host.
Standard library only.
"""

import argparse
import csv
import glob
import json
import math
import os
import statistics
import sys

COLLS = ["allreduce", "broadcast", "allgather", "reduce_scatter", "alltoall"]
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}

# The targets: geomean error, the worst cell, auto's regret (each cell, geomean).
TARGET_GEOMEAN = 1.15
TARGET_WORST = 2.0
TARGET_REGRET_CELL = 1.10
TARGET_REGRET_GEOMEAN = 1.03
# A cell the model gets wrong the same way, not by chance: at least this share of its passes
# err in one direction, and their median is further off than this.
CONSISTENT_SHARE = 0.9
CONSISTENT_OFF = 1.25
# The report's split by size: cells below it are priced mostly by wake-ups.
SMALL_BYTES = 64 << 10


def size_bytes(label):
    if label[-1] in UNITS:
        return int(label[:-1]) * UNITS[label[-1]]
    return int(label)


def read_jsonl(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                rows.append(json.loads(line))
    return rows


def pass_times(path):
    """One pass's bench file: algorithm -> its out-of-place time per call (the median of its
    rows, where runs of bench were appended to one file), and algorithm -> message bytes."""
    times, nbytes = {}, {}
    for b in read_jsonl(path):
        if b["out_of_place"]["time_us"] > 0:
            times.setdefault(b["algorithm"], []).append(b["out_of_place"]["time_us"])
            nbytes[b["algorithm"]] = b["size"]
    return {a: statistics.median(v) for a, v in times.items()}, nbytes


def measured_runs(out, name):
    """A cell's bench output, one file per round (raw/round-N/), or the one file of a grid
    measured in a single pass (raw/bench-NAME.jsonl)."""
    rounds = sorted(glob.glob(os.path.join(out, "raw", "round-*", "bench-" + name + ".jsonl")))
    single = os.path.join(out, "raw", "bench-" + name + ".jsonl")
    return rounds or ([single] if os.path.exists(single) else [])


def read_cells(out):
    """Every (coll, ranks, size, algorithm) measured and predicted, and auto's picks; a
    cell's measured time is the median over its rounds."""
    cells, picks = [], {}
    for predict_path in sorted(glob.glob(os.path.join(out, "raw", "predict-*.jsonl"))):
        name = os.path.basename(predict_path)[len("predict-"):-len(".jsonl")]
        coll, ranks, size = name.rsplit("-", 2)
        predicted = read_jsonl(predict_path)
        pred = {p["algorithm"]: p["predicted_us"] for p in predicted}
        key = (coll, int(ranks), size)
        for p in predicted:
            if p.get("auto_pick"):
                picks[key] = p["algorithm"]
        runs, nbytes = {}, {}
        for path in measured_runs(out, name):
            times, sizes = pass_times(path)
            for algo, t in times.items():
                runs.setdefault(algo, []).append(t)
            nbytes.update(sizes)
        for algo, times in runs.items():
            if algo not in pred or pred[algo] <= 0:
                continue
            cells.append({"coll": coll, "ranks": int(ranks), "size": size, "bytes": nbytes[algo], "algorithm": algo,
                          "measured_us": statistics.median(times), "runs": len(times),
                          "spread": max(times) / min(times), "predicted_us": pred[algo]})
    return cells, picks


def same_steps(rows):
    """algorithm -> the first algorithm of predict's rows that lowers the call to the same
    steps (predict's same_steps_as), or itself."""
    return {p["algorithm"]: p.get("same_steps_as") or p["algorithm"] for p in rows}


def as_one(measured, root):
    """Measured times with every set of algorithms that run the same steps taken as one
    schedule: the median of its members' times, under its first member's name."""
    groups = {}
    for algo, t in measured.items():
        groups.setdefault(root.get(algo, algo), []).append(t)
    return {r: statistics.median(v) for r, v in groups.items()}


def priced_passes(out, prefix):
    """Every pass of a grid that was priced on its own (raw/round-N/PREFIX*.jsonl) and
    measured: ((coll, ranks, size), predict's rows, the pass's time per algorithm)."""
    for predict_path in sorted(glob.glob(os.path.join(out, "raw", "round-*", prefix + "*.jsonl"))):
        name = os.path.basename(predict_path)[len(prefix):-len(".jsonl")]
        bench_path = os.path.join(os.path.dirname(predict_path), "bench-" + name + ".jsonl")
        if not os.path.exists(bench_path):
            continue
        coll, ranks, size = name.rsplit("-", 2)
        yield (coll, int(ranks), size), read_jsonl(predict_path), pass_times(bench_path)[0]


def auto_pick(rows):
    """The algorithm predict's rows mark as auto's pick (None: none)."""
    return next((p["algorithm"] for p in rows if p.get("auto_pick")), None)


def paired_ratios(out, prefix="predict-", picks=None, pooled=None):
    """(coll, ranks, size, algorithm) -> [predicted / measured of each pass priced with its own
    calibration (prefix "probed-predict-": with the placement measured before the cell's
    group)]; empty where no pass was priced so. `picks`, where given, gets (coll, ranks, size)
    -> [auto's regret in each pass, with that pass's prices]; `pooled` the same with the
    algorithms that run the same steps measured as one (as_one)."""
    ratios = {}
    for key, rows, measured in priced_passes(out, prefix):
        pred = {p["algorithm"]: p["predicted_us"] for p in rows}
        for algo, t in measured.items():
            if pred.get(algo, 0) > 0:
                ratios.setdefault(key + (algo,), []).append(pred[algo] / t)
        pick = auto_pick(rows)
        if picks is not None and pick in measured and len(measured) > 1:
            picks.setdefault(key, []).append(measured[pick] / min(measured.values()))
        if pooled is not None and pick in measured and len(measured) > 1:
            root = same_steps(rows)
            one = as_one(measured, root)
            pooled.setdefault(key, []).append(one[root.get(pick, pick)] / min(one.values()))
    return ratios


def twin_spread(out):
    """How far apart this machine measures algorithms that run the very same steps (predict's
    same_steps_as), in the same pass: ([max/min of each such pair in each pass],
    [max/min of each pair's median over the passes])."""
    per_pass, per_cell = [], []
    for predict_path in sorted(glob.glob(os.path.join(out, "raw", "predict-*.jsonl"))):
        name = os.path.basename(predict_path)[len("predict-"):-len(".jsonl")]
        twins = [(p["algorithm"], p["same_steps_as"]) for p in read_jsonl(predict_path) if p.get("same_steps_as")]
        if not twins:
            continue
        ratios = {}
        for path in measured_runs(out, name):
            times = pass_times(path)[0]
            for a, b in twins:
                if a in times and b in times:
                    ratios.setdefault((a, b), []).append(times[a] / times[b])
        for v in ratios.values():
            per_pass.extend(max(r, 1 / r) for r in v)
            m = statistics.median(v)
            per_cell.append(max(m, 1 / m))
    return per_pass, per_cell


def paired_report(ratios, what="Each pass priced with the calibration taken just before it", column="paired"):
    """The grid with every pass priced by the calibration taken just before it."""
    cells = [statistics.median(v) for v in ratios.values()]
    g = math.exp(sum(abs(math.log(r)) for r in cells) / len(cells))
    within = sum(1 for r in cells if 1 / TARGET_WORST <= r <= TARGET_WORST)
    lines = ["", "%s (a cell: the median over its passes "
             "of predicted / measured): geomean error %s, %d of %d cells within 2x, the worst %.2fx off."
             % (what, pct(g), within, len(cells), max(max(r, 1 / r) for r in cells))]
    lines.append("")
    lines.append("| collective | geomean error, %s | within 2x |" % column)
    lines.append("|---|---:|---:|")
    for coll in COLLS:
        sub = [statistics.median(v) for k, v in ratios.items() if k[0] == coll]
        if sub:
            lines.append("| %s | %s | %d/%d |" % (coll, pct(math.exp(sum(abs(math.log(r)) for r in sub) / len(sub))),
                                                  sum(1 for r in sub if 1 / TARGET_WORST <= r <= TARGET_WORST),
                                                  len(sub)))
    return lines, g, within, len(cells)


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def error_geomean(cells):
    """exp(mean |log ratio|): 1.15 means 15% off on the geometric average."""
    return math.exp(sum(abs(math.log(c["ratio"])) for c in cells) / len(cells)) if cells else float("nan")


def regrets(cells, picks):
    """auto's regret per (coll, ranks, size): its pick's measured time over the fastest."""
    by_key = {}
    for c in cells:
        by_key.setdefault((c["coll"], c["ranks"], c["size"]), {})[c["algorithm"]] = c["measured_us"]
    out = {}
    for key, measured in by_key.items():
        pick = picks.get(key)
        if pick in measured:
            best = min(measured, key=measured.get)
            out[key] = (measured[pick] / measured[best], pick, best)
    return out


def pass_regrets(out):
    """The noise floor of the regret targets: in every cell, the algorithm one pass measured
    fastest, judged on the median of the other passes (what a pick made by measuring this
    machine once would score). Empty with fewer than 3 passes."""
    out_regrets = []
    for predict_path in sorted(glob.glob(os.path.join(out, "raw", "predict-*.jsonl"))):
        name = os.path.basename(predict_path)[len("predict-"):-len(".jsonl")]
        passes = []
        for path in measured_runs(out, name):
            passes.append(pass_times(path)[0])
        if len(passes) < 3:
            continue
        algos = set.intersection(*[set(p) for p in passes])
        if not algos:
            continue
        for i, p in enumerate(passes):
            pick = min(algos, key=lambda a: p[a])
            others = [q for j, q in enumerate(passes) if j != i]
            median = {a: statistics.median([q[a] for q in others]) for a in algos}
            out_regrets.append(median[pick] / min(median.values()))
    return out_regrets


def regrets_over_grids(outs):
    """auto's regret with the fastest judged over many passes: (coll, ranks, size) ->
    (regret, passes, fastest). Every pass of every grid in `outs` priced with the placement
    measured before its group (probed-predict-*) counts: its times over their geometric
    mean (so that a slower pass weighs as much as a faster one), each algorithm's median of
    those over the passes, and each pass's pick scored on those medians; the cell's regret
    is the median of its passes' scores."""
    passes = {}
    for out in outs:
        for key, rows, times in priced_passes(out, "probed-predict-"):
            pick = auto_pick(rows)
            if pick in times and len(times) > 1:
                passes.setdefault(key, []).append((times, pick))
    out_regrets = {}
    for key, runs in passes.items():
        algos = set.intersection(*[set(t) for t, _ in runs])
        if len(algos) < 2:
            continue
        shares = {a: [] for a in algos}
        for times, _ in runs:
            mean = math.exp(sum(math.log(times[a]) for a in algos) / len(algos))
            for a in algos:
                shares[a].append(times[a] / mean)
        median = {a: statistics.median(v) for a, v in shares.items()}
        fastest = min(median, key=median.get)
        scores = [median[pick] / median[fastest] for _, pick in runs if pick in median]
        if scores:
            out_regrets[key] = (statistics.median(scores), len(runs), fastest)
    return out_regrets


def errors_over_grids(outs):
    """The model's error over every pass of every grid in `outs`, each (collective, ranks)
    group of a pass priced with the placement measured before it: (coll, ranks, size,
    algorithm) -> [predicted / measured of each pass]."""
    ratios = {}
    for out in outs:
        for key, v in paired_ratios(out, "probed-predict-").items():
            ratios.setdefault(key, []).extend(v)
    return ratios


def consistent_errors(ratios):
    """The cells whose passes err the same way (at least CONSISTENT_SHARE of them on one
    side of the measured time) by more than CONSISTENT_OFF (their median): [(median, key,
    share of the passes on that side, passes)], furthest off first."""
    out = []
    for key, v in ratios.items():
        if len(v) < 3:
            continue
        m = statistics.median(v)
        same = sum(1 for r in v if (r < 1) == (m < 1)) / len(v)
        if same >= CONSISTENT_SHARE and max(m, 1 / m) > CONSISTENT_OFF:
            out.append((m, key, same, len(v)))
    return sorted(out, key=lambda e: -abs(math.log(e[0])))


def read_meta(out):
    meta = {}
    path = os.path.join(out, "meta.txt")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                k, _, v = line.partition(":")
                meta[k.strip()] = v.strip()
    return meta


def pct(x):
    return "%.1f%%" % ((x - 1) * 100)


def met(ok):
    return "met" if ok else "**not met**"


def report(cells, regret, meta, model, floor=(), paired=None):
    lines = []
    lines.append("Machine: %s; %s; load average %s at the start, %s at the end; %s s; predictions: %s."
                 % (meta.get("machine", "?"), meta.get("date", "?"), meta.get("load_start", "?"),
                    meta.get("load_end", "?"), meta.get("seconds", "?"), model))
    runs = [c["runs"] for c in cells]
    lines.append("")
    if max(runs) == 1:
        lines.append("Measured time per cell: one run (the grid in a single pass).")
    else:
        lines.append("Measured time per cell: the median of %s (passes over the whole grid, minutes apart); "
                     "%d of %d cells' runs differ by more than 1.5x, %d by more than 2x."
                     % ("%d runs" % max(runs) if min(runs) == max(runs) else "%d to %d runs" % (min(runs), max(runs)),
                        sum(1 for c in cells if c["spread"] > 1.5), len(cells),
                        sum(1 for c in cells if c["spread"] > 2)))
    lines.append("")
    lines.append("| collective | ranks | cells | geomean error | within 2x | worst cell (predicted / measured) "
                 "| auto regret, geomean | auto regret, worst |")
    lines.append("|---|---:|---:|---:|---:|---|---:|---:|")
    for coll in COLLS:
        for ranks in sorted({c["ranks"] for c in cells if c["coll"] == coll}):
            sub = [c for c in cells if c["coll"] == coll and c["ranks"] == ranks]
            worst = max(sub, key=lambda c: abs(math.log(c["ratio"])))
            within = sum(1 for c in sub if 1 / TARGET_WORST <= c["ratio"] <= TARGET_WORST)
            reg = [v[0] for k, v in regret.items() if k[0] == coll and k[1] == ranks]
            lines.append("| %s | %d | %d | %s | %d/%d | %.2f (%s, %s) | %.3f | %.2f |"
                         % (coll, ranks, len(sub), pct(error_geomean(sub)), within, len(sub), worst["ratio"],
                            worst["algorithm"], worst["size"], geomean(reg), max(reg) if reg else float("nan")))
    g = error_geomean(cells)
    worst_ratio = max(max(c["ratio"], 1 / c["ratio"]) for c in cells)
    within = sum(1 for c in cells if 1 / TARGET_WORST <= c["ratio"] <= TARGET_WORST)
    reg = [v[0] for v in regret.values()]
    lines.append("| **all** | | %d | **%s** | %d/%d | %.2fx off | **%.3f** | **%.2f** |"
                 % (len(cells), pct(g), within, len(cells), worst_ratio, geomean(reg), max(reg)))
    # Small cells are a wake-up or two, which the host's placement of the cores moves from
    # one pass to the next; large ones are bytes moved: the two errors apart.
    parts = []
    small = "%d KiB" % (SMALL_BYTES >> 10)
    for label, sub in (("below " + small, [c for c in cells if c["bytes"] < SMALL_BYTES]),
                       (small + " and up", [c for c in cells if c["bytes"] >= SMALL_BYTES])):
        if sub:
            parts.append("%s %s (%d cells)" % (label, pct(error_geomean(sub)), len(sub)))
    lines.append("")
    lines.append("Geomean error by the cells' size: %s." % "; ".join(parts))
    lines.append("")
    lines.append("Worst cells:")
    lines.append("")
    lines.append("| collective | ranks | size | algorithm | measured (us) | predicted (us) | predicted / measured |")
    lines.append("|---|---:|---:|---|---:|---:|---:|")
    for c in sorted(cells, key=lambda c: -abs(math.log(c["ratio"])))[:12]:
        lines.append("| %s | %d | %s | %s | %.2f | %.2f | %.2f |" % (c["coll"], c["ranks"], c["size"], c["algorithm"],
                                                                    c["measured_us"], c["predicted_us"], c["ratio"]))
    lines.append("")
    lines.append("Worst regrets of auto:")
    lines.append("")
    lines.append("| collective | ranks | size | auto picks | fastest measured | regret |")
    lines.append("|---|---:|---:|---|---|---:|")
    for key, (r, pick, best) in sorted(regret.items(), key=lambda kv: -kv[1][0])[:8]:
        lines.append("| %s | %d | %s | %s | %s | %.2f |" % (key[0], key[1], key[2], pick, best, r))
    lines.append("")
    lines.append("Targets:")
    lines.append("")
    lines.append("- geomean error at most 15%%: %s (%s)" % (met(g <= TARGET_GEOMEAN), pct(g)))
    if paired:
        lines.append("  - each pass priced with its own calibration: %s (%s; %d of %d cells within 2x)"
                     % (met(paired[1] <= TARGET_GEOMEAN), pct(paired[1]), paired[2], paired[3]))
    lines.append("- no cell off by more than 2x: %s (%d of %d cells within, the worst %.2fx off)"
                 % (met(within == len(cells)), within, len(cells), worst_ratio))
    lines.append("- auto's regret at most 1.10 in every cell: %s (worst %.2f; %d of %d cells above)"
                 % (met(max(reg) <= TARGET_REGRET_CELL), max(reg), sum(1 for r in reg if r > TARGET_REGRET_CELL),
                    len(reg)))
    lines.append("- auto's regret at most 1.03 as a geomean: %s (%.3f)" % (met(geomean(reg) <= TARGET_REGRET_GEOMEAN),
                                                                        geomean(reg)))
    if paired:
        lines.extend(paired[0])
    if floor:
        lines.append("")
        lines.append("For scale, the noise in the measurements: picking in each cell what one pass measured fastest, "
                     "judged on the other passes, scores a regret geomean of %.3f, the worst %.2f, and %d of %d "
                     "(cell, pass) pairs above %.2f (%.0f%%)."
                     % (geomean(floor), max(floor), sum(1 for r in floor if r > TARGET_REGRET_CELL), len(floor),
                        TARGET_REGRET_CELL, 100.0 * sum(1 for r in floor if r > TARGET_REGRET_CELL) / len(floor)))
    return "\n".join(lines)


def colour(log_ratio, clamp=math.log(4)):
    """Blue: predicted too fast; white: right; red: predicted too slow (4x at full colour)."""
    t = max(-1.0, min(1.0, log_ratio / clamp))
    if t >= 0:
        return "rgb(255,%d,%d)" % (int(255 * (1 - t)), int(255 * (1 - t)))
    return "rgb(%d,%d,255)" % (int(255 * (1 + t)), int(255 * (1 + t)))


def svg(cells, title):
    sizes = sorted({c["size"] for c in cells}, key=size_bytes)
    ranks = sorted({c["ranks"] for c in cells})
    rows = []
    for coll in COLLS:
        for algo in sorted({c["algorithm"] for c in cells if c["coll"] == coll}):
            rows.append((coll, algo))
    cols = [(r, s) for r in ranks for s in sizes]
    at = {(c["coll"], c["algorithm"], c["ranks"], c["size"]): c for c in cells}
    cw, ch, left, top = 26, 18, 210, 70
    width = left + cw * len(cols) + 20
    height = top + ch * len(rows) + 70
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
           % (width, height), '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="18" font-size="14">%s</text>' % title]
    for i, (r, s) in enumerate(cols):
        x = left + i * cw
        if s == sizes[0]:
            out.append('<text x="%d" y="38" font-size="12">%d ranks</text>' % (x, r))
            out.append('<line x1="%d" y1="42" x2="%d" y2="%d" stroke="black"/>' % (x, x, top + ch * len(rows)))
        out.append('<text x="%d" y="%d" font-size="9" transform="rotate(-60 %d %d)">%s</text>'
                   % (x + 12, top - 4, x + 12, top - 4, s))
    for j, (coll, algo) in enumerate(rows):
        y = top + j * ch
        out.append('<text x="%d" y="%d" text-anchor="end">%s %s</text>' % (left - 6, y + 13, coll, algo))
        for i, (r, s) in enumerate(cols):
            c = at.get((coll, algo, r, s))
            x = left + i * cw
            if c is None:
                out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#ddd"/>' % (x, y, cw, ch))
                continue
            out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%.3g/%.3g us</title></rect>'
                       % (x, y, cw - 1, ch - 1, colour(math.log(c["ratio"])), c["predicted_us"], c["measured_us"]))
            if abs(math.log(c["ratio"])) > math.log(TARGET_WORST):
                out.append('<text x="%d" y="%d" font-size="8" text-anchor="middle">%.1f</text>'
                           % (x + cw / 2, y + 12, c["ratio"]))
    y = top + ch * len(rows) + 20
    for k in range(-4, 5):
        x = left + (k + 4) * 40
        out.append('<rect x="%d" y="%d" width="40" height="12" fill="%s"/>' % (x, y, colour(k * math.log(4) / 4)))
        out.append('<text x="%d" y="%d" font-size="9">%.2g</text>' % (x + 8, y + 24, 4 ** (k / 4)))
    out.append('<text x="%d" y="%d" font-size="10">predicted / measured (blue: predicted too fast, red: too slow; '
               'numbers: off by more than 2x)</text>' % (left + 370, y + 10))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="the cost model's accuracy grid, from bench/model_grid.sh's output")
    ap.add_argument("out", nargs="?", default=os.path.join("build", "bench-out", "grid"))
    ap.add_argument("--svg", help="write the heatmap here")
    ap.add_argument("--csv", help="write the cells here")
    ap.add_argument("--pool", nargs="+", default=[], metavar="DIR",
                    help="more grids measured the same way: judge auto's picks against every pass of all of them")
    a = ap.parse_args()
    cells, picks = read_cells(a.out)
    if not cells:
        print("model_grid.py: no cells in %s (run bench/model_grid.sh first)" % a.out, file=sys.stderr)
        return 2
    for c in cells:
        c["ratio"] = c["predicted_us"] / c["measured_us"]
    model = "?"
    for path in glob.glob(os.path.join(a.out, "raw", "predict-*.jsonl"))[:1]:
        model = read_jsonl(path)[0].get("model", "?")
    meta = read_meta(a.out)
    regret = regrets(cells, picks)
    ratios = paired_ratios(a.out)
    print(report(cells, regret, meta, model, pass_regrets(a.out), paired_report(ratios) if ratios else None))
    probed_picks, probed_pooled = {}, {}
    probed = paired_ratios(a.out, "probed-predict-", probed_picks, probed_pooled)
    if probed:
        lines, g, within, n = paired_report(
            probed, "Each (collective, ranks) group of each pass priced with the cores' placement measured just "
            "before it (`calibrate --placement`)", "placement")
        print("\n".join(lines))
        medians = {key: statistics.median(v) for key, v in probed_picks.items()}
        reg = list(medians.values())
        if reg:
            print("\nWith those prices auto's regret (a cell: the median over its passes) has a geomean of %.3f, "
                  "the worst %.2f, %d of %d cells above %.2f; the geomean error is %s the target."
                  % (geomean(reg), max(reg), sum(1 for r in reg if r > TARGET_REGRET_CELL), len(reg),
                     TARGET_REGRET_CELL, "within" if g <= TARGET_GEOMEAN else "above"))
            above = sorted(((r, key) for key, r in medians.items() if r > TARGET_REGRET_CELL), reverse=True)
            for r, (coll, ranks, size) in above:
                print("- %s on %d ranks, %s: %.2f" % (coll, ranks, size, r))
    per_pass, per_cell = twin_spread(a.out)
    if per_pass:
        above = sum(1 for r in per_pass if r > TARGET_REGRET_CELL)
        print("\nAlgorithms that run the very same steps (predict's same_steps_as), measured in the same pass: "
              "%d of %d (pair, pass) %.0f%% more than %.2fx apart, the worst %.2fx; the medians over the passes "
              "%d of %d pairs (%.0f%%), the worst %.2fx. A pick between two of them scores that much regret by "
              "chance alone."
              % (above, len(per_pass), 100.0 * above / len(per_pass), TARGET_REGRET_CELL, max(per_pass),
                 sum(1 for r in per_cell if r > TARGET_REGRET_CELL), len(per_cell),
                 100.0 * sum(1 for r in per_cell if r > TARGET_REGRET_CELL) / len(per_cell), max(per_cell)))
        pooled = [statistics.median(v) for v in probed_pooled.values()]
        if pooled:
            print("With each such set measured as one schedule (the median of its members), auto's regret by "
                  "placement has a geomean of %.3f, the worst %.2f, %d of %d cells above %.2f."
                  % (geomean(pooled), max(pooled), sum(1 for r in pooled if r > TARGET_REGRET_CELL), len(pooled),
                     TARGET_REGRET_CELL))
    if a.pool:
        over_grids = regrets_over_grids([a.out] + a.pool)
        if over_grids:
            reg = [r for r, _, _ in over_grids.values()]
            runs = [n for _, n, _ in over_grids.values()]
            above = sorted(((r, key, best) for key, (r, _, best) in over_grids.items() if r > TARGET_REGRET_CELL),
                           reverse=True)
            count = "%d" % min(runs) if min(runs) == max(runs) else "%d-%d" % (min(runs), max(runs))
            print("\nJudged on every pass of %d grids (%s passes a cell; each pass's times over their geometric "
                  "mean, the median over the passes), auto's picks by placement have a regret geomean of %.3f, the "
                  "worst %.2f, %d of %d cells above %.2f%s"
                  % (1 + len(a.pool), count, geomean(reg), max(reg), len(above), len(reg), TARGET_REGRET_CELL,
                     ":" if above else "."))
            for r, (coll, ranks, size), best in above:
                print("- %s on %d ranks, %s: %.2f (the fastest: %s)" % (coll, ranks, size, r, best))
        pooled_ratios = errors_over_grids([a.out] + a.pool)
        if pooled_ratios:
            lines, g, within, n = paired_report(
                pooled_ratios, "Priced by placement, over every pass of the %d grids" % (1 + len(a.pool)), "pooled")
            print("\n".join(lines))
            wrong = consistent_errors(pooled_ratios)
            print("\n%d of %d cells err the same way in at least %d%% of their passes by more than %.2fx (the "
                  "model's own errors, not the host's)%s"
                  % (len(wrong), n, round(100 * CONSISTENT_SHARE), CONSISTENT_OFF, ":" if wrong else "."))
            if wrong:
                print("\n| collective | ranks | size | algorithm | predicted / measured (median) | passes on that side |")
                print("|---|---:|---:|---|---:|---:|")
                for m, (coll, ranks, size, algo), same, runs in wrong[:20]:
                    print("| %s | %d | %s | %s | %.2f | %d of %d |" % (coll, ranks, size, algo, m, round(same * runs),
                                                                      runs))
                if len(wrong) > 20:
                    print("\n(and %d more)" % (len(wrong) - 20))
    if a.svg:
        with open(a.svg, "w", encoding="utf-8") as f:
            f.write(svg(cells, "collscope cost model against measured time, %s (%s)"
                        % (meta.get("date", "?"), pct(error_geomean(cells)) + " geomean error")))
    if a.csv:
        with open(a.csv, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["coll", "ranks", "size", "bytes", "algorithm", "measured_us", "predicted_us", "auto_pick", "runs",
                        "spread"])
            for c in sorted(cells, key=lambda c: (COLLS.index(c["coll"]) if c["coll"] in COLLS else 99, c["ranks"],
                                                  size_bytes(c["size"]), c["algorithm"])):
                w.writerow([c["coll"], c["ranks"], c["size"], c["bytes"], c["algorithm"], "%.3f" % c["measured_us"],
                            "%.3f" % c["predicted_us"],
                            int(picks.get((c["coll"], c["ranks"], c["size"])) == c["algorithm"]), c["runs"],
                            "%.2f" % c["spread"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
