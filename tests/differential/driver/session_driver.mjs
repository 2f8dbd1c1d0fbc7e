// Produces a real pi 0.84.1 session JSONL with the SDK (createAgentSession) and pi-ai's faux
// provider, for readbench's session import/export differential test (issue 9; pi-tools.md §6).
//
// Input (stdin): one JSON object {"cwd": dir, "sessionDir": dir, "prompt": str,
//   "turns": [[block, ...], ...]} where each turn is one scripted assistant message made of
//   {"text": str} | {"thinking": str} | {"toolCall": name, "id": str, "arguments": {...}}; a turn with a
//   tool call gets stopReason "toolUse". Output (stdout): {"sessionFile": path}.
import worker_threads from "node:worker_threads";
import { join } from "node:path";

// The SDK entry imports undici 8, which calls worker_threads.markAsUncloneable (Node >= 22.10).
// It is only used for structured-clone marking of fetch objects; the faux provider does no HTTP.
worker_threads.markAsUncloneable ??= () => {};

const pi = await import(new URL("./node_modules/@earendil-works/pi-coding-agent/dist/index.js", import.meta.url).href);
const ai = await import("@earendil-works/pi-ai");

let input = "";
for await (const chunk of process.stdin) input += chunk;
const scenario = JSON.parse(input);

const faux = ai.fauxProvider();
const agentDir = process.env.PI_CODING_AGENT_DIR;
const modelRuntime = await pi.ModelRuntime.create({
    authPath: join(agentDir, "auth.json"),
    modelsPath: join(agentDir, "models.json"),
});
modelRuntime.registerNativeProvider(faux.provider);
faux.setResponses(
    scenario.turns.map((turn) => {
        const blocks = turn.map((block) => {
            if (block.toolCall) return ai.fauxToolCall(block.toolCall, block.arguments, { id: block.id });
            if (block.thinking !== undefined) return ai.fauxThinking(block.thinking);
            return ai.fauxText(block.text);
        });
        const usesTool = turn.some((block) => block.toolCall);
        return ai.fauxAssistantMessage(blocks, { stopReason: usesTool ? "toolUse" : "stop" });
    }),
);
const { session } = await pi.createAgentSession({
    cwd: scenario.cwd,
    agentDir,
    model: faux.getModel(),
    modelRuntime,
    sessionManager: pi.SessionManager.create(scenario.cwd, scenario.sessionDir),
});
await session.prompt(scenario.prompt);
process.stdout.write(`${JSON.stringify({ sessionFile: session.sessionFile })}\n`);
session.dispose();
process.exit(0);
