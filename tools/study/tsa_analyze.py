#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Analysis of the seed 000 study (tools/study/tsa.sh, docs/studies/tsa.md).

  tsa_analyze.py unpack VM_STDOUT DESTDIR
      extract the campaigns streamed out of the guest (@@BEGIN NAME RC SECS,
      base64 of a gzipped tar, @@END NAME); prints how many came back whole.

  tsa_analyze.py best [--concsched BIN] [--subjects "a b"] [--strategies ..] OUTDIR
      print "SUBJECT STRATEGY" for each subject: the rnd-* configuration with
      the most SP requirements after N runs (mean over its repetitions).

  tsa_analyze.py analyze [--concsched BIN] [--runs N] [--subjects "a b"]
                         [--strategies "s1 s2"] [--window W] [--threshold T]
                         OUTDIR
      read OUTDIR/SUBJECT/STRATEGY_rREP with `concsched report DIR --json`
      and write OUTDIR/tables.md and OUTDIR/results.json (also printed):
      Table 2 (covered SP requirements at N runs: AVG/MIN/MAX over the five
      probabilities of each random technique, mean of the repetitions for
      tsa and tsa-h), Table 3 (saturation point: run, seconds, coverage;
      window W runs, slope < T, as ALGORITHMS.md section 9), Table 4
      (estimation precision), Table 5 (tsa-h vs tsa, share of rule 3) and
      the Wilcoxon signed-rank tests of tsa against the best random
      configuration of each subject.

No third-party modules: the Wilcoxon test is implemented here (exact null
distribution by counting sign assignments when n <= 30, normal
approximation with tie correction above that).
"""
import argparse
import base64
import gzip
import io
import json
import math
import os
import re
import subprocess
import sys
import tarfile

FAMILIES = ("rnd-y", "rnd-s10", "rnd-s100")


# ---------------------------------------------------------------- unpack ---

def unpack(stdout_path, dest):
    os.makedirs(dest, exist_ok=True)
    got = 0
    name = None
    buf = []
    with open(stdout_path, "r", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("@@BEGIN "):
                parts = line.split()
                name, buf = parts[1], []
                continue
            if line.startswith("@@END "):
                if name and line.split()[1] == name:
                    try:
                        data = gzip.decompress(base64.b64decode("".join(buf)))
                        with tarfile.open(fileobj=io.BytesIO(data)) as tf:
                            for m in tf.getmembers():
                                if m.name.startswith("/") or ".." in m.name.split("/"):
                                    raise ValueError("bad member " + m.name)
                            tf.extractall(dest)
                        got += 1
                    except (ValueError, OSError, EOFError, tarfile.TarError) as e:
                        print("unpack: %s: %s" % (name, e), file=sys.stderr)
                name = None
                continue
            if name:
                buf.append(line.strip())
    print(got)


# ------------------------------------------------------------ statistics ---

def slope(points):
    """Least-squares slope of [(x, y)]."""
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    if sxx == 0:
        return 0.0
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx


def saturation_point(series, window, threshold):
    """First run r (1-based) at which the last `window` runs (r-window+1..r)
    have a least-squares slope below threshold: (run, seconds, covered) or
    None. Same rule as the report's saturated_at_run with WINDOW runs."""
    for i in range(window - 1, len(series)):
        pts = [(s[0], s[2]) for s in series[i - window + 1:i + 1]]
        if slope(pts) < threshold:
            return series[i][0], series[i][1], series[i][2]
    return None


