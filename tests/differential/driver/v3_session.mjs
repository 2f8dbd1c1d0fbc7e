// Writes one version-3 pi session with pi 0.84.1's own SessionManager (ids, parentId branches,
// compaction by firstKeptEntryId) and reads each request back with pi's own buildSessionContext +
// convertToLlm, for readbench's importer (GitHub issue 12).
//
// stdin: {"cwd": "...", "sessionDir": "...", "steps": [...]}. Steps, in order:
//   {"message": {...}}                   appendMessage (user, assistant, toolResult, bashExecution)
//   {"thinking": "high"}                 appendThinkingLevelChange
//   {"model": ["anthropic", "id"]}       appendModelChange
//   {"compact": {"summary": "...", "keepFrom": k, "tokensBefore": n}}
//        appendCompaction, keeping from the entry written by step k
//   {"branch": k}                        branch from the entry written by step k (later entries
//                                        hang below it; the earlier continuation is abandoned)
// stdout: {"file": path, "contexts": [{"entry": id, "messages": [...]}, ...]}: for each assistant
// message, its entry id and the messages pi would have sent for it.
import worker_threads from "node:worker_threads";

// The SDK entry imports undici 8, which calls worker_threads.markAsUncloneable (Node >= 22.10).
worker_threads.markAsUncloneable ??= () => {};

const pi = await import(new URL("./node_modules/@earendil-works/pi-coding-agent/dist/index.js", import.meta.url).href);

let input = "";
for await (const chunk of process.stdin) input += chunk;
const request = JSON.parse(input);
const sm = pi.SessionManager.create(request.cwd, request.sessionDir);
const ids = [];
const contexts = [];
for (const step of request.steps) {
  let id = null;
  if (step.message) {
    if (step.message.role === "assistant") {
      contexts.push({ entry: null, messages: pi.convertToLlm(sm.buildSessionContext().messages) });
    }
    id = sm.appendMessage(step.message);
    if (step.message.role === "assistant") contexts[contexts.length - 1].entry = id;
  } else if (step.thinking) {
    id = sm.appendThinkingLevelChange(step.thinking);
  } else if (step.model) {
    id = sm.appendModelChange(step.model[0], step.model[1]);
  } else if (step.compact) {
    id = sm.appendCompaction(step.compact.summary, ids[step.compact.keepFrom], step.compact.tokensBefore);
  } else if (step.branch !== undefined) {
    sm.branch(ids[step.branch]);
  } else {
    throw new Error(`unknown step ${JSON.stringify(step)}`);
  }
  ids.push(id);
}
process.stdout.write(JSON.stringify({ file: sm.getSessionFile(), contexts }));
process.exit(0);
