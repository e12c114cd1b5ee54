// Drives `codex` through OpenAI's TypeScript SDK (@openai/codex-sdk), as a
// program built on the SDK would. tests/sdk_e2e_test.cc runs it against the
// scripted server and checks what it prints and what reached the server.
//
// Usage: node sdk_driver.mjs SDK_DIR CODEX_BINARY WORKDIR IMAGE
// Prints one JSON object per step on stdout: {"step": ..., ...}. The SDK
// inherits this process's environment (CODEX_HOME, the API key).
import path from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, codexBinary, workdir, image] = process.argv.slice(2);
const sdk = await import(
  pathToFileURL(path.join(sdkDir, "node_modules/@openai/codex-sdk/dist/index.js")).href
);
const codex = new sdk.Codex({ codexPathOverride: codexBinary });
const threadOptions = {
  workingDirectory: workdir,
  skipGitRepoCheck: true,
  sandboxMode: "workspace-write",
  approvalPolicy: "never",
};
const print = (step, value) => console.log(JSON.stringify({ step, ...value }));
const errorText = (e) => String(e && e.message ? e.message : e);

// 1. A run: the final answer and the items.
const thread = codex.startThread(threadOptions);
const first = await thread.run("say hi");
print("run", { thread_id: thread.id, final: first.finalResponse, items: first.items, usage: first.usage });

// 2. A tool call on the same thread (the SDK resumes it: `exec ... resume ID`).
const second = await thread.run("run the tool");
print("tool", { thread_id: thread.id, final: second.finalResponse, items: second.items });

// 3. Resume the thread by id from a fresh Codex object.
const resumed = codex.resumeThread(thread.id, threadOptions);
const third = await resumed.run("and again");
print("resume", { thread_id: resumed.id, final: third.finalResponse });

// 4. Streamed events of a new thread.
const streamedThread = codex.startThread(threadOptions);
const { events } = await streamedThread.runStreamed("stream please");
const types = [];
for await (const event of events) types.push(event.type);
print("stream", { thread_id: streamedThread.id, types });

// 5. Output schema.
const schema = {
  type: "object",
  properties: { answer: { type: "string" } },
  required: ["answer"],
  additionalProperties: false,
};
const structured = await codex.startThread(threadOptions).run("structured", { outputSchema: schema });
print("schema", { final: structured.finalResponse });

// 6. Images: text plus a local image.
const withImage = await codex.startThread(threadOptions).run([
  { type: "text", text: "describe this" },
  { type: "local_image", path: image },
]);
print("image", { final: withImage.finalResponse });

// 7. An error turn: run() must reject, and the stream must say turn.failed.
try {
  await codex.startThread(threadOptions).run("fail please");
  print("error", { threw: false });
} catch (e) {
  print("error", { threw: true, message: errorText(e) });
}