def ranks_with_ties(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        r = (i + j) / 2.0 + 1
        for k in range(i, j + 1):
            ranks[order[k]] = r
        i = j + 1
    return ranks


def wilcoxon(x, y):
    """Wilcoxon signed-rank test of paired samples x, y (zero differences
    dropped, Wilcoxon's method). Returns dict with n, W+ (sum of ranks of
    x > y), W-, p_two (two-sided), p_greater (one-sided, x > y), method."""
    d = [a - b for a, b in zip(x, y) if a != b]
    n = len(d)
    res = {"n": n, "n_pairs": len(x), "w_plus": 0.0, "w_minus": 0.0,
           "p_two": 1.0, "p_greater": 1.0, "method": "none"}
    if n == 0:
        return res
    r = ranks_with_ties([abs(v) for v in d])
    wp = sum(rk for rk, v in zip(r, d) if v > 0)
    wm = sum(rk for rk, v in zip(r, d) if v < 0)
    res["w_plus"], res["w_minus"] = wp, wm
    if n <= 30:
        # Exact: every sign assignment of the (tied) ranks is equally likely.
        # Ranks are multiples of 0.5: count sums of doubled ranks.
        ir = [int(round(2 * v)) for v in r]
        total = sum(ir)
        counts = [0] * (total + 1)
        counts[0] = 1
        for v in ir:
            for s in range(total, v - 1, -1):
                counts[s] += counts[s - v]
        allc = 2 ** n
        wp2 = int(round(2 * wp))
        ge = sum(counts[s] for s in range(wp2, total + 1)) / allc   # P(W+ >= wp)
        le = sum(counts[s] for s in range(0, wp2 + 1)) / allc       # P(W+ <= wp)
        res["p_greater"] = ge
        res["p_two"] = min(1.0, 2 * min(ge, le))
        res["method"] = "exact"
    else:
        mean = n * (n + 1) / 4.0
        ties = {}
        for v in r:
            ties[v] = ties.get(v, 0) + 1
        var = n * (n + 1) * (2 * n + 1) / 24.0 - sum(t ** 3 - t for t in ties.values()) / 48.0
        sd = math.sqrt(var) if var > 0 else 1.0
        # continuity correction
        z_g = (wp - mean - 0.5) / sd
        z_t = (abs(wp - mean) - 0.5) / sd
        phi = lambda z: 0.5 * math.erfc(-z / math.sqrt(2))
        res["p_greater"] = 1 - phi(z_g)
        res["p_two"] = min(1.0, 2 * (1 - phi(z_t)))
        res["method"] = "normal"
        res["z"] = (wp - mean) / sd
    return res


# -------------------------------------------------------------- analysis ---

def mean(v):
    return sum(v) / len(v) if v else None


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, int):
        return str(v)
    return ("%." + str(nd) + "f") % v


def family(strategy):
    m = re.match(r"^(rnd-(?:y|s10|s100)):([0-9.]+)$", strategy)
    return (m.group(1), m.group(2)) if m else (strategy, None)


def load_campaign(cs, d):
    try:
        p = subprocess.run([cs, "report", d, "--json"], capture_output=True, text=True,
                           timeout=120)
        rep = json.loads(p.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        print("analyze: %s: %s" % (d, e), file=sys.stderr)
        return None
    sp = [m for m in rep.get("metrics", []) if m["name"] == "sp"]
    if not sp:
        return None
    sp = sp[0]
    runs = rep["runs"]
    return {
        "dir": d,
        "runs": runs["total"],
        "outcomes": {k: v for k, v in runs["outcomes"].items() if v},
        "target_s": runs["duration_s"],
        "covered": sp["covered"],
        "estimated": sp.get("estimated"),
        "covered_estimated": sp.get("covered_estimated"),
        "false_positives": sp.get("false_positives"),
        "false_negatives": sp.get("false_negatives"),
        "report_saturated_at_run": sp["saturation"].get("saturated_at_run"),
        "series": sp["series"],
        "releases": rep.get("releases"),
    }


def covered_at(c, n):
    """Cumulative coverage after run n (the last point if the campaign is shorter)."""
    best = 0
    for s in c["series"]:
        if s[0] <= n:
            best = s[2]
    return best


def best_random(rnd, n_runs):
    """The rnd-* strategy with the most covered requirements after n_runs,
    mean over the repetitions every configuration has (stage 1: 1..R, so
    stage 2's extra repetitions of the chosen one do not change the choice);
    ties go to the name (deterministic)."""
    r = min(len(v) for v in rnd.values())

    def key(k):
        cov = [covered_at(c, n_runs) for c in rnd[k] if c["rep"] <= r]
        return (mean(cov), k)
    return max(rnd, key=key)


def load_all(a):
    out = a.outdir
    cs = a.concsched
    subjects = a.subjects.split() if a.subjects else sorted(
        d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)) and d != "log")
    strategies = a.strategies.split() if a.strategies else None
    data = {}
    for subj in subjects:
        sd = os.path.join(out, subj)
        if not os.path.isdir(sd):
            continue
        data[subj] = {}
        for name in sorted(os.listdir(sd)):
            m = re.match(r"^(.*)_r(\d+)$", name)
            if not m or not os.path.isdir(os.path.join(sd, name)):
                continue
            strat = m.group(1).replace("_", ":")
            if strategies and strat not in strategies:
                continue
            c = load_campaign(cs, os.path.join(sd, name))
            if c:
                c["rep"] = int(m.group(2))
                data[subj].setdefault(strat, []).append(c)
    return data, subjects


