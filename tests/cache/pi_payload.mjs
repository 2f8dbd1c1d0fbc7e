// Prints the Anthropic request body pi 0.84.1 builds for a context read from stdin (JSON
// {context, cacheRetention?}), captured through the `onPayload` hook before any network I/O.
// Usage: node pi_payload.mjs <tests/differential/driver>   (used by test_cache_pi_differential.py)
import path from "node:path";
const driver = process.argv[2];
const mod = await import(path.join(driver, "node_modules/@earendil-works/pi-ai/dist/api/anthropic-messages.js"));
const input = JSON.parse(await new Promise(r => { let s = ""; process.stdin.on("data", d => s += d); process.stdin.on("end", () => r(s)); }));
const model = { id: "claude-sonnet-5", name: "x", provider: "anthropic", api: "anthropic-messages", baseUrl: "http://127.0.0.1:9", reasoning: false, input: ["text"], cost: {input: 0, output: 0, cacheRead: 0, cacheWrite: 0}, contextWindow: 200000, maxTokens: 1000 };
let payload = null;
const s = mod.stream(model, input.context, { apiKey: "sk-test", cacheRetention: input.cacheRetention, onPayload: (p) => { payload = p; throw new Error("captured"); } });
for await (const ev of s) { if (ev.type === "error" || ev.type === "done") break; }
process.stdout.write(JSON.stringify(payload));
