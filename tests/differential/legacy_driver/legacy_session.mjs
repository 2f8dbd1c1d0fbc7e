// Writes one legacy pi session (no `version` in the header) with pi 0.30.2's own SessionManager
// and reads it back with pi's own buildSessionContext + messageTransformer (GitHub issue 12).
//
// stdin: {"cwd": "...", "sessionDir": "...", "steps": [...]}, one JSON object. Steps, in order:
//   {"message": {...}}                 SessionManager.saveMessage (user, assistant, toolResult, bashExecution)
//   {"thinking": "high"}               saveThinkingLevelChange
//   {"model": ["anthropic", "id"]}     saveModelChange
//   {"compact": {"summary": "...", "keepRecentTokens": N}}
//        saveCompaction of the entry pi's compaction writes, its cut from pi's own findCutPoint
// stdout: {"file": path, "contexts": [...]}: for each assistant message, in order, the messages
// pi would have sent for it (buildSessionContext over the entries before it, through
// messageTransformer), as pi message objects.
import { readFileSync } from "node:fs";
import {
  buildSessionContext,
  estimateTokens,
  findCutPoint,
  messageTransformer,
  SessionManager,
} from "@mariozechner/pi-coding-agent";

const request = JSON.parse(readFileSync(0, "utf8"));
const sm = SessionManager.create(request.cwd, request.sessionDir);
const contexts = [];
for (const step of request.steps) {
  if (step.message) {
    if (step.message.role === "assistant") {
      contexts.push(messageTransformer(buildSessionContext(sm.getEntries()).messages));
    }
    sm.saveMessage(step.message);
  } else if (step.thinking) {
    sm.saveThinkingLevelChange(step.thinking);
  } else if (step.model) {
    sm.saveModelChange(step.model[0], step.model[1]);
  } else if (step.compact) {
    const entries = sm.getEntries();
    let start = 0;
    for (let i = entries.length - 1; i >= 0; i--) {
      if (entries[i].type === "compaction") {
        start = entries[i].firstKeptEntryIndex;
        break;
      }
    }
    const cut = findCutPoint(entries, start, entries.length, step.compact.keepRecentTokens);
    let tokensBefore = 0;
    for (const m of buildSessionContext(entries).messages) tokensBefore += estimateTokens(m);
    sm.saveCompaction({
      type: "compaction",
      timestamp: new Date().toISOString(),
      summary: step.compact.summary,
      firstKeptEntryIndex: cut.firstKeptEntryIndex,
      tokensBefore,
    });
  } else {
    throw new Error(`unknown step ${JSON.stringify(step)}`);
  }
}
process.stdout.write(JSON.stringify({ file: sm.getSessionFile(), contexts }));
