"""The table `readbench bench` prints (readbench.bench): one row per figure of `bench.json`, with
its goal where the issue set one and its ratio to the floor measured in the same run
(readbench.bench_floor)."""

from __future__ import annotations

from typing import Any

__all__ = ["format_table"]


def format_table(result: dict[str, Any]) -> str:
    """The printed summary table of `result` (`run_bench`'s dict; the benchmarks absent from it
    give no rows): a markdown table `| benchmark | measure | value | goal |`."""
    rows = ["| benchmark | measure | value | goal |", "|---|---|---|---|"]
    for per in result.get("per_call", []):
        for key, value in per["ms_per_call"].items():
            goal = f"<= {per['goal_ms_per_call']} ms" if key == "total" else ""
            rows.append(f"| per call ({per['dcp']}, {per['session_tokens']:,} tokens) | {key} ms | {value:.3f} | {goal} |")
        if "floor_ms_per_call" in per:
            rows.append(f"| per call ({per['dcp']}) / floor (hashing each message once: {per['floor_ms_per_call']:.4f} ms "
                        f"per call) | total x floor | {per['total_x_floor']:.0f}x | |")
    docker = result.get("docker", {})
    if "skipped" in docker:
        rows.append(f"| docker | skipped | {docker['skipped']} | |")
    else:
        for key, value in docker.items():
            if key.startswith("seconds"):
                rows.append(f"| docker sample | {key} | {value:.2f} | <= {docker['goal_seconds_per_sample']} s |")
            elif key.startswith("local_seconds"):
                rows.append(f"| local sample (the floor) | {key} | {value:.2f} | |")
            elif key.endswith("_docker_over_local"):
                rows.append(f"| docker sample / local sample | {key} | {value:.1f}x | |")
    dx = result.get("docker_exec")
    if dx and "skipped" in dx:
        rows.append(f"| docker exec | skipped | {dx['skipped']} | |")
    elif dx:
        for path, label in (("compose_exec", "`docker compose exec` (inspect)"), ("engine_api", "Engine API (the floor)")):
            m = dx[path]
            engine = "n/a" if m["engine_cpu_ms"] is None else f"{m['engine_cpu_ms']:.0f}"
            rows.append(f"| docker exec via {label} | CPU ms per call (client + engine) | "
                        f"{m['client_cpu_ms']:.0f} + {engine} | |")
        rows.append(f"| docker exec: compose / Engine API | CPU x floor | {dx['compose_over_api_cpu']:.1f}x | |")
    rp = result.get("replay")
    if rp:
        rows.append(f"| recorded sessions ({rp['calls']} calls) | import s per 1,000 calls | {rp['import_seconds_per_1000_calls']:.2f} | |")
        rows.append(f"| recorded sessions ({rp['calls']} calls) | replay s per 1,000 calls (3 modes) | "
                    f"{rp['replay_seconds_per_1000_calls']:.2f} | |")
        if "gate_sweep_seconds_per_1000_calls" in rp:
            rows.append(f"| recorded sessions ({rp['calls']} calls, {rp['gate_sweep_candidates']} gate candidates) | "
                        f"gate-sweep candidates s per 1,000 calls | {rp['gate_sweep_seconds_per_1000_calls']:.2f} | |")
        if "floor_seconds_per_1000_calls" in rp:
            rows.append(f"| recorded sessions / floor (parsing + hashing each line once: "
                        f"{rp['floor_seconds_per_1000_calls']:.3f} CPU s per 1,000 calls) | import x floor / replay x floor | "
                        f"{rp['import_x_floor']:.1f}x / {rp['replay_x_floor']:.1f}x | |")
        rows.append(f"| import of a {rp['big_session_mb']:.0f} MB session | peak RSS MB | "
                    f"{rp['big_session_import_peak_rss_mb']:.0f} | bounded (linear in the file) |")
    sc = result.get("replay_scale")
    if sc:
        for label, what in (("dcp", "replay --dcp all x 5 cache models"),
                            ("dcp_audit_sweep", "replay --dcp all x 5 cache models --audit --gate-sweep")):
            m = sc[label]
            sessions = (f"{sc['sessions']} x 450 calls" if sc.get("source", "synthetic") == "synthetic" else
                        f"{sc['sessions']} of {sc['source']}, {sc.get('calls_per_session', float('nan')):.0f} calls each on average")
            rows.append(f"| {what} ({sessions}, {sc['jobs']} jobs) | wall s per session / CPU s per "
                        f"session / start-up CPU s / peak RSS MB | {m['seconds_per_session']:.2f} / "
                        f"{m['cpu_seconds_per_session']:.2f} / {m['startup_cpu_seconds']:.1f} / {m['peak_rss_mb']:.0f} | "
                        f"<= {sc['goal_memory_mb']:.0f} MB |")
            rows.append(f"| the same, projected to {sc['goal_sessions']:,} sessions | wall s / CPU-bound s over "
                        f"{sc.get('goal_cores', sc['jobs'])} cores | {m['extrapolated_seconds_for_goal']:.0f} / "
                        f"{m['extrapolated_cpu_bound_seconds_for_goal']:.0f} | <= {sc['goal_seconds']:.0f} s |")
            if "cpu_per_session_x_floor" in m:
                rows.append(f"| the same / floor (parsing + hashing each session file once: "
                            f"{sc['floor_cpu_seconds_per_session']:.3f} CPU s per session) | CPU per session x floor | "
                            f"{m['cpu_per_session_x_floor']:.0f}x | |")
        for fmt, st in sc.get("stages_cpu_seconds", {}).items():
            parts = ", ".join(f"{k} {v:.2f}" for k, v in st.items() if k != "total")
            rows.append(f"| one {fmt} session, --audit --gate-sweep, in-process | CPU s per stage | {parts} "
                        f"(total {st['total']:.2f}) | |")
    big = result.get("big_read")
    if big:
        stock = big["stock"]
        mb = big["file_bytes"] / 1e6
        for variant, m in big.items():
            if isinstance(m, dict):
                goal = "" if variant == "stock" else f"<= {big['goal_ratio_to_stock']}x stock"
                rows.append(f"| read of a {mb:.0f} MB .py ({variant}) | seconds / peak RSS MB | "
                            f"{m['seconds']:.1f} / {m['peak_rss_mb']:.0f} "
                            f"({m['seconds'] / stock['seconds']:.2f}x / {m['peak_rss_mb'] / stock['peak_rss_mb']:.2f}x) | {goal} |")
                if "cpu_x_floor" in m:
                    rows.append(f"| read of a {mb:.0f} MB .py ({variant}) / floor (reading + hashing the file once: "
                                f"{big['floor_cpu_seconds']:.2f} CPU s) | CPU s x floor | {m['cpu_x_floor']:.0f}x | |")
    for agent, m in (result.get("agents") or {}).items():
        start = "" if m["startup_seconds"] is None else f"{m['startup_seconds']:.2f} / "
        first = "" if m.get("first_request_seconds") is None else f"{m['first_request_seconds']:.2f} / "
        rows.append(f"| one sample under {agent} (stock × off, local, sim) | {'start-up s / ' if start else ''}"
                    f"{'first request s / ' if first else ''}sample wall s / model calls | "
                    f"{start}{first}{m['sample_wall_seconds']:.1f} / {m['model_calls']:.0f} | |")
    fk = result.get("forked")
    if fk:
        what = f"{fk['matrix']} {' '.join(fk['task_args'])}, sim, local"
        for design in ("independent", "forked"):
            d = fk[design]
            rows.append(f"| {what}: {design} | model calls / CPU s / wall s | {d['model_calls']:,} / "
                        f"{d['cpu_seconds']:.0f} / {d['wall_seconds']:.0f} | |")
        if "cpu_seconds_per_sample" in fk["independent"]:
            for design in ("independent", "forked"):
                d = fk[design]
                rows.append(f"| {what}: {design}, per sample ({fk['samples']} samples) | CPU s per sample / x floor "
                            f"(reading + parsing + hashing each sample's transcript once: "
                            f"{fk['floor_cpu_seconds_per_sample']:.4f} CPU s) | {d['cpu_seconds_per_sample']:.2f} / "
                            f"{d['cpu_per_sample_x_floor']:.0f}x | <= {fk['goal_cpu_seconds_per_sample']:g} CPU s |")
        if "cpu_seconds_per_nightly_sample" in fk["independent"]:
            for design in ("independent", "forked"):
                d = fk[design]
                rows.append(f"| {what}: {design}, per nightly sample ({fk['nightly_samples']} samples; start-up and "
                            f"report {d['fixed_cpu_seconds']:.1f} CPU s once per run) | samples' CPU s per sample / "
                            f"projected per nightly sample | {d['run_cpu_seconds_per_sample']:.2f} / "
                            f"{d['cpu_seconds_per_nightly_sample']:.2f} | <= {fk['goal_cpu_seconds_per_sample']:g} CPU s |")
        if "run_children_cpu_seconds_per_sample" in fk["independent"]:
            for design in ("independent", "forked"):
                d = fk[design]
                rows.append(f"| {what}: {design}, the samples' child processes (test runs, rg, cp) | CPU s per sample / "
                            f"share of the samples' CPU | {d['run_children_cpu_seconds_per_sample']:.2f} / "
                            f"{d['run_children_cpu_seconds_per_sample'] / d['run_cpu_seconds_per_sample']:.0%} | |")
        rows.append(f"| {what}: forked vs independent | calls saved / CPU saved / per-arm tables equal | "
                    f"{fk['saved']['model_calls']:.0%} / {fk['saved']['cpu_seconds']:.0%} / "
                    f"{'yes' if fk['tables']['equal'] else 'NO: ' + ', '.join(fk['tables']['columns_differing'])} | "
                    "tables equal |")
    return "\n".join(rows)
