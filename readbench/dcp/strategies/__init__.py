"""One module per pruning strategy (docs/specs/dcp.md §2, §7.2; anchors.md §1).

pi-dcp strategies (`deduplicate`, `purge_errors`, `supersede_writes`, `output_replace`) apply
their rule directly to a `PiDcpRun`; the sister's strategies (`sister_dedupe`,
`sister_error_purge`, `sister_file_ops`) only propose decisions that `readbench.dcp._sister`
filters, gates and applies; `obs_mask` is SWE-agent's observation masking.
"""