def analyze(a):
    out = a.outdir
    data, subjects = load_all(a)
    n_runs = a.runs or max((c["runs"] for s in data.values() for l in s.values() for c in l),
                           default=0)
    window = a.window or min(50, max(5, n_runs // 2))
    thr = a.threshold
    res = {"runs": n_runs, "window": window, "threshold": thr, "subjects": {}}
    lines = []
    P = lines.append
    P("# seed 000 study: results")
    P("")
    P("N = %d runs per campaign; saturation rule: window %d runs, slope < %g covered "
      "requirements per run (the report's own rule uses window 50)." % (n_runs, window, thr))
    P("")

    # ---- per strategy summaries
    for subj, strats in data.items():
        rs = res["subjects"][subj] = {"strategies": {}}
        for strat, camps in sorted(strats.items()):
            camps.sort(key=lambda c: c["rep"])
            cov = [covered_at(c, n_runs) for c in camps]
            sats = [saturation_point(c["series"], window, thr) for c in camps]
            sat_ok = [s for s in sats if s]
            secs = [c["series"][-1][1] / max(1, c["series"][-1][0] - 1)
                    if len(c["series"]) > 1 else None for c in camps]
            rel = {}
            for c in camps:
                for k, v in (c["releases"] or {}).items():
                    rel[k] = rel.get(k, 0) + v
            rs["strategies"][strat] = {
                "reps": [c["rep"] for c in camps],
                "runs": [c["runs"] for c in camps],
                "covered": cov,
                "covered_mean": mean(cov),
                "covered_min": min(cov),
                "covered_max": max(cov),
                "saturation": [list(s) if s else None for s in sats],
                "saturated": len(sat_ok),
                "sat_run_mean": mean([s[0] for s in sat_ok]),
                "sat_time_mean": mean([s[1] for s in sat_ok]),
                "sat_cov_mean": mean([s[2] for s in sat_ok]),
                "report_saturated_at_run": [c["report_saturated_at_run"] for c in camps],
                "s_per_run": mean([s for s in secs if s is not None]),
                "estimated": [c["estimated"] for c in camps],
                "covered_estimated": [c["covered_estimated"] for c in camps],
                "false_positives": [c["false_positives"] for c in camps],
                "false_negatives": [c["false_negatives"] for c in camps],
                "releases": rel or None,
                "outcomes": [c["outcomes"] for c in camps],
                "mean_curve": [mean([covered_at(c, k) for c in camps])
                               for k in range(1, n_runs + 1)],
            }

    # ---- Table 2
    P("## Table 2: covered SP requirements after %d runs" % n_runs)
    P("")
    P("Random techniques: the mean over the repetitions for each probability, then AVG, MIN "
      "and MAX over the probabilities (as seed 000). tsa, tsa-h: mean over the repetitions "
      "[min-max].")
    P("")
    P("| subject | RND-y AVG | MIN | MAX | RND-s10 AVG | MIN | MAX | RND-s100 AVG | MIN | MAX "
      "| TSA-h | TSA |")
    P("|---|" + "---|" * 11)
    for subj, rs in res["subjects"].items():
        st = rs["strategies"]
        row = [subj]
        rs["table2"] = {}
        for fam in FAMILIES:
            vals = [v["covered_mean"] for k, v in st.items() if family(k)[0] == fam]
            rs["table2"][fam] = {"avg": mean(vals), "min": min(vals) if vals else None,
                                 "max": max(vals) if vals else None, "configs": len(vals)}
            row += [fmt(mean(vals)), fmt(min(vals) if vals else None),
                    fmt(max(vals) if vals else None)]
        for t in ("tsa-h", "tsa"):
            v = st.get(t)
            row.append("%s [%s-%s]" % (fmt(v["covered_mean"]), v["covered_min"], v["covered_max"])
                       if v else "-")
            rs["table2"][t] = v["covered_mean"] if v else None
        P("| " + " | ".join(row) + " |")
    P("")

    # ---- best random configuration per subject and the Wilcoxon tests
    P("## Wilcoxon signed-rank tests: tsa vs the best random configuration")
    P("")
    P("Best random configuration = the rnd-* strategy and probability with the highest mean "
      "coverage after %d runs. *Per repetition*: repetition i of tsa paired with repetition "
      "i of that configuration (same --seed), the study's independent samples. *Per run*: the "
      "mean cumulative curves paired at each run 1..%d (as Figure 4 compares curves; the points "
      "of a cumulative curve are not independent, so this p-value only describes how "
      "consistently one curve lies above the other)." % (n_runs, n_runs))
    P("")
    P("| subject | best random | its mean | tsa mean | per repetition: n, W+, W-, p (two-sided), "
      "p (tsa greater) | per run: n, W+, W-, p (two-sided), p (tsa greater) |")
    P("|---|---|---|---|---|---|")
    for subj, rs in res["subjects"].items():
        st = rs["strategies"]
        rnd = {k: v for k, v in st.items() if k.startswith("rnd-")}
        if not rnd or "tsa" not in st:
            continue
        best = best_random({k: data[subj][k] for k in rnd}, n_runs)
        t, b = st["tsa"], rnd[best]
        tr = dict(zip(t["reps"], t["covered"]))
        br = dict(zip(b["reps"], b["covered"]))
        common = sorted(set(tr) & set(br))
        w1 = wilcoxon([tr[r] for r in common], [br[r] for r in common])
        w2 = wilcoxon(t["mean_curve"], b["mean_curve"])
        rs["best_random"] = best
        rs["wilcoxon_reps"] = w1
        rs["wilcoxon_curve"] = w2
        f = lambda w: "%d, %g, %g, %.4g, %.4g (%s)" % (w["n"], w["w_plus"], w["w_minus"],
                                                        w["p_two"], w["p_greater"], w["method"])
        P("| %s | %s | %s | %s | %s | %s |" % (subj, best, fmt(b["covered_mean"]),
                                              fmt(t["covered_mean"]), f(w1), f(w2)))
    P("")

    # ---- Table 3
    P("## Table 3: saturation point (coverage / seconds / run)")
    P("")
    P("Mean over the repetitions that saturated within %d runs (k/R of them); for each random "
      "technique the probability with the best mean coverage at saturation (seed 000: best "
      "result regardless of parameters). Seconds are campaign time in the VM from the start "
      "of the first run." % n_runs)
    P("")
    P("| subject | RND-y | RND-s10 | RND-s100 | TSA-h | TSA |")
    P("|---|---|---|---|---|---|")

    def satcell(k, v):
        if not v or not v["saturated"]:
            return "- (0/%d)" % (len(v["reps"]) if v else 0) + ("" if not k else " " + k)
        return "%s / %ss / run %s (%d/%d)%s" % (fmt(v["sat_cov_mean"]), fmt(v["sat_time_mean"]),
                                                fmt(v["sat_run_mean"]), v["saturated"],
                                                len(v["reps"]), (" " + k) if k else "")

    for subj, rs in res["subjects"].items():
        st = rs["strategies"]
        row = [subj]
        rs["table3"] = {}
        for fam in FAMILIES:
            cand = {k: v for k, v in st.items() if family(k)[0] == fam and v["saturated"]}
            if cand:
                k = max(cand, key=lambda k: (cand[k]["sat_cov_mean"], -cand[k]["sat_time_mean"]))
                row.append(satcell("P=" + k.split(":")[1], cand[k]))
                rs["table3"][fam] = k
            else:
                row.append("-")
                rs["table3"][fam] = None
        for t in ("tsa-h", "tsa"):
            row.append(satcell("", st.get(t)))
        P("| " + " | ".join(row) + " |")
    P("")

    # ---- Table 3b: how soon tsa reaches what the best random configuration has after N runs
    P("## Table 3b: runs and seconds for tsa to reach the best random configuration's coverage")
    P("")
    P("Target = the best random configuration's mean coverage after %d runs. For tsa and tsa-h: "
      "the first run at which their mean cumulative curve reaches it, and the mean campaign "
      "seconds at that run; for the random configuration, its own seconds at run %d." % (
          n_runs, n_runs))
    P("")
    P("| subject | best random | target | its seconds at run %d | TSA reaches it at run | "
      "TSA seconds | TSA-h run | TSA-h seconds |" % n_runs)
    P("|---|---|---|---|---|---|---|---|")

    def reach(camps, curve, target):
        for k, v in enumerate(curve, 1):
            if v is not None and v >= target:
                ts = [c["series"][k - 1][1] for c in camps if len(c["series"]) >= k]
                return k, mean(ts)
        return None, None

    for subj, rs in res["subjects"].items():
        st = rs["strategies"]
        best = rs.get("best_random")
        if not best:
            continue
        b = st[best]
        target = b["covered_mean"]
        bsec = mean([c["series"][-1][1] for c in data[subj][best]])
        row = [subj, best, fmt(target), fmt(bsec)]
        rs["reach"] = {"target": target, "best_seconds": bsec}
        for t in ("tsa", "tsa-h"):
            if t in st:
                k, sec = reach(data[subj][t], st[t]["mean_curve"], target)
                rs["reach"][t] = [k, sec]
                row += [fmt(k), fmt(sec)]
            else:
                row += ["-", "-"]
        P("| " + " | ".join(row) + " |")
    P("")

    # ---- Figure 4 as a table: mean cumulative coverage by run
    marks = sorted(set([1, 2, 3, 5] + list(range(0, n_runs + 1, max(1, n_runs // 4)))[1:] +
                       [n_runs]))
    marks = [m for m in marks if 1 <= m <= n_runs]
    P("## Figure 4 as a table: mean covered SP requirements by run")
    P("")
    P("tsa, tsa-h, and per random technique the mean over its five probabilities "
      "(and the best configuration).")
    P("")
    P("| subject | strategy | " + " | ".join("run %d" % m for m in marks) + " |")
    P("|---|---|" + "---|" * len(marks))
    for subj, rs in res["subjects"].items():
        st = rs["strategies"]
        rows = []
        for t in ("tsa", "tsa-h"):
            if t in st:
                rows.append((t, st[t]["mean_curve"]))
        for fam in FAMILIES:
            cs_ = [v["mean_curve"] for k, v in st.items() if family(k)[0] == fam]
            if cs_:
                rows.append((fam + " (mean of P)", [mean([c[i] for c in cs_])
                                                    for i in range(n_runs)]))
        if rs.get("best_random"):
            rows.append(("best: " + rs["best_random"], st[rs["best_random"]]["mean_curve"]))
        for name, curve in rows:
            P("| %s | %s | " % (subj, name) + " | ".join(fmt(curve[m - 1]) for m in marks) + " |")
    P("")

    # ---- Table 4 / 5
    P("## Table 4: estimation precision (tsa; per repetition, mean [min-max])")
    P("")
    P("| subject | estimated | covered | covered of estimated | false positives | "
      "false negatives |")
    P("|---|---|---|---|---|---|")

    def mm(v):
        v = [x for x in v if x is not None]
        return "%s [%s-%s]" % (fmt(mean(v)), min(v), max(v)) if v else "-"

    for subj, rs in res["subjects"].items():
        t = rs["strategies"].get("tsa")
        if not t:
            continue
        P("| %s | %s | %s | %s | %s | %s |" % (subj, mm(t["estimated"]), mm(t["covered"]),
                                              mm(t["covered_estimated"]),
                                              mm(t["false_positives"]),
                                              mm(t["false_negatives"])))
    P("")
    P("## Table 5: tsa-h vs tsa and the release rules")
    P("")
    P("| subject | TSA-h saturation | TSA saturation | TSA releases rule 1/2/3 | rule 3 share "
      "| TSA-h releases rule 1/2/random |")
    P("|---|---|---|---|---|---|")
    for subj, rs in res["subjects"].items():
        st = rs["strategies"]
        t, h = st.get("tsa"), st.get("tsa-h")
        if not t:
            continue
        r = t["releases"] or {}
        tot = sum(r.values())
        rh = (h or {}).get("releases") or {}
        P("| %s | %s | %s | %s/%s/%s | %s | %s |" % (
            subj, satcell("", h), satcell("", t), r.get("rule1", 0), r.get("rule2", 0),
            r.get("rule3", 0), ("%.1f%%" % (100.0 * r.get("rule3", 0) / tot)) if tot else "-",
            "%s/%s/%s" % (rh.get("rule1", 0), rh.get("rule2", 0), rh.get("random", 0))
            if rh else "-"))
    P("")

    # ---- cost and outcomes
    P("## Cost: mean VM seconds per run, and outcomes other than pass")
    P("")
    allst = []
    for rs in res["subjects"].values():
        for k in rs["strategies"]:
            if k not in allst:
                allst.append(k)
    P("| strategy | " + " | ".join(res["subjects"]) + " |")
    P("|---|" + "---|" * len(res["subjects"]))
    for k in allst:
        row = [k]
        for rs in res["subjects"].values():
            v = rs["strategies"].get(k)
            if not v:
                row.append("-")
                continue
            bad = {}
            for o in v["outcomes"]:
                for kk, vv in o.items():
                    if kk != "pass":
                        bad[kk] = bad.get(kk, 0) + vv
            row.append(fmt(v["s_per_run"], 2) + "".join(" %s %d" % i for i in bad.items()))
        P("| " + " | ".join(row) + " |")
    P("")

    text = "\n".join(lines)
    with open(os.path.join(out, "tables.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("unpack")
    u.add_argument("stdout")
    u.add_argument("dest")
    z = sub.add_parser("analyze")
    z.add_argument("outdir")
    z.add_argument("--concsched", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "concsched"))
    z.add_argument("--runs", type=int, default=0)
    z.add_argument("--subjects", default="")
    z.add_argument("--strategies", default="")
    z.add_argument("--window", type=int, default=0,
                   help="saturation window in runs (default min(50, N/2))")
    z.add_argument("--threshold", type=float, default=0.1)
    b = sub.add_parser("best")
    b.add_argument("outdir")
    b.add_argument("--concsched", default=z.get_default("concsched"))
    b.add_argument("--runs", type=int, default=0)
    b.add_argument("--subjects", default="")
    b.add_argument("--strategies", default="")
    a = ap.parse_args()
    if a.cmd == "unpack":
        unpack(a.stdout, a.dest)
    elif a.cmd == "best":
        for subj, st in load_all(a)[0].items():
            rnd = {k: v for k, v in st.items() if k.startswith("rnd-")}
            if rnd and "tsa" in st:
                print(subj, best_random(rnd, a.runs or max(
                    c["runs"] for l in st.values() for c in l)))
    else:
        analyze(a)


if __name__ == "__main__":
    main()
