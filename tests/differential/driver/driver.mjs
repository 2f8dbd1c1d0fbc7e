// Differential driver: runs pi 0.84.1's SHIPPED tool code (read, edit, write, grep, bash)
// for readbench's differential tests (GitHub issue 9; docs/specs/pi-tools.md §0).
//
// Protocol: one JSON request per stdin line, one JSON response per stdout line, in order.
// Requests are handled one at a time (edits/writes mutate files, so order matters).
//
// Request:  {"id": any, "tool": "read"|"edit"|"write"|"grep"|"bash", "cwd": "/abs/dir",
//            "args": {...tool arguments as the model would send them...},
//            "returnFile": "/abs/path"            (optional: include that file's bytes afterwards)
//            "bash": {"chunks": ["<base64>", ...], "exitCode": int|null, "outcome": "exit"|"timeout"|"abort"}
//                                                (optional, bash only: feed these output chunks through
//                                                 a fake exec instead of spawning a real shell)}
// Response: {"id": same, "text": "<first text block>", "isError": bool, "contentTypes": ["text", ...],
//            "fullOutputPath": str|null (bash), "fileAfter": "<base64>"|null}
//
// The call pipeline mirrors pi-agent-core 0.84.1 dist/agent-loop.js prepareToolCall/executePreparedToolCall:
// tool.prepareArguments -> pi-ai validateToolArguments -> tool.execute; any thrown error becomes
// {text: error.message, isError: true} (createErrorToolResult).
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { validateToolArguments } from "@earendil-works/pi-ai";

// The package root entry (dist/index.js) pulls in undici 8, which needs Node >= 22; the tool
// modules themselves do not. So load dist/core/tools/index.js by file path (pi-tools.md §0:
// "[084] through its dist/ modules").
const {
    createBashToolDefinition,
    createEditToolDefinition,
    createGrepToolDefinition,
    createReadToolDefinition,
    createWriteToolDefinition,
} = await import(new URL("./node_modules/@earendil-works/pi-coding-agent/dist/core/tools/index.js", import.meta.url).href);

function fakeBashOperations(spec) {
    return {
        exec: async (_command, _cwd, { onData, timeout }) => {
            for (const chunk of spec.chunks ?? []) {
                onData(Buffer.from(chunk, "base64"));
            }
            if (spec.outcome === "timeout") {
                // Same message as createLocalBashOperations' exec on timeout.
                throw new Error(`timeout:${timeout}`);
            }
            if (spec.outcome === "abort") {
                throw new Error("aborted");
            }
            return { exitCode: spec.exitCode === undefined ? 0 : spec.exitCode };
        },
    };
}

function makeTool(request) {
    const cwd = request.cwd;
    switch (request.tool) {
        case "read":
            return createReadToolDefinition(cwd);
        case "edit":
            return createEditToolDefinition(cwd);
        case "write":
            return createWriteToolDefinition(cwd);
        case "grep":
            return createGrepToolDefinition(cwd);
        case "bash":
            return request.bash
                ? createBashToolDefinition(cwd, { operations: fakeBashOperations(request.bash) })
                : createBashToolDefinition(cwd);
        default:
            throw new Error(`driver: unknown tool ${JSON.stringify(request.tool)}`);
    }
}

async function runTool(request) {
    const tool = makeTool(request);
    const toolCall = { type: "toolCall", id: "call_1", name: tool.name, arguments: request.args };
    let result;
    let isError = false;
    try {
        let prepared = toolCall;
        if (tool.prepareArguments) {
            const preparedArguments = tool.prepareArguments(toolCall.arguments);
            if (preparedArguments !== toolCall.arguments) {
                prepared = { ...toolCall, arguments: preparedArguments };
            }
        }
        const args = validateToolArguments(tool, prepared);
        result = await tool.execute(toolCall.id, args, undefined, undefined, undefined);
    } catch (error) {
        result = { content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }], details: {} };
        isError = true;
    }
    const content = result.content ?? [];
    const firstText = content.find((block) => block.type === "text");
    return {
        text: firstText ? firstText.text : null,
        isError,
        contentTypes: content.map((block) => block.type),
        fullOutputPath: result.details?.fullOutputPath ?? null,
    };
}

async function handle(line) {
    let request;
    try {
        request = JSON.parse(line);
    } catch (error) {
        return { id: null, driverError: `bad JSON request: ${error.message}` };
    }
    try {
        const response = { id: request.id, ...(await runTool(request)), fileAfter: null };
        if (request.returnFile) {
            try {
                response.fileAfter = readFileSync(request.returnFile).toString("base64");
            } catch {
                response.fileAfter = null;
            }
        }
        return response;
    } catch (error) {
        return { id: request.id, driverError: String(error?.stack ?? error) };
    }
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
const queue = [];
let busy = false;
async function pump() {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
        const line = queue.shift();
        const response = await handle(line);
        process.stdout.write(`${JSON.stringify(response)}\n`);
    }
    busy = false;
}
rl.on("line", (line) => {
    if (!line.trim()) return;
    queue.push(line);
    void pump();
});
